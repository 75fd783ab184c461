// The transport's all-gather: one MPI_Iallgather over the transport's communicator, with buffers
// of its own. A collective MPI request cannot be cancelled, so when the host's timeout runs out the
// gather stays pending inside the transport; had it used the host's buffers, MPI would later write
// into memory the host has already reused.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace tessera::transport_mpi {

class Allgather {
 public:
  // Copies `bytes` bytes of `send` and posts the gather among `process_count` processes.
  Allgather(MPI_Comm comm, const void* send, size_t bytes, int process_count);
  Allgather(const Allgather&) = delete;
  Allgather& operator=(const Allgather&) = delete;

  // Never blocks: true once the gather has completed; fails on an MPI error.
  bool test();
  // After test() returned true: every process's bytes, in process order, into `recv`.
  void copy_out(void* recv) const;

 private:
  std::vector<std::byte> send_;
  std::vector<std::byte> recv_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace tessera::transport_mpi

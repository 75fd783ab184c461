#include "allgather.hpp"

#include <cstring>
#include <string>

#include "mpi_error.hpp"

namespace tessera::transport_mpi {

Allgather::Allgather(MPI_Comm comm, const void* send, size_t bytes, int process_count)
    : send_(bytes), recv_(bytes * static_cast<size_t>(process_count)) {
  if (bytes > 0) std::memcpy(send_.data(), send, bytes);
  check_mpi(MPI_Iallgather(send_.data(), static_cast<int>(bytes), MPI_BYTE, recv_.data(),
                           static_cast<int>(bytes), MPI_BYTE, comm, &request_),
            "allgather: MPI_Iallgather of " + std::to_string(bytes) + " bytes per process failed");
}

bool Allgather::test() {
  if (request_ == MPI_REQUEST_NULL) return true;
  int flag = 0;
  const int code = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
  if (code != MPI_SUCCESS) {
    request_ = MPI_REQUEST_NULL;  // completed in error, freed by MPI_Test
    check_mpi(code, "allgather of " + std::to_string(send_.size()) + " bytes per process failed");
  }
  return flag != 0;
}

void Allgather::copy_out(void* recv) const {
  if (!recv_.empty()) std::memcpy(recv, recv_.data(), recv_.size());
}

}  // namespace tessera::transport_mpi

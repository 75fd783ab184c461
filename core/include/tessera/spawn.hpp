// Per-rank programs in one process (PyTorch: the processes a torchrun launch starts).
//
//   ts::spawn(4, [](int rank) {
//     ts::Tensor t = ts::full({2}, rank);        // this rank's own plain tensor
//     ts::dist::all_reduce(t);                   // waits for ranks 0..3, then t = 0+1+2+3
//     if (rank == 0) ts::dist::send(t, 1, /*tag=*/7);
//     if (rank == 1) ts::dist::recv(t, 0, 7);
//   });
//
// spawn runs `program` once per rank 0..n-1 of a new simulated world of n ranks, each rank on a
// coroutine of its own, all on the calling thread. Inside, a rank sees what a torchrun process
// sees: ts::get_rank() is its rank, ts::get_world_size() is n, the tensors it makes are plain
// tensors of its own, its random tensors come from a generator of its own (rank r starts where
// rank r's generator of a LocalMode opened at the same point would: the default generator's state;
// ts::manual_seed reseeds only the calling rank's), and ts::dist collectives and point-to-point
// calls wait until the peers arrive (tessera/dist.hpp). Grad mode, LocalMode scopes, the
// LossParallel and ImplicitReplication switches and comm labels are the rank's own too; every rank
// starts as a fresh thread would (grad enabled, no LocalMode, both switches off).
//
// DTensors work in rank programs as in a torchrun process: ts::init_device_mesh builds a mesh over
// the spawned world, and a rank's DTensor on it holds that rank's shard alone (its to_local() is a
// local tensor of that one shard, which ts::dist takes as the rank's own tensor). DTensor ops and
// redistributions, and modules made parallel with parallelize_module and fully_shard, meet the
// other ranks in the same collectives, and every rank gets the bits a LocalMode run of the same
// program gives it. A DTensor laid out on a mesh that does not hold the running rank, or from a
// local tensor holding other ranks' shards, is an Error naming the rank.
//
// Scheduling is cooperative and in a fixed order: ranks run in rank order until each finishes or
// waits (in a collective, a receive, Work::wait or yield_rank), then the waiting ranks whose wait
// is over run again in rank order. Every run of a program is therefore the same, bit for bit.
//
// Errors. When every rank that has not finished waits, that is a deadlock: spawn throws an Error
// listing each waiting rank and what it waits in ("rank 0: recv(src=1, tag=0); rank 1: ..."),
// naming finished ranks waited on. When a rank's program throws, the other ranks' waits are ended
// (the wait throws an exception that is not a std::exception, so that a catch of std::exception
// does not stop the unwinding; destructors run), and spawn throws a RankError naming the rank that
// failed first. Messages left unreceived and receives left unmatched when every program ended are
// an Error too.
//
// Across processes. In a world that spans processes (ts::init_world() with a transport such as
// MPI: P processes of k ranks), every process calls spawn(P * k, program) (another n is an
// Error) and runs the programs of the ranks it hosts, in rank order as above; each result is bit
// for bit the one of the same spawn in one process. Messages and collectives among a process's own
// ranks stay within it. A send to a rank of another process is eager: it goes over the transport
// at once, its tag and kind in the message's envelope, and lands in the receiver's inbox, where
// receives match it as any other. A collective whose members live in several processes runs
// through the transport, and only once every process holds it ready: whenever every hosted rank
// waits (or has finished), the processes exchange what each holds ready, sent and received (an
// all-gather), and run the collectives that all their members reached, every process in one
// order, so that collectives of different groups never wait on each other in a cycle. From the
// same exchange every process ends the spawn alike: a rank that threw anywhere (RankError naming
// it, on every process), members that made different calls (an Error naming both), a deadlock
// (the waits of every rank of every process), messages left over. A process whose ranks wait
// for other processes waits in the transport (which sleeps between polls), at most the world's
// timeout; a peer that died, hangs, or computes for longer than that ends the spawn with an Error
// naming what each hosted rank waits in.
//
// spawn cannot be called inside a rank's program (an Error says so). Each call has its own world
// and scheduler: threads may run spawns of their own at the same time (across processes, only one
// thread of a process may spawn at a time, and not while it uses the process world elsewhere).
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>

#include "tessera/errors.hpp"

namespace tessera {

struct SpawnOptions {
  // Each rank's coroutine stack. A guard page below each stack turns an overflow into a fault
  // instead of corrupting memory; a program with deep recursion or large arrays on its stack
  // needs more.
  size_t stack_bytes = 64 * 1024;
};

// Thrown by spawn when a rank's program threw: the rank, and the exception it threw.
class RankError : public Error {
 public:
  RankError(int rank, std::exception_ptr original, const std::string& what)
      : Error(what), rank_(rank), original_(std::move(original)) {}
  int rank() const { return rank_; }
  const std::exception_ptr& original() const { return original_; }

 private:
  int rank_;
  std::exception_ptr original_;
};

// Runs program(rank) for every rank 0..n-1 (n >= 1) and returns when all have finished.
void spawn(int n, const std::function<void(int rank)>& program, const SpawnOptions& options = {});

// Inside a rank's program: lets the other ranks that can run do so before this one goes on.
// Outside one, does nothing.
void yield_rank();

}  // namespace tessera

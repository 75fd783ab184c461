// What goes wrong inside ts::spawn: deadlocks, a throwing rank, mismatched collectives, early
// finishers, nested spawns and bad arguments. Every case ends (no hang) with a clear error.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

// Counts its destructions: every rank's frame must be unwound.
struct Unwound {
  explicit Unwound(std::atomic<int>& count) : count_(count) {}
  ~Unwound() { ++count_; }
  std::atomic<int>& count_;
};

}  // namespace

TEST_CASE("spawn: two ranks that both receive first deadlock, and the error names each wait") {
  CHECK_THROWS_WITH_AS(
      ts::spawn(2,
                [](int rank) {
                  ts::Tensor t = ts::zeros({1});
                  ts::dist::recv(t, 1 - rank);
                  ts::dist::send(t, 1 - rank);
                }),
      "ts::spawn: deadlock: every rank that has not finished is waiting: rank 0: recv(src=1, tag=0); "
      "rank 1: recv(src=0, tag=0)",
      ts::Error);
}

TEST_CASE("spawn: waiting on a finished rank is a deadlock naming it") {
  std::atomic<int> unwound{0};
  CHECK_THROWS_WITH_AS(
      ts::spawn(3,
                [&](int rank) {
                  const Unwound guard(unwound);
                  if (rank == 2) return;
                  ts::Tensor t = ts::zeros({1});
                  if (rank == 0) ts::dist::recv(t, 2, 1);
                  if (rank == 1) ts::dist::all_reduce(t);
                }),
      "ts::spawn: deadlock: every rank that has not finished is waiting: rank 0: recv(src=2, tag=1), "
      "and rank 2 has finished; rank 1: all_reduce(float32 [1], op=SUM) over ranks [0, 1, 2], waiting "
      "for rank(s) 0, and rank(s) 2 finished without calling it",
      ts::Error);
  CHECK(unwound == 3);
}

TEST_CASE("spawn: an exception on one rank unwinds the others and names the rank") {
  std::atomic<int> unwound{0};
  std::atomic<int> caught_as_std{0};
  bool rethrown = false;
  try {
    ts::spawn(4, [&](int rank) {
      const Unwound guard(unwound);
      ts::Tensor t = ts::zeros({1});
      if (rank == 2) {
        ts::yield_rank();  // rank 3 starts and waits in the all_reduce too
        throw std::runtime_error("boom on two");
      }
      try {
        ts::dist::all_reduce(t);  // ranks 0, 1 and 3 wait here when rank 2 throws
      } catch (const std::exception&) {
        ++caught_as_std;  // the unwinding is not a std::exception: never counted
      }
    });
  } catch (const ts::RankError& e) {
    rethrown = true;
    CHECK(e.rank() == 2);
    CHECK(std::string(e.what()) == "ts::spawn: rank 2 failed: boom on two");
    CHECK_THROWS_WITH_AS(std::rethrow_exception(e.original()), "boom on two", std::runtime_error);
  }
  CHECK(rethrown);
  CHECK(unwound == 4);
  CHECK(caught_as_std == 0);
}

TEST_CASE("spawn: members making different collective calls all get the error naming both calls") {
  std::vector<std::string> seen(3);
  ts::spawn(3, [&](int rank) {
    ts::Tensor t = ts::zeros({4});
    try {
      if (rank < 2)
        ts::dist::all_reduce(t);
      else
        ts::dist::broadcast(t, 0);
    } catch (const ts::Error& e) {
      seen[static_cast<size_t>(rank)] = e.what();
    }
  });
  for (const std::string& s : seen)
    CHECK(s ==
          "collective mismatch over ranks [0, 1, 2]: rank 2 called broadcast(float32 [4], root=0) where rank "
          "0 called "
          "all_reduce(float32 [4], op=SUM); every member of a group must make the same call (collective, "
          "dtype, shape, "
          "reduce op, root) at the same point");
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   ts::Tensor t = ts::zeros({rank + 1});
                                   ts::dist::all_reduce(t);
                                 }),
                       doctest::Contains("rank 1 called all_reduce(float32 [2], op=SUM) where rank 0 called "
                                         "all_reduce(float32 [1], op=SUM)"),
                       ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   ts::Tensor t = ts::zeros({2}, rank == 0 ? ts::kFloat32 : ts::kFloat64);
                                   ts::dist::all_reduce(t, rank == 0 ? ts::ReduceOp::SUM : ts::ReduceOp::MAX);
                                 }),
                       doctest::Contains("rank 1 called all_reduce(float64 [2], op=MAX)"), ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   ts::Tensor t = ts::zeros({2});
                                   ts::dist::broadcast(t, rank);
                                 }),
                       doctest::Contains("rank 1 called broadcast(float32 [2], root=1) where rank 0 called "
                                         "broadcast(float32 [2], root=0)"),
                       ts::RankError);
}

TEST_CASE("spawn: an error inside the collective reaches every member") {
  std::vector<std::string> seen(2);
  ts::spawn(2, [&](int rank) {
    ts::Tensor t = ts::ones({2}, ts::kInt64);
    try {
      ts::dist::all_reduce(t, ts::ReduceOp::AVG);  // AVG needs a floating tensor
    } catch (const ts::Error& e) {
      seen[static_cast<size_t>(rank)] = e.what();
    }
  });
  CHECK(seen[0].find("reduce op AVG needs a floating tensor") != std::string::npos);
  CHECK(seen[1] == seen[0]);
}

TEST_CASE("spawn: ranks finishing early are fine when nobody waits on them") {
  std::vector<float> got(4, -1.f);
  ts::spawn(4, [&](int rank) {
    if (rank == 0 || rank == 3) return;
    ts::Tensor t = ts::full({1}, static_cast<float>(rank));
    ts::dist::all_reduce(t, ts::ReduceOp::SUM, ts::ProcessGroup({1, 2}));
    if (rank == 1) ts::dist::send(t, 2, 3);
    if (rank == 2) ts::dist::recv(t, 1, 3);
    got[static_cast<size_t>(rank)] = t.item<float>();
  });
  CHECK(got == std::vector<float>{-1.f, 3.f, 3.f, -1.f});
}

TEST_CASE("spawn: inside a rank's program spawn is an error, bad arguments are errors") {
  CHECK_THROWS_WITH_AS(
      ts::spawn(2,
                [](int rank) {
                  if (rank == 1) ts::spawn(2, [](int) {});
                }),
      doctest::Contains("ts::spawn cannot be called inside a rank's program (rank 1 of a spawned world "
                        "of 2)"),
      ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(0, [](int) {}), "ts::spawn: 0 rank(s); a spawned world needs at least 1",
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::spawn(2, std::function<void(int)>()), doctest::Contains("the program is empty"),
                       ts::Error);
  ts::SpawnOptions tiny;
  tiny.stack_bytes = 100;
  CHECK_THROWS_WITH_AS(ts::spawn(
                           2, [](int) {}, tiny),
                       doctest::Contains("a stack of 100 bytes per rank is too small"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int) {
                                   ts::Tensor t = ts::ones({2}).requires_grad_();
                                   ts::dist::all_reduce(t);
                                 }),
                       doctest::Contains("all_reduce on rank 0: the tensor requires grad"), ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(3,
                                 [](int rank) {
                                   ts::Tensor t = ts::ones({2});
                                   if (rank == 2)
                                     ts::dist::all_reduce(t, ts::ReduceOp::SUM, ts::ProcessGroup({0, 1}));
                                 }),
                       doctest::Contains("all_reduce on rank 2: rank 2 is not a member of the group"),
                       ts::RankError);
  CHECK_THROWS_WITH_AS(ts::dist::barrier(), doctest::Contains("needs a rank's program"), ts::Error);
}

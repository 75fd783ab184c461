// Schedules run in place (comm/in_place.hpp): the analysis on hand-made programs, its soundness on
// every loaded algorithm (an in-place replay gives the bits of the two-buffer replay, the oracle),
// and dist::all_reduce computing in the shards' own memory without writing into another rank's
// input or into bytes another tensor shares.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "comm/collective_path.hpp"
#include "comm/executor.hpp"
#include "comm/in_place.hpp"
#include "comm/run_collective.hpp"
#include "same_bits.hpp"
#include "tensor/tensor_impl.hpp"

namespace ts = tessera;
namespace comm = tessera::comm;

namespace {

constexpr int32_t kIn = TESSERA_BUFFER_INPUT;
constexpr int32_t kOut = TESSERA_BUFFER_OUTPUT;

comm::Step copy(tessera_chunk to, tessera_chunk from) { return {comm::StepKind::Copy, to, -1, from}; }
comm::Step send(tessera_chunk from, int peer) { return {comm::StepKind::Send, from, peer, {}}; }
comm::Step recv_reduce(tessera_chunk to, int peer) { return {comm::StepKind::RecvReduce, to, peer, {}}; }

// Two ranks running `steps` each (the peer is the other rank), buffers of `in` and `out` elements.
comm::Schedule two_ranks(const std::vector<comm::Step>& steps, int64_t in = 8, int64_t out = 8) {
  comm::Schedule s;
  for (int r = 0; r < 2; ++r) {
    comm::RankProgram program{{in, out}, steps};
    for (comm::Step& step : program.steps)
      if (step.peer >= 0) step.peer = 1 - r;
    s.ranks.push_back(program);
  }
  return s;
}

}  // namespace

TEST_CASE(
    "runs_in_place accepts identity copies before other writes, and refuses every other read of the input") {
  const tessera_chunk in_all{kIn, 0, 8}, out_all{kOut, 0, 8};
  // Recursive doubling's shape: copy, send the output, reduce into it.
  CHECK(comm::runs_in_place(two_ranks({copy(out_all, in_all), send(out_all, 0), recv_reduce(out_all, 0)})));
  // Copies of parts, each to its own place, in any order.
  CHECK(comm::runs_in_place(two_ranks(
      {copy({kOut, 4, 4}, {kIn, 4, 4}), copy({kOut, 0, 4}, {kIn, 0, 4}), recv_reduce(out_all, 0)})));
  // A copy that moves elements reads input the output has overwritten.
  CHECK_FALSE(comm::runs_in_place(two_ranks({copy({kOut, 0, 4}, {kIn, 4, 4}), recv_reduce(out_all, 0)})));
  // An identity copy after a write of the output would bring the input's value back there.
  CHECK_FALSE(comm::runs_in_place(two_ranks({recv_reduce({kOut, 0, 4}, 0), copy(out_all, in_all)})));
  // Sends and reductions from the input read it while (or after) the output changes.
  CHECK_FALSE(comm::runs_in_place(two_ranks({send(in_all, 0), recv_reduce(out_all, 0)})));
  CHECK_FALSE(
      comm::runs_in_place(two_ranks({copy(out_all, in_all), {comm::StepKind::Reduce, out_all, -1, in_all}})));
  // Buffers of other lengths (all_gather's output) never share memory.
  CHECK_FALSE(comm::runs_in_place(two_ranks({copy({kOut, 0, 8}, in_all)}, 8, 16)));
  // One rank that cannot run in place is enough to refuse the schedule.
  comm::Schedule mixed = two_ranks({copy(out_all, in_all), recv_reduce(out_all, 0)});
  mixed.ranks[1].steps.insert(mixed.ranks[1].steps.begin(), send(in_all, 0));
  CHECK_FALSE(comm::runs_in_place(mixed));
  CHECK(comm::runs_in_place(comm::Schedule{}));  // nothing to run
}

TEST_CASE("a schedule the analysis accepts gives, in place, the bits of the two-buffer replay") {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0);
  std::uniform_int_distribution<int> exponent(-12, 12);
  int accepted = 0;
  for (const std::string& algorithm : ts::dist::algorithm_names()) {
    for (int p : {1, 2, 3, 4, 7, 8}) {
      for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{13}}) {
        if (!ts::dist::verify_schedule(algorithm, "all_reduce", p, count).empty()) continue;
        CAPTURE(algorithm);
        CAPTURE(p);
        CAPTURE(count);
        const tessera_collective_request request =
            comm::make_request(TESSERA_COLL_ALL_REDUCE, p, count, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
        const std::shared_ptr<const comm::Schedule> schedule = comm::cached_schedule(algorithm, request);
        if (!schedule->in_place) continue;
        ++accepted;
        // Distinct values of many magnitudes: another order or another operand changes bits.
        std::vector<ts::Tensor> inputs, copies;
        for (int r = 0; r < p; ++r) {
          std::vector<double> values;
          for (int64_t i = 0; i < count; ++i) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
          inputs.push_back(
              ts::from_values(values, {count}, ts::TensorOptions(ts::kFloat64)).to(ts::kFloat32));
          copies.push_back(inputs.back().clone());
        }
        const std::vector<ts::Tensor> apart = comm::execute(*schedule, inputs);
        comm::ExecutionPlace place;
        place.overwrite_inputs = true;
        const std::vector<ts::Tensor> in_place = comm::execute(*schedule, copies, place);
        for (int r = 0; r < p; ++r) {
          CAPTURE(r);
          // The output is the input's own memory, and holds the two-buffer replay's bits.
          CHECK(in_place[static_cast<size_t>(r)].impl() == copies[static_cast<size_t>(r)].impl());
          const std::vector<float> a = apart[static_cast<size_t>(r)].to_vector<float>();
          const std::vector<float> b = in_place[static_cast<size_t>(r)].to_vector<float>();
          REQUIRE(a.size() == b.size());
          CHECK(test::same_bits(a, b));
        }
      }
    }
  }
  CHECK(accepted > 0);  // recursive doubling's all_reduce at least
}

TEST_CASE("recursive doubling's all_reduce runs in place at 2, 4 and 8 ranks") {
  const auto in_place = [](const char* algorithm, int p) {
    const tessera_collective_request request =
        comm::make_request(TESSERA_COLL_ALL_REDUCE, p, 16, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
    return comm::cached_schedule(algorithm, request)->in_place;
  };
  CHECK(in_place("rd", 2));
  CHECK(in_place("rd", 4));
  CHECK(in_place("rd", 8));
}

TEST_CASE("a replayed all_reduce computes in the shards' memory, never in another rank's or tensor's bytes") {
  const std::string saved = ts::dist::algorithms();
  const bool was_forced = comm::replay_forced();
  comm::force_replay(true);
  ts::dist::set_algorithms("all_reduce:rd");
  // 4 ranks: the storages are compared pairwise; 16: sorted (tensor_model.cpp, distinct_storages).
  for (const int p : {4, 16}) {
    CAPTURE(p);
    ts::LocalMode mode(p);
    // Distinct shards: the result lands in each shard's own bytes (no new buffer, nothing moved).
    ts::Tensor x = ts::rank_map([](int r) { return ts::full({13}, static_cast<float>(r + 1)); });
    std::vector<const void*> before;
    for (int r = 0; r < p; ++r) before.push_back(x.shard(r).impl()->storage()->data.load());
    ts::dist::all_reduce(x, ts::ReduceOp::SUM);
    for (int r = 0; r < p; ++r) {
      CAPTURE(r);
      CHECK(x.shard(r).impl()->storage()->data.load() == before[static_cast<size_t>(r)]);
      CHECK(x.shard(r).to_vector<float>() ==
            std::vector<float>(13, static_cast<float>(p * (p + 1)) / 2));  // 1 + ... + p
    }
    // Every rank's shard is one and the same plain tensor: running in its memory would write one
    // rank's partial sums into the other ranks' inputs, so it runs with buffers of its own. The
    // shards are that tensor, so it holds the sum afterwards, as every shard does.
    ts::Tensor plain;
    {
      auto off = mode.disable();
      plain = ts::full({13}, 2.5f);
    }
    ts::Tensor same = ts::rank_map([&](int) { return plain; });
    REQUIRE(same.shard(0).impl() == same.shard(1).impl());
    ts::dist::all_reduce(same, ts::ReduceOp::SUM);
    for (int r = 0; r < p; ++r)
      CHECK(same.shard(r).to_vector<float>() == std::vector<float>(13, 2.5f * static_cast<float>(p)));
    // Shards that share bytes copy-on-write (a factory inside the mode): each gets its own first.
    ts::Tensor replicated = ts::full({13}, 0.5f);
    const ts::Tensor twin = replicated + 0.0;  // elementwise on shared inputs: shares bytes again
    ts::dist::all_reduce(replicated, ts::ReduceOp::SUM);
    for (int r = 0; r < p; ++r) {
      CHECK(replicated.shard(r).to_vector<float>() == std::vector<float>(13, 0.5f * static_cast<float>(p)));
      CHECK(twin.shard(r).to_vector<float>() == std::vector<float>(13, 0.5f));
    }
  }
  comm::force_replay(was_forced);
  ts::dist::set_algorithms(saved);
}

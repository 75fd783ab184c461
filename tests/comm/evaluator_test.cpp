// The plan evaluator (comm/schedule_plan, comm/plan_evaluator) against replay.
// The oracle is execute(), the message-by-message replay the evaluator replaces in simulated worlds:
// independent code (schedule_runner + TensorModel), so agreeing with it bit for bit, over every
// loaded algorithm, collective, group size, count, dtype and reduce op, means the evaluator keeps
// each reduction's operands and order. Inputs differ per rank and element and floats span many
// magnitudes, so any other order of a sum would change bits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "comm/collective_path.hpp"
#include "comm/components.hpp"
#include "comm/executor.hpp"
#include "comm/plan_evaluator.hpp"
#include "comm/run_collective.hpp"
#include "comm/schedule_plan.hpp"
#include "tensor/tensor_impl.hpp"

namespace ts = tessera;
namespace comm = tessera::comm;

namespace {

bool reduces(int32_t collective) {
  return collective == TESSERA_COLL_ALL_REDUCE || collective == TESSERA_COLL_REDUCE ||
         collective == TESSERA_COLL_REDUCE_SCATTER;
}
// Whether the collective defines rank r's output (reduce and gather define only the root's).
bool defined_output(int32_t collective, int rank, int root) {
  return (collective != TESSERA_COLL_REDUCE && collective != TESSERA_COLL_GATHER) || rank == root;
}

std::vector<int32_t> reduce_ops(ts::DType dtype, int32_t collective) {
  if (!reduces(collective)) return {TESSERA_REDUCE_SUM};
  if (dtype == ts::kFloat32 || dtype == ts::kFloat64)
    return {TESSERA_REDUCE_SUM, TESSERA_REDUCE_PRODUCT, TESSERA_REDUCE_MIN, TESSERA_REDUCE_MAX};
  return {TESSERA_REDUCE_SUM,  TESSERA_REDUCE_PRODUCT, TESSERA_REDUCE_MIN, TESSERA_REDUCE_MAX,
          TESSERA_REDUCE_BAND, TESSERA_REDUCE_BOR,     TESSERA_REDUCE_BXOR};
}

// Floats: a random sign, mantissa and exponent in [-20, 20], so sums lose different low bits in
// different orders, and signed zeros; for products, factors in [0.75, 1.5) that stay finite. Integers: the
// full range (sums and products wrap, identically in both paths) or small factors for products.
template <class T>
std::vector<T> random_values(std::mt19937_64& rng, int64_t n, int32_t op) {
  std::vector<T> values(static_cast<size_t>(n));
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (size_t i = 0; i < values.size(); ++i) {
    T v{};
    if constexpr (std::is_same_v<T, bool>) {
      v = (rng() & 1) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      const double m = mantissa(rng);
      v = static_cast<T>(op == TESSERA_REDUCE_PRODUCT ? m * 0.75
                                                      : std::ldexp((rng() & 1) ? m : -m, exponent(rng)));
      // Now and then a signed zero: min and max of -0 and +0 depend on the operands' order.
      if (rng() % 8 == 0) v = (rng() & 1) ? T(0) : -T(0);
      // Rarely a NaN with a payload of its own: which NaN a sum of two keeps must not depend on
      // the kernel's loop (hd::settled), or ranks computing one value two ways get other bits.
      if (rng() % 64 == 0) {
        const std::string payload = std::to_string(rng() % 1000 + 1);
        if constexpr (std::is_same_v<T, float>)
          v = std::nanf(payload.c_str());
        else
          v = std::nan(payload.c_str());
      }
    } else {
      v = op == TESSERA_REDUCE_PRODUCT ? static_cast<T>(static_cast<int>(rng() % 5) - 2)
                                       : static_cast<T>(rng());
    }
    values[i] = v;  // by index: vector<bool> has no references to its elements
  }
  return values;
}

ts::Tensor random_input(std::mt19937_64& rng, ts::DType dtype, int64_t n, int32_t op) {
  switch (dtype) {
    case ts::kFloat32:
      return ts::from_values(random_values<float>(rng, n, op), {n}, dtype);
    case ts::kFloat64:
      return ts::from_values(random_values<double>(rng, n, op), {n}, dtype);
    case ts::kInt32:
      return ts::from_values(random_values<int32_t>(rng, n, op), {n}, dtype);
    case ts::kInt64:
      return ts::from_values(random_values<int64_t>(rng, n, op), {n}, dtype);
    default:
      return ts::from_values(random_values<bool>(rng, n, op), {n}, dtype);
  }
}

// The bytes of a 1-d contiguous buffer, as the collective left them.
std::string bytes_of(const ts::Tensor& t) {
  const auto& impl = *t.impl();
  const size_t item = ts::itemsize(impl.dtype());
  const char* data =
      static_cast<const char*>(impl.storage()->data.load()) + impl.offset() * static_cast<int64_t>(item);
  return std::string(data, static_cast<size_t>(impl.numel()) * item);
}

struct Totals {
  size_t schedules = 0;
  size_t cases = 0;
  size_t compared_outputs = 0;
};

// One schedule, every dtype and op on it: the schedule does not depend on either (the plugins build
// the same steps), so each (dtype, op) replays the same steps with that op. The plan is the op's
// own: it merges the operand orders of an op that commutes bitwise (schedule_plan.cpp).
// `backend`, when not empty, is where the inputs live (both paths then compute there).
void check_schedule(const std::string& algorithm, const tessera_collective_request& request,
                    std::mt19937_64& rng, Totals& totals, const std::string& backend = {}) {
  const auto schedule = comm::cached_schedule(algorithm, request);
  ++totals.schedules;
  const int p = request.group_size;
  for (ts::DType dtype : {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64, ts::kBool}) {
    for (int32_t op : reduce_ops(dtype, request.collective)) {
      comm::Schedule with_op = *schedule;
      with_op.request.reduce_op = op;
      tessera_collective_request op_request = request;
      op_request.reduce_op = op;
      const comm::SchedulePlan& plan_with_op = *comm::cached_plan(algorithm, op_request);
      std::vector<ts::Tensor> inputs;
      for (int r = 0; r < p; ++r) {
        ts::Tensor input = random_input(rng, dtype, comm::io_sizes(request, r).first, op);
        inputs.push_back(backend.empty() ? input : input.to(backend));
      }
      const std::vector<ts::Tensor> replayed = comm::execute(with_op, inputs);
      // Both ways of handing results out: a replica per rank, and one tensor per distinct result.
      for (const bool shared_outputs : {false, true}) {
        const std::vector<ts::Tensor> evaluated = comm::evaluate_plan(plan_with_op, inputs, shared_outputs);
        ++totals.cases;
        REQUIRE(evaluated.size() == replayed.size());
        for (int r = 0; r < p; ++r) {
          const ts::Tensor& e = evaluated[static_cast<size_t>(r)];
          REQUIRE(e.numel() == comm::io_sizes(request, r).second);
          CHECK(e.dtype() == dtype);
          if (!defined_output(request.collective, r, request.root)) continue;
          ++totals.compared_outputs;
          if (bytes_of(e) != bytes_of(replayed[static_cast<size_t>(r)])) {
            FAIL_CHECK("rank " << r << " differs from replay: " << algorithm << " "
                               << comm::describe_request(request) << " dtype " << ts::dtype_name(dtype)
                               << " op " << std::string(comm::reduce_kernel(op))
                               << std::string(shared_outputs ? " (shared outputs)" : ""));
            return;
          }
        }
      }
    }
  }
}

// Every loaded algorithm and collective it offers, over group sizes `sizes` and, per size, 0 elements,
// fewer than ranks (empty blocks) and a random uneven count.
Totals check_every_schedule(std::initializer_list<int> sizes, const std::string& backend) {
  std::mt19937_64 rng(20240611);
  Totals totals;
  std::vector<std::string> algorithms = ts::comm::algorithm_names();
  REQUIRE(algorithms.size() >= 6);  // direct, ring, tree, rd, rabenseifner, bruck at least
  for (const std::string& name : algorithms) {
    const auto algorithm = ts::comm::algorithm(name);
    for (int32_t collective = 0; collective < TESSERA_COLL_COUNT; ++collective) {
      if (!algorithm->offers(collective)) continue;
      for (int p : sizes) {
        const std::vector<int64_t> counts = {0, std::max(1, p / 2),
                                             p + 1 + static_cast<int64_t>(rng() % (3 * p + 5))};
        for (int64_t count : counts) {
          tessera_collective_request request = comm::make_request(
              collective, p, count, ts::kFloat32, TESSERA_REDUCE_SUM, static_cast<int32_t>(rng() % p));
          // Half the time a shuffled ring order, as a topology gives ring-shaped algorithms.
          std::vector<int32_t> ring(static_cast<size_t>(p));
          std::iota(ring.begin(), ring.end(), 0);
          if (rng() & 1) {
            std::shuffle(ring.begin(), ring.end(), rng);
            request.ring_order = ring.data();
          }
          if (!algorithm->check(request).empty()) continue;  // e.g. powers of two only
          CAPTURE(name);
          CAPTURE(comm::describe_request(request));
          check_schedule(name, request, rng, totals, backend);
        }
      }
    }
  }
  MESSAGE(totals.schedules << " schedules, " << totals.cases << " (dtype, op) cases, "
                           << totals.compared_outputs << " rank outputs compared bitwise"
                           << (backend.empty() ? "" : " on backend " + backend));
  return totals;
}

}  // namespace

TEST_CASE("the plan evaluator is bitwise the replay for every algorithm, collective, size, dtype and op") {
  const Totals totals = check_every_schedule({1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64}, {});
  CHECK(totals.schedules > 300);
}

// On a backend whose memory is a device's (devlike declares kDLExtDev), the evaluator computes node
// by node with the backend's kernels instead of gathering on the host: that path, too, is the replay.
TEST_CASE("on a device backend the plan evaluator is bitwise the replay too") {
  ts::load_plugin(TESSERA_DEVLIKE_PLUGIN_FILE);
  const Totals totals = check_every_schedule({1, 3, 5, 8}, "devlike");
  CHECK(totals.schedules > 100);
  ts::unload_plugin("backend-devlike");
}

TEST_CASE("plans share identical results and nodes across ranks") {
  // The direct all_reduce combines in rank order on every rank: one chain of p - 1 nodes, one
  // distinct output, however many ranks.
  const auto request =
      comm::make_request(TESSERA_COLL_ALL_REDUCE, 13, 10, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  const auto direct = comm::cached_plan("direct", request);
  CHECK(direct->nodes.size() == 12);
  CHECK(direct->distinct_outputs() == 1);
  // A ring all_reduce reduces each block once and only copies it around: p blocks of p - 1 nodes.
  const auto ring = comm::cached_plan("ring", request);
  CHECK(ring->nodes.size() == 10 * 12);  // 10 non-empty blocks of one element
  CHECK(ring->distinct_outputs() == 1);
  // all_to_all: every rank's output differs; nothing is reduced.
  const auto all_to_all = comm::cached_plan(
      "direct", comm::make_request(TESSERA_COLL_ALL_TO_ALL, 5, 3, ts::kFloat32, TESSERA_REDUCE_SUM, 0));
  CHECK(all_to_all->nodes.empty());
  CHECK(all_to_all->distinct_outputs() == 5);
  // A huge count costs no more plan than a small one: runs, not elements.
  const auto huge = comm::cached_plan("ring", comm::make_request(TESSERA_COLL_ALL_REDUCE, 4, int64_t{1} << 40,
                                                                 ts::kFloat32, TESSERA_REDUCE_SUM, 0));
  CHECK(huge->nodes.size() == 4 * 3);
}

TEST_CASE("a ring's waves continue each other: each batch carries the previous one's chains in place") {
  // 10 one-element blocks over 13 ranks: 12 waves of 10 reductions, created in an order that
  // rotates by one rank per wave; the plan aligns them so that node i of a wave continues node i
  // of the wave before (through the right operand: the ring adds the rank's own value to the
  // received partial sum). The sweep above checks the bits of such plans against the replay.
  const auto request =
      comm::make_request(TESSERA_COLL_ALL_REDUCE, 13, 10, ts::kFloat32, TESSERA_REDUCE_MAX, 0);
  const auto ring = comm::cached_plan("ring", request);
  REQUIRE(ring->batches.size() == 12);
  CHECK(ring->batches.front().continues == comm::PlanNode::kFresh);
  for (size_t b = 1; b < ring->batches.size(); ++b) {
    const comm::PlanBatch& batch = ring->batches[b];
    CAPTURE(b);
    REQUIRE(batch.continues == comm::PlanNode::kOverRight);
    for (size_t i = 0; i < batch.count; ++i)
      CHECK(ring->nodes[batch.first + i].right == 13 + static_cast<int32_t>(ring->batches[b - 1].first + i));
  }
  CHECK(ring->batches.front().chain_ahead);
  // Blocks of two lengths (23 elements over 13 ranks: ten of 2, three of 1) make waves of two
  // batches each, the longer blocks first: two chains of batches, interleaved, each batch
  // continuing the one of its length a wave before.
  const auto uneven = comm::cached_plan(
      "ring", comm::make_request(TESSERA_COLL_ALL_REDUCE, 13, 23, ts::kFloat32, TESSERA_REDUCE_SUM, 0));
  REQUIRE(uneven->batches.size() == 24);
  for (size_t b = 0; b < uneven->batches.size(); ++b) {
    const comm::PlanBatch& batch = uneven->batches[b];
    CAPTURE(b);
    CHECK(batch.count == (b % 2 == 0 ? 10 : 3));
    CHECK(batch.length == (b % 2 == 0 ? 2 : 1));
    CHECK(batch.continues == (b < 2 ? comm::PlanNode::kFresh : comm::PlanNode::kOverRight));
    CHECK(batch.from == (b < 2 ? comm::PlanBatch::kNone : b - 2));
    CHECK(batch.continued_by == (b + 2 < 24 ? b + 2 : comm::PlanBatch::kNone));
    CHECK(batch.chain_ahead);  // the ring adds inputs: nothing between the links feeds them
  }
}

// The fold kernels (KERNELS.md "Folds") compute a ring's continued waves in one call; a host backend
// without them ("nofold", the CPU backend less its folds) gets a kernel call per wave. Both must be
// the replay's bits, and the counts show which path ran.
TEST_CASE(
    "a ring's chains fold where the backend has the fold, go wave by wave where not: both are the replay") {
  ts::load_plugin(TESSERA_NOFOLD_PLUGIN_FILE);
  std::mt19937_64 rng(77);
  struct Case {
    int ranks;
    int64_t count;
    ts::DType dtype;
    int32_t op;
    size_t folded_calls;  // kernel calls with the folds: the fresh first wave, then the folds
    size_t folds;
    size_t unfolded_calls;  // without: one per wave
  };
  const std::vector<Case> cases = {
      // 10 one-element chains over 13 ranks: 12 waves, 11 of them continued, folded in one call.
      {13, 10, ts::kFloat32, TESSERA_REDUCE_SUM, 2, 1, 12},
      {13, 10, ts::kFloat64, TESSERA_REDUCE_MAX, 2, 1, 12},
      {13, 10, ts::kFloat32, TESSERA_REDUCE_MIN, 2, 1, 12},
      {13, 26, ts::kFloat32, TESSERA_REDUCE_PRODUCT, 2, 1, 12},
      {7, 21, ts::kInt32, TESSERA_REDUCE_BXOR, 2, 1, 6},
      {7, 21, ts::kBool, TESSERA_REDUCE_BAND, 2, 1, 6},
      {4, 4, ts::kInt64, TESSERA_REDUCE_SUM, 2, 1, 3},  // the shortest chain that folds: two continued waves
      {3, 3, ts::kInt64, TESSERA_REDUCE_SUM, 2, 0, 2},  // one continued wave is one call either way
      // Blocks of two lengths (23 over 13 ranks: ten of 2, three of 1): two chains of batches,
      // interleaved wave by wave, each computed and folded on its own.
      {13, 23, ts::kFloat32, TESSERA_REDUCE_SUM, 4, 2, 24},
      {13, 23, ts::kFloat64, TESSERA_REDUCE_MIN, 4, 2, 24},
      // 2500 over 256 ranks: 196 chains of 10 (7840 bytes a wave: 133 waves a fold call, so two
      // calls for the 254 continued waves) and 60 of 9 (one call).
      {256, 2500, ts::kFloat32, TESSERA_REDUCE_SUM, 5, 3, 510},
      // 64 chains of 1024 floats: a wave is 256 KiB, and a fold call takes at most 1 MiB of them, so
      // the 62 continued waves fold in 16 calls of up to 4.
      {64, 64 * 1024, ts::kFloat32, TESSERA_REDUCE_SUM, 17, 16, 63},
  };
  for (const Case& c : cases) {
    CAPTURE(c.ranks);
    CAPTURE(c.count);
    CAPTURE(ts::dtype_name(c.dtype));
    CAPTURE(std::string(comm::reduce_kernel(c.op)));
    const auto request = comm::make_request(TESSERA_COLL_ALL_REDUCE, c.ranks, c.count, c.dtype, c.op, 0);
    comm::Schedule schedule = *comm::cached_schedule("ring", request);
    comm::SchedulePlan plan = *comm::cached_plan("ring", request);
    schedule.request.reduce_op = plan.reduce_op = c.op;
    std::vector<ts::Tensor> inputs;
    for (int r = 0; r < c.ranks; ++r) inputs.push_back(random_input(rng, c.dtype, c.count, c.op));
    const std::string replayed = bytes_of(comm::execute(schedule, inputs).front());
    for (const std::string backend : {"cpu", "nofold"}) {
      CAPTURE(backend);
      std::vector<ts::Tensor> placed;
      for (const ts::Tensor& input : inputs) placed.push_back(input.to(backend));
      comm::EvaluationCounts counts;
      const std::vector<ts::Tensor> evaluated = comm::evaluate_plan(plan, placed, false, &counts);
      CHECK(counts.kernel_calls == (backend == "cpu" ? c.folded_calls : c.unfolded_calls));
      CHECK(counts.folds == (backend == "cpu" ? c.folds : 0));
      // Every rank ends with the whole sum; each is compared with rank 0's replayed result.
      for (int r = 0; r < c.ranks; ++r) CHECK(bytes_of(evaluated[static_cast<size_t>(r)]) == replayed);
    }
  }
  ts::unload_plugin("backend-nofold");
}

TEST_CASE("recursive doubling's sum is computed once: every rank combines the same pairs") {
  // Rank r adds x_r + x_{r^1}, its partner x_{r^1} + x_r: one value, since addition commutes
  // bitwise (KERNELS.md), and so on up the levels: p - 1 nodes and one result, as for the ring.
  const int p = 8;
  for (const int32_t op : {TESSERA_REDUCE_SUM, TESSERA_REDUCE_PRODUCT, TESSERA_REDUCE_BXOR}) {
    CAPTURE(op);
    const ts::DType dtype = op == TESSERA_REDUCE_BXOR ? ts::kInt32 : ts::kFloat32;
    const auto request = comm::make_request(TESSERA_COLL_ALL_REDUCE, p, 5, dtype, op, 0);
    const auto plan = comm::cached_plan("rd", request);
    CHECK(plan->nodes.size() == static_cast<size_t>(p - 1));
    CHECK(plan->distinct_outputs() == 1);
  }
  // Maximum does not commute bitwise (of two NaNs the first wins, of +0 and -0 the first): every
  // rank keeps its own order, 3 levels of p nodes, p results.
  const auto max_plan = comm::cached_plan(
      "rd", comm::make_request(TESSERA_COLL_ALL_REDUCE, p, 5, ts::kFloat32, TESSERA_REDUCE_MAX, 0));
  CHECK(max_plan->nodes.size() == static_cast<size_t>(3 * p));
  CHECK(max_plan->distinct_outputs() == static_cast<size_t>(p));
}

TEST_CASE("ranks whose results come out with equal bytes share one tensor when outputs may be shared") {
  // rd compares in another order on every rank, so its MAX plan computes p outputs; on finite values
  // without signed zeros they all hold the same bytes. Rank r's element i is 40 ((i + r) % 8) +
  // 8 i + r, scaled and shifted: distinct across ranks, the largest on another rank per element.
  const int p = 8;
  const auto request = comm::make_request(TESSERA_COLL_ALL_REDUCE, p, 5, ts::kFloat32, TESSERA_REDUCE_MAX, 0);
  const auto plan = comm::cached_plan("rd", request);
  REQUIRE(plan->distinct_outputs() == static_cast<size_t>(p));
  std::vector<ts::Tensor> inputs;
  for (int r = 0; r < p; ++r) {
    std::vector<float> values;
    for (int i = 0; i < 5; ++i)
      values.push_back(0.25f * static_cast<float>(((i + r) % p) * 40 + 8 * i + r) - 30.f);
    inputs.push_back(ts::from_values(values, {5}));
  }
  const std::vector<ts::Tensor> replayed = comm::execute(*comm::cached_schedule("rd", request), inputs);
  const std::vector<ts::Tensor> shared = comm::evaluate_plan(*plan, inputs, true);
  const std::vector<ts::Tensor> apart = comm::evaluate_plan(*plan, inputs, false);
  for (int r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(bytes_of(replayed[static_cast<size_t>(r)]) == bytes_of(replayed[0]));  // what makes sharing right
    CHECK(shared[static_cast<size_t>(r)].impl() == shared[0].impl());
    CHECK(bytes_of(shared[static_cast<size_t>(r)]) == bytes_of(replayed[static_cast<size_t>(r)]));
    if (r > 0) CHECK(apart[static_cast<size_t>(r)].impl() != apart[0].impl());  // a rank's own replica
  }
  // A reduce_scatter gives every rank another block: distinct bytes are never merged, equal ones are.
  const auto scatter =
      comm::make_request(TESSERA_COLL_REDUCE_SCATTER, 3, 2, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  const auto scatter_plan = comm::cached_plan("ring", scatter);
  std::vector<ts::Tensor> distinct, zeros;
  for (int r = 0; r < 3; ++r) {
    distinct.push_back(ts::from_values(std::vector<float>{1.f * r, 2, 3, 4, 5, 6.f + r}, {6}));
    zeros.push_back(ts::zeros({6}));
  }
  const std::vector<ts::Tensor> blocks = comm::evaluate_plan(*scatter_plan, distinct, true);
  CHECK(blocks[0].impl() != blocks[1].impl());
  CHECK(blocks[1].impl() != blocks[2].impl());
  CHECK(blocks[0].to_vector<float>() == std::vector<float>{3, 6});    // 0 + 1 + 2, 2 + 2 + 2
  CHECK(blocks[2].to_vector<float>() == std::vector<float>{15, 21});  // 5 * 3, 6 + 7 + 8
  const std::vector<ts::Tensor> zero_blocks = comm::evaluate_plan(*scatter_plan, zeros, true);
  CHECK(zero_blocks[0].impl() == zero_blocks[2].impl());
}

namespace {
ts::Tensor rank_values(int p, int64_t n) {
  std::mt19937_64 rng(7);
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < p; ++r) shards.emplace_back(r, random_input(rng, ts::kFloat32, n, TESSERA_REDUCE_SUM));
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}

void check_same_bits(const ts::Tensor& a, const ts::Tensor& b, int p) {
  for (int r = 0; r < p; ++r) {
    const std::vector<float> x = a.shard(r).to_vector<float>(), y = b.shard(r).to_vector<float>();
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
  }
}
}  // namespace

TEST_CASE("simulated collectives take the evaluator, forced replay gives the same bits") {
  const std::string saved = ts::dist::algorithms();
  const bool was_forced = comm::replay_forced();
  comm::force_replay(false);
  for (const char* rules :
       {"all_reduce:ring;*:direct", "all_reduce:rd;*:direct", "all_reduce:tree;*:direct"}) {
    CAPTURE(rules);
    ts::dist::set_algorithms(rules);
    const int p = 7;
    const ts::Tensor x = rank_values(p, 37);
    ts::Tensor evaluated = x.clone(), replayed = x.clone();
    const comm::PathCounts before = comm::path_counts();
    ts::dist::all_reduce(evaluated, ts::ReduceOp::SUM);
    const comm::PathCounts middle = comm::path_counts();
    CHECK(middle.evaluated == before.evaluated + 1);
    CHECK(middle.replayed == before.replayed);
    comm::force_replay(true);
    ts::dist::all_reduce(replayed, ts::ReduceOp::SUM);
    comm::force_replay(false);
    const comm::PathCounts after = comm::path_counts();
    CHECK(after.replayed == middle.replayed + 1);
    CHECK(after.evaluated == middle.evaluated);
    check_same_bits(evaluated, replayed, p);
    // The input shards of a copy are untouched: results landed only in the tensor reduced.
    check_same_bits(x, rank_values(p, 37), p);
  }
  comm::force_replay(was_forced);
  ts::dist::set_algorithms(saved);
}

TEST_CASE("TESSERA_COLLECTIVE_REPLAY=1 forces replay, other values are named errors") {
  // The variable is read once, at first use, so each value runs in a fresh copy of this program.
  if (const char* child = std::getenv("TESSERA_TEST_REPLAY_CHILD")) {
    try {
      const ts::Tensor x = rank_values(4, 5);
      ts::Tensor y = x.clone();
      ts::dist::all_reduce(y, ts::ReduceOp::SUM);
      const comm::PathCounts counts = comm::path_counts();
      std::printf("replay %d evaluated %llu replayed %llu\n", comm::replay_forced() ? 1 : 0,
                  static_cast<unsigned long long>(counts.evaluated),
                  static_cast<unsigned long long>(counts.replayed));
    } catch (const ts::Error& e) {
      std::printf("error: %s\n", e.what());
    }
    (void)child;
    std::fflush(stdout);
    std::_Exit(0);
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  auto run_with = [&](const std::string& value) {
    const std::string command = "TESSERA_TEST_REPLAY_CHILD=1 TESSERA_COLLECTIVE_REPLAY='" + value + "' '" +
                                self + "' '-tc=TESSERA_COLLECTIVE_REPLAY=1 forces replay*' 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string output;
    char buffer[512];
    for (size_t got; (got = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, got);
    pclose(pipe);
    return output;
  };
  CHECK(run_with("1").find("replay 1 evaluated 0 replayed 1") != std::string::npos);
  CHECK(run_with("0").find("replay 0 evaluated 1 replayed 0") != std::string::npos);
  CHECK(run_with("").find("replay 0 evaluated 1 replayed 0") != std::string::npos);
  const std::string bad = run_with("yes");
  CAPTURE(bad);
  CHECK(bad.find("error: TESSERA_COLLECTIVE_REPLAY='yes': expected 1") != std::string::npos);
}

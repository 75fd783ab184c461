// The training scenarios of examples/training against their dense single-rank runs: every
// gradient, parameter and loss within rtol 1e-5 / atol 1e-6 at every step, the communication each
// parallelism promises, and the edge cases (1 rank: the same bits; 3 and 7 ranks; uneven and
// empty shards).
#include <doctest/doctest.h>

#include <numeric>

#include "training.hpp"

namespace ts = tessera;

namespace {

using training::calls;
using training::Comparison;

void check_matches(const Comparison& c, size_t steps) {
  INFO(c.name << ": " << c.setup);
  REQUIRE(c.distributed.size() == steps);
  REQUIRE(c.dense.size() == steps);
  for (size_t s = 0; s < steps; ++s) {
    CHECK(c.distributed[s].grads.size() == (c.input_grad ? 3u : 2u));
    CHECK(c.distributed[s].params.size() == 2u);
  }
  CHECK_MESSAGE(c.grads.close, "gradients max |diff| " << c.grads.max_abs);
  CHECK_MESSAGE(c.params.close, "parameters max |diff| " << c.params.max_abs);
  CHECK_MESSAGE(c.loss.close, "loss max |diff| " << c.loss.max_abs);
  CHECK(c.matches());
}

void check_bitwise(const Comparison& c) {
  INFO(c.name << ": " << c.setup);
  CHECK_MESSAGE(c.grads.bitwise, "gradients max |diff| " << c.grads.max_abs);
  CHECK_MESSAGE(c.params.bitwise, "parameters max |diff| " << c.params.max_abs);
  CHECK_MESSAGE(c.loss.bitwise, "loss max |diff| " << c.loss.max_abs);
}

}  // namespace

TEST_CASE(
    "data parallel over 4 ranks (rows 3+5+2+4): matches the dense run with one all_reduce per gradient") {
  const Comparison c = training::data_parallel();
  check_matches(c, 3);
  CHECK(c.communication.forward.empty());
  CHECK(calls(c.communication.backward, "all_reduce") == 2);  // the explicit gradient sync
  CHECK(calls(c.communication.backward) == 2);
  CHECK(calls(c.communication.step) == 0);  // every replica steps on its own
  // Reduction order differs from the dense matmul's: not all bits agree.
  CHECK_FALSE(c.grads.bitwise);
}

TEST_CASE("data parallel on 1, 3 and 7 ranks with empty shards") {
  SUBCASE("1 rank is the dense program, bit for bit") {
    const Comparison c = training::data_parallel({6}, 3);
    check_matches(c, 3);
    check_bitwise(c);
  }
  SUBCASE("3 ranks, one empty") { check_matches(training::data_parallel({4, 0, 3}, 2), 2); }
  SUBCASE("7 ranks, uneven, one empty") {
    check_matches(training::data_parallel({2, 1, 0, 3, 1, 2, 1}, 2), 2);
  }
}

TEST_CASE(
    "Megatron TP MLP on 4 ranks: matches the dense run (dx too), one all_reduce forward and one backward") {
  const Comparison c = training::megatron_tp();
  CHECK(c.input_grad);
  check_matches(c, 2);
  CHECK(calls(c.communication.forward, "all_reduce", "tp") == 1);
  CHECK(calls(c.communication.forward) == 1);
  // Megatron's f: the input gradient of the column-parallel layer; the weights' stay sharded.
  CHECK(calls(c.communication.backward, "all_reduce", "tp") == 1);
  CHECK(calls(c.communication.backward) == 1);
  CHECK(calls(c.communication.step) == 0);  // sharded gradients update sharded weights
}

TEST_CASE("Megatron TP MLP on 1, 3 and 7 ranks (hidden 8 over 7: empty shards)") {
  SUBCASE("1 rank is the dense program, bit for bit") {
    const Comparison c = training::megatron_tp(1, 2);
    check_matches(c, 2);
    check_bitwise(c);
    CHECK(calls(c.communication.backward) == 0);
  }
  SUBCASE("3 ranks") { check_matches(training::megatron_tp(3, 2), 2); }
  SUBCASE("7 ranks") { check_matches(training::megatron_tp(7, 2), 2); }
}

TEST_CASE(
    "DP x TP on a (2,4) mesh: matches the dense run, each weight gradient reduced once over dp and never "
    "over tp") {
  const Comparison c = training::dp_tp();
  check_matches(c, 2);
  CHECK(calls(c.communication.forward, "all_reduce", "tp") == 1);
  CHECK(calls(c.communication.forward) == 1);
  // Each weight's gradient is reduced over dp once (pending after backward, reduced by the step);
  // nothing over tp, as the input needs no gradient.
  CHECK(calls(c.communication.backward, "", "tp") + calls(c.communication.step, "", "tp") == 0);
  CHECK(calls(c.communication.backward, "all_reduce", "dp") +
            calls(c.communication.step, "all_reduce", "dp") ==
        2);
  CHECK(calls(c.communication.backward) + calls(c.communication.step) == 2);
}

TEST_CASE("DP x TP on (1,1), (3,1), (1,3) and (4,2) meshes (7 rows: uneven and short dp shards)") {
  SUBCASE("(1,1) is the dense program, bit for bit") {
    const Comparison c = training::dp_tp(1, 1, 2);
    check_matches(c, 2);
    check_bitwise(c);
  }
  SUBCASE("(3,1)") { check_matches(training::dp_tp(3, 1, 2), 2); }
  SUBCASE("(1,3)") { check_matches(training::dp_tp(1, 3, 2), 2); }
  SUBCASE("(4,2)") { check_matches(training::dp_tp(4, 2, 2), 2); }
}

TEST_CASE(
    "FSDP over 4 ranks: matches the dense run, gathers forward, reduce_scatters backward, no all_reduce") {
  const Comparison c = training::fsdp();
  check_matches(c, 3);
  CHECK(calls(c.communication.forward, "all_gather") == 2);
  CHECK(calls(c.communication.forward) == 2);
  CHECK(calls(c.communication.backward, "reduce_scatter") == 2);
  CHECK(calls(c.communication.backward, "all_reduce") == 0);
  CHECK(calls(c.communication.backward) == 2);
  CHECK(calls(c.communication.step) == 0);  // each rank updates its own block
}

TEST_CASE("FSDP on 1, 3 and 7 ranks with empty batch shards") {
  SUBCASE("1 rank is the dense program, bit for bit") {
    const Comparison c = training::fsdp({5}, 2);
    check_matches(c, 2);
    check_bitwise(c);
  }
  SUBCASE("3 ranks, one without rows") { check_matches(training::fsdp({2, 0, 3}, 2), 2); }
  SUBCASE("7 ranks") { check_matches(training::fsdp({1, 2, 0, 1, 3, 1, 1}, 2), 2); }
}

TEST_CASE("AdamW training on a (2,2) mesh: the loss curve matches the dense run's step by step, and falls") {
  const Comparison c = training::adamw_training();
  check_matches(c, 8);
  for (size_t s = 0; s < c.dense.size(); ++s) {
    CAPTURE(s);
    CHECK(c.distributed[s].loss == doctest::Approx(c.dense[s].loss).epsilon(training::kRtol));
  }
  // The model learns: eight steps take the loss under half its first value.
  CHECK(c.dense.back().loss < 0.5 * c.dense.front().loss);
}

TEST_CASE("AdamW training on a (1,1) mesh is the dense program, bit for bit") {
  const Comparison c = training::adamw_training(1, 1, 4);
  check_matches(c, 4);
  check_bitwise(c);
}

TEST_CASE("compare_runs catches a gradient, a parameter and a loss that differ") {
  Comparison c = training::dp_tp(1, 1, 2);
  REQUIRE(c.matches());
  SUBCASE("one gradient element off by 1e-4") {
    ts::Tensor& g = c.distributed[1].grads[0];
    std::vector<float> values = g.to_vector<float>();
    values[3] += 1e-4f;
    g = ts::from_values(values, g.sizes());
    training::compare_runs(c);
    CHECK_FALSE(c.grads.close);
    CHECK(c.grads.max_abs == doctest::Approx(1e-4).epsilon(1e-3));
    CHECK(c.params.close);
    CHECK_FALSE(c.matches());
  }
  SUBCASE("a parameter off in its last bit is close, not bitwise") {
    ts::Tensor& p = c.distributed[0].params[1];
    p = p * 1.0000001;
    training::compare_runs(c);
    CHECK(c.params.close);
    CHECK_FALSE(c.params.bitwise);
    CHECK(c.matches());
  }
  SUBCASE("a loss off by 1e-4 relative") {
    c.distributed[1].loss *= 1 + 1e-4;
    training::compare_runs(c);
    CHECK_FALSE(c.loss.close);
    CHECK_FALSE(c.matches());
  }
  SUBCASE("a missing step") {
    c.distributed.pop_back();
    training::compare_runs(c);
    CHECK_FALSE(c.matches());
  }
}

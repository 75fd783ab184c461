// Every scenario's distributed run and its dense reference against the training run written out by
// hand in double precision (oracle.hpp): losses, gradients (dx too where the input requires grad)
// and updated parameters at every step.
#include "oracle.hpp"

#include <doctest/doctest.h>

namespace {

using training_test::near;
using training_test::OracleStep;
using training_test::Values;

void check_against(const std::vector<training::Step>& run, const std::vector<OracleStep>& expected,
                   bool input_grad, const char* which) {
  REQUIRE(run.size() == expected.size());
  for (size_t s = 0; s < run.size(); ++s) {
    INFO(which << " step " << s + 1);
    CHECK_MESSAGE(near(run[s].loss, expected[s].loss), run[s].loss << " vs " << expected[s].loss);
    const size_t grads = input_grad ? 3 : 2;
    REQUIRE(run[s].grads.size() == grads);
    // Each of `count` tensors of the step against its hand-computed values, element by element.
    const auto check_values = [](const char* what, const std::vector<tessera::Tensor>& tensors,
                                 const std::vector<Values>& wanted, size_t count) {
      for (size_t i = 0; i < count; ++i) {
        const Values got = training_test::values(tensors[i]);
        REQUIRE(got.size() == wanted[i].size());
        for (size_t k = 0; k < got.size(); ++k)
          CHECK_MESSAGE(near(got[k], wanted[i][k]),
                        what << " " << i << " index " << k << ": " << got[k] << " vs " << wanted[i][k]);
      }
    };
    check_values("gradient", run[s].grads, expected[s].grads, grads);
    check_values("parameter", run[s].params, expected[s].params, 2);
  }
}

void check_scenario(const training::Comparison& c) {
  INFO(c.name);
  const std::vector<OracleStep> expected = training_test::run_oracle(c.problem, c.options);
  check_against(c.distributed, expected, c.input_grad, "distributed");
  check_against(c.dense, expected, c.input_grad, "dense");
  // The steps moved the parameters: the oracle's last parameters are not the initial ones.
  CHECK_FALSE(expected.back().params[0] == training_test::values(c.problem.w1));
}

}  // namespace

TEST_CASE("data parallel (SGD with momentum) against the hand-written run") {
  check_scenario(training::data_parallel());
}
TEST_CASE("Megatron TP MLP (SGD, dx too) against the hand-written run") {
  check_scenario(training::megatron_tp());
}
TEST_CASE("DP x TP (AdamW) against the hand-written run") { check_scenario(training::dp_tp()); }
TEST_CASE("FSDP (AdamW on blocks) against the hand-written run") { check_scenario(training::fsdp()); }
TEST_CASE("AdamW training's 8 steps against the hand-written run") {
  check_scenario(training::adamw_training());
}

// A training run written out by hand in double precision, independent of autograd and of
// tessera's optimizers: the MLP's gradients come from tests/autograd/mlp_oracle.hpp (its loss
// sum(y * C) with C = dMSE/dy = 2 (y - target) / count has MSE's gradients), the updates from
// tests/optim/reference.hpp's SGD and AdamW oracles.
#pragma once

#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "autograd/mlp_oracle.hpp"
#include "optim/reference.hpp"
#include "training.hpp"

namespace training_test {

namespace ts = tessera;
using Values = std::vector<double>;

inline Values values(const ts::Tensor& t) { return t.to(ts::kFloat64).to_vector<double>(); }

struct OracleStep {
  double loss = 0;
  std::vector<Values> grads;   // dW1, dW2, dx
  std::vector<Values> params;  // W1, W2 after the step
};

// relu(x W1) W2 for an n x d input, d x k and k x o weights.
inline Values mlp_output(const oracle::Mlp& m) {
  Values y(static_cast<size_t>(m.n * m.o), 0.0);
  for (int64_t i = 0; i < m.n; ++i)
    for (int64_t j = 0; j < m.k; ++j) {
      double pre = 0;
      for (int64_t t = 0; t < m.d; ++t)
        pre += m.x[static_cast<size_t>(i * m.d + t)] * m.w1[static_cast<size_t>(t * m.k + j)];
      if (pre <= 0) continue;
      for (int64_t p = 0; p < m.o; ++p)
        y[static_cast<size_t>(i * m.o + p)] += pre * m.w2[static_cast<size_t>(j * m.o + p)];
    }
  return y;
}

template <class Oracle>
std::vector<OracleStep> run_oracle(const training::Problem& problem, Oracle o1, Oracle o2) {
  oracle::Mlp m;
  m.d = problem.w1.size(0);
  m.k = problem.w1.size(1);
  m.o = problem.w2.size(1);
  m.w1 = values(problem.w1);
  m.w2 = values(problem.w2);
  std::vector<OracleStep> steps;
  for (size_t s = 0; s < problem.x.size(); ++s) {
    m.n = problem.x[s].size(0);
    m.x = values(problem.x[s]);
    const Values target = values(problem.target[s]);
    const Values y = mlp_output(m);
    const double count = static_cast<double>(y.size());
    OracleStep step;
    m.c.assign(y.size(), 0.0);
    for (size_t i = 0; i < y.size(); ++i) {
      step.loss += (y[i] - target[i]) * (y[i] - target[i]) / count;
      m.c[i] = 2 * (y[i] - target[i]) / count;
    }
    const oracle::MlpGrads g = oracle::mlp_grads(m);
    step.grads = {g.dw1, g.dw2, g.dx};
    o1.step(m.w1, g.dw1);
    o2.step(m.w2, g.dw2);
    step.params = {m.w1, m.w2};
    steps.push_back(std::move(step));
  }
  return steps;
}

inline std::vector<OracleStep> run_oracle(const training::Problem& problem,
                                          const training::OptimizerOptions& options) {
  if (const auto* sgd = std::get_if<ts::optim::SGDOptions>(&options))
    return run_oracle(problem, optim_test::SgdOracle(*sgd), optim_test::SgdOracle(*sgd));
  const auto& adamw = std::get<ts::optim::AdamWOptions>(options);
  return run_oracle(problem, optim_test::AdamWOracle(adamw), optim_test::AdamWOracle(adamw));
}

// float32 against double: each op rounds at ~6e-8 relative, a few steps of a few ops stay well
// within 1e-4 relative (1e-5 absolute for values near zero).
inline bool near(double got, double expected) {
  return std::abs(got - expected) <= 1e-5 + 1e-4 * std::abs(expected);
}

}  // namespace training_test

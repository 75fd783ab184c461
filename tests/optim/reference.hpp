// Oracles for the optimizer tests: SGD and AdamW on one parameter as plain loops over doubles,
// written from the algorithms' textbook form (PyTorch's documentation), not from Tessera's code.
// Where PyTorch's implementation differs from its docs, the implementation's choice is taken and
// said so. Also helpers to build parameters and compare them with an oracle.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tessera/optim.hpp>
#include <tessera/tessera.hpp>
#include <utility>
#include <vector>

namespace optim_test {

namespace ts = tessera;
using Values = std::vector<double>;

// The parameters the SGD and AdamW oracle tests start from.
inline const Values kTheta0 = {0.5, -1.25, 2.0, 0.75, -0.3};

// theta <- theta - lr * b, where b is the (Nesterov) momentum buffer of g + wd*theta; the first
// step sets the buffer to that gradient itself, undamped.
struct SgdOracle {
  explicit SgdOracle(const ts::optim::SGDOptions& options) : o(options) {}
  ts::optim::SGDOptions o;
  Values buf;
  bool started = false;

  void step(Values& theta, const Values& grad) {
    if (!started) buf.assign(theta.size(), 0.0);
    for (size_t k = 0; k < theta.size(); ++k) {
      double g = o.maximize ? -grad[k] : grad[k];
      g += o.weight_decay * theta[k];
      if (o.momentum != 0) {
        buf[k] = started ? o.momentum * buf[k] + (1 - o.dampening) * g : g;
        g = o.nesterov ? g + o.momentum * buf[k] : buf[k];
      }
      theta[k] -= o.lr * g;
    }
    started = true;
  }
};

// Decoupled weight decay, then Adam with bias-corrected moments:
//   theta <- theta (1 - lr wd);  m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g^2;
//   theta <- theta - lr * (m / (1-b1^t)) / (sqrt(v_used / (1-b2^t)) + eps)
// With amsgrad v_used is the running maximum of the raw v (PyTorch's implementation; its docs take
// the maximum of the bias-corrected v, which differs).
struct AdamWOracle {
  explicit AdamWOracle(const ts::optim::AdamWOptions& options) : o(options) {}
  ts::optim::AdamWOptions o;
  Values m, v, vmax;
  int64_t t = 0;

  void step(Values& theta, const Values& grad) {
    if (t == 0) {
      m.assign(theta.size(), 0.0);
      v.assign(theta.size(), 0.0);
      vmax.assign(theta.size(), 0.0);
    }
    ++t;
    const auto [b1, b2] = o.betas;
    for (size_t k = 0; k < theta.size(); ++k) {
      const double g = o.maximize ? -grad[k] : grad[k];
      theta[k] *= 1 - o.lr * o.weight_decay;
      m[k] = b1 * m[k] + (1 - b1) * g;
      v[k] = b2 * v[k] + (1 - b2) * g * g;
      vmax[k] = std::max(vmax[k], v[k]);
      const double m_hat = m[k] / (1 - std::pow(b1, static_cast<double>(t)));
      const double v_hat = (o.amsgrad ? vmax[k] : v[k]) / (1 - std::pow(b2, static_cast<double>(t)));
      theta[k] -= o.lr * m_hat / (std::sqrt(v_hat) + o.eps);
    }
  }
};

inline ts::Tensor make(const Values& values, ts::DType dtype) {
  return ts::from_values(values, {static_cast<int64_t>(values.size())}, dtype);
}

// Relative tolerance for comparing with a double oracle: float32 rounds each op at ~6e-8.
inline double tolerance(ts::DType dtype) { return dtype == ts::kFloat32 ? 2e-6 : 1e-12; }

inline void check_close(const ts::Tensor& actual, const Values& expected, ts::DType dtype,
                        const std::string& what = "") {
  REQUIRE(actual.dtype() == dtype);
  const Values got = actual.to_vector<double>();
  REQUIRE(got.size() == expected.size());
  for (size_t k = 0; k < expected.size(); ++k)
    CHECK_MESSAGE(got[k] == doctest::Approx(expected[k]).epsilon(tolerance(dtype)), what << " index " << k);
}

// A local tensor over ranks 0..n-1 whose shard r holds values[r] (shards may differ in length).
inline ts::Tensor make_local(const std::vector<Values>& values, ts::DType dtype) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (size_t r = 0; r < values.size(); ++r) shards.emplace_back(static_cast<int>(r), make(values[r], dtype));
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}

}  // namespace optim_test

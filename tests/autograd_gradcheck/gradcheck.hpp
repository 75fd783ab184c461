// Gradient checks: autograd's gradients of loss = sum(f(inputs) * w), against central finite
// differences of the same loss. The weights w are fixed, distinct and of f's output shape, so every
// output element counts differently. The oracle never calls backward: it perturbs one input element
// at a time (read with to_vector, rebuilt with from_values / local_tensor), runs f without
// recording, and forms the loss with plain double loops.
//
// Local tensors: loss is one value per rank, and autograd's seed is 1 on every rank, so
//  - a local input's gradient, shard r element j, is d(sum over ranks s of loss_s) / d x_r[j];
//  - a plain input used with local ones gets a local gradient whose shard r is rank r's own
//    contribution, d loss_r / d x[j].
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace gc {

namespace ts = tessera;

using Values = std::vector<double>;
using Fn = std::function<ts::Tensor(const std::vector<ts::Tensor>&)>;

struct Options {
  double eps = 1e-6;
  double rtol = 1e-6;
  double atol = 1e-7;
};

// Options for functions that pass through float32: a larger step, a looser tolerance.
inline Options float32_options() { return {.eps = 1e-3, .rtol = 2e-3, .atol = 1e-4}; }

inline int64_t count(const ts::Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Distinct pseudo-random values in [lo, hi) (distinct with probability 1; seeded, so repeatable).
inline Values uniform(int64_t n, uint64_t seed, double lo, double hi) {
  std::mt19937_64 gen(seed * 7919 + 17);
  Values v(static_cast<size_t>(n));
  for (double& x : v) x = lo + (hi - lo) * (static_cast<double>(gen() >> 11) / 9007199254740992.0);
  return v;
}

// Distinct values with magnitude in [0.3, 1.8) and random sign: away from the kinks of abs/relu.
inline Values signed_away_from_zero(int64_t n, uint64_t seed) {
  Values mag = uniform(n, seed, 0.3, 1.8), sign = uniform(n, seed + 1000, 0, 1);
  for (size_t i = 0; i < mag.size(); ++i)
    if (sign[i] < 0.5) mag[i] = -mag[i];
  return mag;
}

inline ts::Tensor dense(const Values& v, const ts::Shape& shape, ts::DType dtype = ts::kFloat64) {
  return ts::from_values(v, shape, dtype);
}

// A float64 tensor of `shape` with distinct values in [lo, hi).
inline ts::Tensor rand_in(const ts::Shape& shape, uint64_t seed, double lo = -2, double hi = 2) {
  return dense(uniform(count(shape), seed, lo, hi), shape);
}
// A float64 tensor of `shape` with distinct values away from zero.
inline ts::Tensor rand_nz(const ts::Shape& shape, uint64_t seed) {
  return dense(signed_away_from_zero(count(shape), seed), shape);
}

// A local tensor over ranks 0..n-1 from per-rank dense tensors.
inline ts::Tensor local(const std::vector<ts::Tensor>& shards) {
  ts::RankMap<ts::Tensor> map;
  for (size_t r = 0; r < shards.size(); ++r) map.set(static_cast<int>(r), shards[r]);
  return ts::local_tensor(std::move(map));
}
// A local tensor over ranks 0..n-1 with per-rank shapes, distinct values per rank.
inline ts::Tensor local_rand(const std::vector<ts::Shape>& shapes, uint64_t seed, double lo = -2,
                             double hi = 2) {
  std::vector<ts::Tensor> shards;
  for (size_t r = 0; r < shapes.size(); ++r)
    shards.push_back(rand_in(shapes[r], seed + 101 * (r + 1), lo, hi));
  return local(shards);
}
inline ts::Tensor local_nz(const std::vector<ts::Shape>& shapes, uint64_t seed) {
  std::vector<ts::Tensor> shards;
  for (size_t r = 0; r < shapes.size(); ++r) shards.push_back(rand_nz(shapes[r], seed + 101 * (r + 1)));
  return local(shards);
}

// A tensor's values, shard by shard (one entry with rank -1 for a dense tensor).
struct Flat {
  bool is_local = false;
  ts::DType dtype = ts::kFloat64;
  std::vector<int> ranks;
  std::vector<ts::Shape> shapes;
  std::vector<Values> values;

  size_t find(int rank) const {
    for (size_t k = 0; k < ranks.size(); ++k)
      if (ranks[k] == rank) return k;
    return ranks.size();
  }
};

inline Flat flatten(const ts::Tensor& t) {
  Flat f;
  f.dtype = t.dtype();
  f.is_local = t.is_local();
  if (!t.is_local()) {
    f.ranks.push_back(-1);
    f.shapes.push_back(t.sizes());
    f.values.push_back(t.to_vector<double>());
    return f;
  }
  for (const auto& [rank, shard] : t.shards()) {
    f.ranks.push_back(rank);
    f.shapes.push_back(shard.sizes());
    f.values.push_back(shard.to_vector<double>());
  }
  return f;
}

inline ts::Tensor build(const Flat& f) {
  if (!f.is_local) return ts::from_values(f.values[0], f.shapes[0], f.dtype);
  ts::RankMap<ts::Tensor> map;
  for (size_t k = 0; k < f.ranks.size(); ++k)
    map.set(f.ranks[k], ts::from_values(f.values[k], f.shapes[k], f.dtype));
  return ts::local_tensor(std::move(map));
}

inline std::string shape_string(const ts::Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? "," : "") << s[i];
  os << "]";
  return os.str();
}

// Whether `got` is within tolerance of `expected` (an infinite or NaN expectation must match exactly).
inline bool close(double got, double expected, double rtol, double atol) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  return std::isfinite(got) && std::abs(got - expected) <= atol + rtol * std::abs(expected);
}

// Checks `got` (a gradient) against `expected`, shard by shard: same layout (local or dense), same
// ranks, same shapes, close values. `what` names the case in failure messages.
inline void check_flat(const ts::Tensor& got_tensor, const Flat& expected, const std::string& what,
                       double rtol, double atol) {
  REQUIRE_MESSAGE(got_tensor.defined(), what << ": gradient is undefined");
  const Flat got = flatten(got_tensor);
  REQUIRE_MESSAGE(got.is_local == expected.is_local,
                  what << ": gradient is " << (got.is_local ? "local" : "dense") << ", expected "
                       << (expected.is_local ? "local" : "dense"));
  REQUIRE_MESSAGE(got.ranks == expected.ranks, what << ": gradient ranks differ");
  for (size_t k = 0; k < got.ranks.size(); ++k) {
    REQUIRE_MESSAGE(got.shapes[k] == expected.shapes[k],
                    what << " rank " << got.ranks[k] << ": gradient shape " << shape_string(got.shapes[k])
                         << ", expected " << shape_string(expected.shapes[k]));
    int failures = 0;
    for (size_t j = 0; j < got.values[k].size(); ++j) {
      const double g = got.values[k][j], e = expected.values[k][j];
      if (close(g, e, rtol, atol)) continue;
      if (++failures <= 4)
        CHECK_MESSAGE(false, what << " rank " << got.ranks[k] << " element " << j << ": got " << g
                                  << ", expected " << e);
    }
    CHECK_MESSAGE(failures == 0, what << " rank " << got.ranks[k] << ": " << failures << " of "
                                      << got.values[k].size() << " gradient elements wrong");
  }
}

// loss per rank (one entry, rank -1, for a dense output) = sum over elements of out * w.
inline std::vector<double> weighted_sums(const ts::Tensor& out, const Flat& w) {
  const Flat o = flatten(out);
  REQUIRE(o.is_local == w.is_local);
  REQUIRE(o.ranks == w.ranks);
  std::vector<double> sums;
  for (size_t k = 0; k < o.ranks.size(); ++k) {
    REQUIRE(o.shapes[k] == w.shapes[k]);
    double s = 0;
    for (size_t j = 0; j < o.values[k].size(); ++j) s += o.values[k][j] * w.values[k][j];
    sums.push_back(s);
  }
  return sums;
}

// Fixed, distinct weights shaped like `out` (per rank for a local output).
inline Flat weights_like(const ts::Tensor& out) {
  Flat w = flatten(out);
  w.dtype = ts::kFloat64;
  for (size_t k = 0; k < w.values.size(); ++k) {
    const Values mag = uniform(static_cast<int64_t>(w.values[k].size()), 4242 + 31 * k, 0.25, 1.25);
    for (size_t j = 0; j < mag.size(); ++j) w.values[k][j] = (j % 3 == 1) ? -mag[j] : mag[j];
  }
  return w;
}

// Finite-difference gradients of loss w.r.t. every input (see the file comment for local tensors).
inline std::vector<Flat> numeric_grads(const Fn& f, const std::vector<Flat>& inputs, const Flat& w,
                                       bool local_output, double eps) {
  ts::NoGradGuard no_grad;
  std::vector<ts::Tensor> args;
  for (const Flat& in : inputs) args.push_back(build(in));
  std::vector<Flat> grads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Flat g;
    g.dtype = inputs[i].dtype;
    // A plain input used by a local computation: each rank's contribution, a local gradient.
    const bool spread = local_output && !inputs[i].is_local;
    g.is_local = inputs[i].is_local || spread;
    if (spread) {
      g.ranks = w.ranks;
      g.shapes.assign(w.ranks.size(), inputs[i].shapes[0]);
      g.values.assign(w.ranks.size(), Values(inputs[i].values[0].size()));
    } else {
      g.ranks = inputs[i].ranks;
      g.shapes = inputs[i].shapes;
      for (const Values& v : inputs[i].values) g.values.emplace_back(v.size());
    }
    Flat perturbed = inputs[i];
    for (size_t k = 0; k < inputs[i].values.size(); ++k) {
      for (size_t j = 0; j < inputs[i].values[k].size(); ++j) {
        const double x = inputs[i].values[k][j];
        perturbed.values[k][j] = x + eps;
        args[i] = build(perturbed);
        const std::vector<double> plus = weighted_sums(f(args), w);
        perturbed.values[k][j] = x - eps;
        args[i] = build(perturbed);
        const std::vector<double> minus = weighted_sums(f(args), w);
        perturbed.values[k][j] = x;
        if (spread) {
          for (size_t r = 0; r < plus.size(); ++r) g.values[r][j] = (plus[r] - minus[r]) / (2 * eps);
        } else {
          double total = 0;
          for (size_t r = 0; r < plus.size(); ++r) total += plus[r] - minus[r];
          g.values[k][j] = total / (2 * eps);
        }
      }
    }
    args[i] = build(inputs[i]);
    grads.push_back(std::move(g));
  }
  return grads;
}

// The check: autograd::grad of sum(f(inputs) * w) against finite differences, for every input;
// the gradient's dtype must be the input's; autograd::grad of f(inputs) seeded with w must agree;
// then backward() on the same loss must accumulate the same values into each leaf's grad().
// `inputs` are values only (they need not and should not require grad); each is copied into a
// fresh leaf.
inline void gradcheck(const std::string& name, const std::vector<ts::Tensor>& inputs, const Fn& f,
                      Options options = {}) {
  INFO("gradcheck: " << name);
  std::vector<Flat> flats;
  for (const ts::Tensor& in : inputs) flats.push_back(flatten(in));

  std::vector<ts::Tensor> leaves;
  for (const Flat& fl : flats) {
    ts::Tensor leaf = build(fl);
    leaf.set_requires_grad(true);
    leaves.push_back(leaf);
  }
  const ts::Tensor out = f(leaves);
  REQUIRE_MESSAGE(out.requires_grad(), name << ": the output does not require grad");
  const Flat w = weights_like(out);
  const ts::Tensor loss = ts::sum(out * build(w));
  const std::vector<ts::Tensor> analytic = ts::autograd::grad({loss}, leaves, {}, /*retain_graph=*/true);
  REQUIRE(analytic.size() == leaves.size());

  const std::vector<Flat> numeric = numeric_grads(f, flats, w, out.is_local(), options.eps);
  for (size_t i = 0; i < leaves.size(); ++i) {
    const std::string input = name + " input " + std::to_string(i);
    CHECK_MESSAGE(!leaves[i].grad().defined(), input << ": autograd::grad touched grad()");
    check_flat(analytic[i], numeric[i], input, options.rtol, options.atol);
    CHECK_MESSAGE(analytic[i].dtype() == leaves[i].dtype(),
                  input << ": gradient dtype " << ts::dtype_name(analytic[i].dtype()) << ", expected "
                        << ts::dtype_name(leaves[i].dtype()));
  }

  // Seeding the output itself with w (a non-scalar backward) gives the same gradients.
  const std::vector<ts::Tensor> seeded = ts::autograd::grad({out}, leaves, {build(w)}, /*retain_graph=*/true);
  for (size_t i = 0; i < leaves.size(); ++i)
    check_flat(seeded[i], flatten(analytic[i]), name + " input " + std::to_string(i) + " seeded with w",
               1e-12, 1e-14);

  loss.backward();
  for (size_t i = 0; i < leaves.size(); ++i)
    check_flat(leaves[i].grad(), flatten(analytic[i]),
               name + " input " + std::to_string(i) + " backward() vs grad", 0, 0);
}

// Checks a gradient against hand-written values (for points where finite differences are not
// valid, such as ties), exactly up to `tol`.
inline void check_grad(const ts::Tensor& grad, const ts::Shape& shape, const Values& expected,
                       const std::string& what, double tol = 1e-12) {
  Flat e;
  e.ranks = {-1};
  e.shapes = {shape};
  e.values = {expected};
  REQUIRE(static_cast<int64_t>(expected.size()) == count(shape));
  check_flat(grad, e, what, 0, tol);
}

// The same, for a local gradient: per rank shapes and values.
inline void check_local_grad(const ts::Tensor& grad, const std::vector<ts::Shape>& shapes,
                             const std::vector<Values>& expected, const std::string& what,
                             double tol = 1e-12) {
  Flat e;
  e.is_local = true;
  for (size_t r = 0; r < shapes.size(); ++r) {
    e.ranks.push_back(static_cast<int>(r));
    REQUIRE(static_cast<int64_t>(expected[r].size()) == count(shapes[r]));
  }
  e.shapes = shapes;
  e.values = expected;
  check_flat(grad, e, what, 0, tol);
}

}  // namespace gc

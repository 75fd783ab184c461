// The gradients of a 2-layer MLP written out by hand (an oracle independent of autograd):
//   h = relu(x W1), y = h W2, loss = sum(y * C).
#pragma once

#include <cstdint>
#include <vector>

namespace oracle {

struct Mlp {
  int64_t n, d, k, o;  // x is n x d, W1 d x k, W2 k x o, C n x o
  std::vector<double> x, w1, w2, c;
};

struct MlpGrads {
  std::vector<double> dx, dw1, dw2;
  double loss = 0;
};

inline MlpGrads mlp_grads(const Mlp& m) {
  auto at = [](const std::vector<double>& v, int64_t cols, int64_t i, int64_t j) {
    return v[static_cast<size_t>(i * cols + j)];
  };
  std::vector<double> pre(static_cast<size_t>(m.n * m.k), 0.0), h(pre.size(), 0.0), dh(pre.size(), 0.0);
  for (int64_t i = 0; i < m.n; ++i)
    for (int64_t j = 0; j < m.k; ++j) {
      double s = 0;
      for (int64_t t = 0; t < m.d; ++t) s += at(m.x, m.d, i, t) * at(m.w1, m.k, t, j);
      pre[static_cast<size_t>(i * m.k + j)] = s;
      h[static_cast<size_t>(i * m.k + j)] = s > 0 ? s : 0;
    }
  MlpGrads g;
  g.dx.assign(static_cast<size_t>(m.n * m.d), 0.0);
  g.dw1.assign(static_cast<size_t>(m.d * m.k), 0.0);
  g.dw2.assign(static_cast<size_t>(m.k * m.o), 0.0);
  for (int64_t i = 0; i < m.n; ++i)
    for (int64_t p = 0; p < m.o; ++p) {
      double y = 0;
      for (int64_t j = 0; j < m.k; ++j) y += at(h, m.k, i, j) * at(m.w2, m.o, j, p);
      g.loss += y * at(m.c, m.o, i, p);
    }
  // dL/dy = C; dW2 = h^T C; dh = C W2^T masked by pre > 0; dW1 = x^T dh; dx = dh W1^T.
  for (int64_t j = 0; j < m.k; ++j)
    for (int64_t p = 0; p < m.o; ++p)
      for (int64_t i = 0; i < m.n; ++i)
        g.dw2[static_cast<size_t>(j * m.o + p)] += at(h, m.k, i, j) * at(m.c, m.o, i, p);
  for (int64_t i = 0; i < m.n; ++i)
    for (int64_t j = 0; j < m.k; ++j) {
      if (at(pre, m.k, i, j) <= 0) continue;
      double s = 0;
      for (int64_t p = 0; p < m.o; ++p) s += at(m.c, m.o, i, p) * at(m.w2, m.o, j, p);
      dh[static_cast<size_t>(i * m.k + j)] = s;
    }
  for (int64_t t = 0; t < m.d; ++t)
    for (int64_t j = 0; j < m.k; ++j)
      for (int64_t i = 0; i < m.n; ++i)
        g.dw1[static_cast<size_t>(t * m.k + j)] += at(m.x, m.d, i, t) * at(dh, m.k, i, j);
  for (int64_t i = 0; i < m.n; ++i)
    for (int64_t t = 0; t < m.d; ++t)
      for (int64_t j = 0; j < m.k; ++j)
        g.dx[static_cast<size_t>(i * m.d + t)] += at(dh, m.k, i, j) * at(m.w1, m.k, t, j);
  return g;
}

// Distinct values for a tensor of `count` elements (no two equal, signs mixed, none zero).
inline std::vector<double> distinct(int64_t count, double seed) {
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] =
        (((i * 37 + 11) % 23) - 11.5) * 0.05 + seed * 0.001 * static_cast<double>(i + 1);
  return v;
}

inline Mlp make_mlp(int64_t n, int64_t d, int64_t k, int64_t o) {
  return Mlp{n, d, k, o, distinct(n * d, 1), distinct(d * k, 2), distinct(k * o, 3), distinct(n * o, 4)};
}

}  // namespace oracle

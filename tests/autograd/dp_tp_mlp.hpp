// The MLP of mlp_oracle.hpp laid out for DP x TP on a (dp, tp) mesh: x and C split by rows over
// dp, w1 column-parallel and w2 row-parallel over tp, both weights requiring grad.
#pragma once

#include <tessera/tessera.hpp>

#include <utility>
#include <vector>

#include "mlp_oracle.hpp"

namespace oracle {

struct DpTpMlp {
  tessera::DTensor x, c, w1, w2;

  // loss = sum(relu(x w1) w2 * C), the partial tp sums reduced first.
  tessera::DTensor loss() const {
    namespace ts = tessera;
    const ts::DTensor y =
        ts::matmul(ts::relu(ts::matmul(x, w1)), w2).redistribute({ts::Shard(0), ts::Replicate()});
    return ts::sum(ts::mul(y, c));
  }
};

// The oracle's values as a float64 tensor of the given shape.
inline tessera::Tensor dense(const std::vector<double>& values, const tessera::Shape& shape) {
  return tessera::from_values(values, shape, tessera::kFloat64);
}

inline DpTpMlp distribute_dp_tp(const Mlp& m, const tessera::DeviceMesh& mesh) {
  namespace ts = tessera;
  return DpTpMlp{ts::distribute_tensor(dense(m.x, {m.n, m.d}), mesh, {ts::Shard(0), ts::Replicate()}),
                 ts::distribute_tensor(dense(m.c, {m.n, m.o}), mesh, {ts::Shard(0), ts::Replicate()}),
                 ts::distribute_tensor(dense(m.w1, {m.d, m.k}), mesh, {ts::Replicate(), ts::Shard(1)})
                     .set_requires_grad(true),
                 ts::distribute_tensor(dense(m.w2, {m.k, m.o}), mesh, {ts::Replicate(), ts::Shard(0)})
                     .set_requires_grad(true)};
}

}  // namespace oracle

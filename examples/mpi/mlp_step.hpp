// The DP + TP MLP step of examples/mpi, shared with bench/mpi_allreduce_bench.cpp: on a
// (dp=2, tp=4) mesh over the calling thread's mode, batch sharded over dp, w1 column-parallel and
// w2 row-parallel over tp (Megatron); returns the full output on every rank.
#pragma once

#include "tessera/tessera.hpp"

namespace mpi_example {

namespace ts = tessera;

struct MlpInputs {
  ts::Tensor x, w1, w2;  // plain tensors, the same values on every process
};

inline MlpInputs mlp_inputs(int64_t batch = 16, int64_t width = 32, int64_t hidden = 64) {
  ts::DisabledLocalMode plain;
  ts::Generator generator(2026);
  return {ts::randn({batch, width}, generator), ts::randn({width, hidden}, generator) * 0.2f,
          ts::randn({hidden, width}, generator) * 0.2f};
}

inline ts::Tensor mlp_step(const MlpInputs& in) {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 4}, {"dp", "tp"});
  const ts::DTensor dx = ts::distribute_tensor(in.x, mesh, {ts::Shard(0), ts::Replicate()});
  const ts::DTensor dw1 = ts::distribute_tensor(in.w1, mesh, {ts::Replicate(), ts::Shard(1)});
  const ts::DTensor dw2 = ts::distribute_tensor(in.w2, mesh, {ts::Replicate(), ts::Shard(0)});
  const ts::DTensor hidden = ts::relu(ts::matmul(dx, dw1));
  const ts::DTensor out = ts::matmul(hidden, dw2);  // Partial over tp
  return out.full_tensor();                         // all_reduce over tp, gather over dp
}

}  // namespace mpi_example

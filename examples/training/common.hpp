// Helpers the scenarios share (not part of training.hpp's interface).
#pragma once

#include <memory>
#include <type_traits>
#include <vector>

#include "training.hpp"

namespace training::detail {

// A local tensor holding a copy of `t` on every rank of `ranks` (a replica per rank).
ts::Tensor on_every_rank(const ts::Tensor& t, const ts::RankSet& ranks);
// A local tensor whose rank r holds the next rows_per_rank[r] rows of `t` (ranks 0, 1, ...).
ts::Tensor split_rows(const ts::Tensor& t, const std::vector<int64_t>& rows_per_rank);
// rows split into `parts` blocks as torch.chunk does (the last ones smaller or empty).
std::vector<int64_t> chunk_rows(int64_t rows, int64_t parts);
// The global value of a DTensor as one plain tensor (every rank's full_tensor is the same).
ts::Tensor global(const ts::DTensor& t);
// The value every rank of a local tensor holds; an Error when the replicas differ.
ts::Tensor same_on_every_rank(const ts::Tensor& t);

// The model and its loss, written once for plain tensors, local tensors and DTensors.
template <class T>
T mse(const T& y, const T& target, int64_t count) {
  const T d = y - target;
  return ts::sum(d * d) / static_cast<double>(count);
}

// Runs f() with a CommCounter and stores what it counted in `entries`; returns f()'s result.
template <class F>
auto counted(std::vector<ts::CommCounter::Entry>& entries, F&& f) {
  ts::CommCounter counter;
  if constexpr (std::is_void_v<decltype(f())>) {
    f();
    entries = counter.entries();
  } else {
    auto result = f();
    entries = counter.entries();
    return result;
  }
}

template <class P>
std::unique_ptr<ts::optim::Optimizer> make_optimizer(const std::vector<P>& params,
                                                     const OptimizerOptions& options) {
  return std::visit(
      [&](const auto& o) -> std::unique_ptr<ts::optim::Optimizer> {
        if constexpr (std::is_same_v<std::decay_t<decltype(o)>, ts::optim::SGDOptions>)
          return std::make_unique<ts::optim::SGD>(params, o);
        else
          return std::make_unique<ts::optim::AdamW>(params, o);
      },
      options);
}

}  // namespace training::detail

// Whether a tensor holds values or only shapes (a shapes-only backend such as meta). On a
// shapes-only backend, what per-rank code makes from its inputs is fixed by their shapes, so ranks
// whose inputs have the same shapes may share one result instead of each making its own
// (detail::MadeOnce, ranks/made_once.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "dispatch/backend.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/tensor.hpp"

namespace tessera::parallel {

// A local tensor's shards (or a plain tensor) on a shapes-only backend.
inline bool shapes_only(const Tensor& t) {
  const Tensor& any = t.is_local() ? t.shards().begin()->second : t;
  return any.impl()->backend().shapes_only();
}

// Appends a shape to a key: its rank, then its sizes.
inline void append_shape(std::vector<int64_t>& key, const Shape& shape) {
  key.push_back(static_cast<int64_t>(shape.size()));
  key.insert(key.end(), shape.begin(), shape.end());
}

}  // namespace tessera::parallel

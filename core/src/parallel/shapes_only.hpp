// Whether a tensor holds values or only shapes (a shapes-only backend such as meta). On a
// shapes-only backend, what per-rank code makes from its inputs is fixed by their shapes, so ranks
// whose inputs have the same shapes may share one result instead of each making its own.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "dispatch/backend.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/detail/spmd.hpp"
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

// Per-rank results made once per key and handed to the other ranks with that key as copy-on-write
// replicas, when sharing is on (shapes-only inputs, with every shape the result depends on in the
// key); when it is off, every rank makes its own.
template <class Result>
class MadeOncePerKey {
 public:
  explicit MadeOncePerKey(bool share) : share_(share) {}

  template <class Make>
  Result get(std::vector<int64_t> key, Make&& make) {
    if (!share_) return make();
    if (auto it = made_.find(key); it != made_.end()) return replica(it->second);
    Result made = make();
    made_.emplace(std::move(key), made);
    return made;
  }

 private:
  static Tensor replica(const Tensor& t) { return detail::replica_of(t); }
  static std::vector<Tensor> replica(const std::vector<Tensor>& ts) {
    std::vector<Tensor> out;
    out.reserve(ts.size());
    for (const Tensor& t : ts) out.push_back(detail::replica_of(t));
    return out;
  }

  bool share_;
  std::map<std::vector<int64_t>, Result> made_;
};

}  // namespace tessera::parallel

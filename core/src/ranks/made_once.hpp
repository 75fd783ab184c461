// Per-rank results made once per key: the first rank with a key makes its result, the other ranks
// with that key get copy-on-write replicas of it (detail::replica_of: on a shapes-only backend,
// while no MemoryCounter watches, the result itself). A key must hold everything the result depends
// on: the shapes (and, where values matter, the identity of the bytes: detail::append_shard_identity)
// of what it is made from, and every per-rank number used in making it.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "tessera/detail/spmd.hpp"
#include "tessera/tensor.hpp"

namespace tessera::detail {

template <class Result = Tensor>
class MadeOnce {
 public:
  // share false: every rank makes its own (get calls make every time).
  explicit MadeOnce(bool share = true) : share_(share) {}
  MadeOnce(const MadeOnce&) = delete;  // last_ points into made_
  MadeOnce& operator=(const MadeOnce&) = delete;

  template <class Make>
  Result get(std::vector<int64_t> key, Make&& make) {
    if (!share_) return make();
    // Ranks come in order and a key's ranks are usually neighbours: the last key is checked first,
    // without a search.
    if (last_ != made_.end() && last_->first == key) return replica(last_->second);
    if (auto it = made_.find(key); it != made_.end()) {
      last_ = it;
      return replica(it->second);
    }
    Result result = make();
    last_ = made_.emplace(std::move(key), result).first;
    return result;
  }

 private:
  static Tensor replica(const Tensor& t) { return replica_of(t); }
  static std::vector<Tensor> replica(const std::vector<Tensor>& ts) {
    std::vector<Tensor> out;
    out.reserve(ts.size());
    for (const Tensor& t : ts) out.push_back(replica_of(t));
    return out;
  }

  bool share_;
  std::map<std::vector<int64_t>, Result> made_;
  typename std::map<std::vector<int64_t>, Result>::iterator last_ = made_.end();
};

}  // namespace tessera::detail

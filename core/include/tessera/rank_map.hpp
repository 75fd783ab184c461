// RankSet and RankMap: the core containers of the simulator.
//
// A RankMap is an ordered map rank -> value. A local tensor is a RankMap of dense tensors, a local
// int a RankMap of int64. Both are small (one entry per simulated rank) and read far more often
// than written, so they are sorted vectors rather than trees.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/errors.hpp"

namespace tessera {

// An ordered set of ranks.
class RankSet {
 public:
  RankSet() = default;
  RankSet(std::initializer_list<int> ranks) : ranks_(ranks) { normalise(); }
  explicit RankSet(std::vector<int> ranks) : ranks_(std::move(ranks)) { normalise(); }
  // Ranks 0..n-1.
  static RankSet range(int n) {
    if (n < 0)
      throw Error("RankSet::range: the number of ranks must be non-negative, got " + std::to_string(n));
    std::vector<int> ranks(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) ranks[static_cast<size_t>(r)] = r;
    return RankSet(std::move(ranks));
  }

  size_t size() const { return ranks_.size(); }
  bool empty() const { return ranks_.empty(); }
  bool contains(int rank) const { return std::binary_search(ranks_.begin(), ranks_.end(), rank); }
  int operator[](size_t i) const { return ranks_[i]; }
  auto begin() const { return ranks_.begin(); }
  auto end() const { return ranks_.end(); }
  const std::vector<int>& ranks() const { return ranks_; }
  bool operator==(const RankSet&) const = default;

  std::string to_string() const {
    std::string text = "{";
    for (size_t i = 0; i < ranks_.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks_[i]);
    return text + "}";
  }

 private:
  void normalise() {
    if (!std::is_sorted(ranks_.begin(), ranks_.end())) std::sort(ranks_.begin(), ranks_.end());
    if (std::adjacent_find(ranks_.begin(), ranks_.end()) != ranks_.end())
      throw Error("RankSet: rank " + std::to_string(*std::adjacent_find(ranks_.begin(), ranks_.end())) +
                  " appears twice");
    if (!ranks_.empty() && ranks_.front() < 0)
      throw Error("RankSet: ranks must be non-negative, got " + std::to_string(ranks_.front()));
  }
  template <class T>
  friend class RankMap;
  // Ranks already sorted and distinct (a RankMap's keys): nothing to check again.
  struct Sorted {};
  RankSet(Sorted, std::vector<int> ranks) : ranks_(std::move(ranks)) {}

  std::vector<int> ranks_;
};

template <class T>
class RankMap {
 public:
  using value_type = std::pair<int, T>;

  RankMap() = default;
  RankMap(std::initializer_list<value_type> entries) : entries_(entries) { normalise(); }
  explicit RankMap(std::vector<value_type> entries) : entries_(std::move(entries)) { normalise(); }
  explicit RankMap(const std::map<int, T>& entries) : entries_(entries.begin(), entries.end()) {
    normalise();
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  bool contains(int rank) const { return find(rank) != entries_.end(); }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }

  const T& at(int rank) const {
    // Ranks 0..n-1, the usual map, hold rank r at position r: a few instructions, inlined where
    // ops and collectives ask for every rank's shard; the search and the error stay out of line.
    // A rank the compiler knows as a constant takes the out-of-line path: GCC 12 otherwise warns
    // (-Warray-bounds) about the read below where a constant rank lies past a map of known size,
    // although the size check excludes that path.
#if defined(__GNUC__) && !defined(__clang__)
    if (__builtin_constant_p(rank)) return searched_at(rank);
#endif
    if (at_own_position(rank)) [[likely]]
      return entries_[static_cast<size_t>(rank)].second;
    return searched_at(rank);
  }
  T& at(int rank) { return const_cast<T&>(std::as_const(*this).at(rank)); }

  // Sets the value of `rank`, adding it when absent.
  void set(int rank, T value) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), rank,
                               [](const value_type& e, int r) { return e.first < r; });
    if (it != entries_.end() && it->first == rank)
      it->second = std::move(value);
    else
      entries_.insert(it, value_type(rank, std::move(value)));
  }

  RankSet ranks() const {
    std::vector<int> ranks;
    ranks.reserve(entries_.size());
    for (const auto& e : entries_) ranks.push_back(e.first);
    return RankSet(RankSet::Sorted{}, std::move(ranks));
  }
  std::map<int, T> to_map() const { return std::map<int, T>(entries_.begin(), entries_.end()); }
  const std::vector<value_type>& entries() const { return entries_; }

 private:
  [[gnu::noinline]] const T& searched_at(int rank) const {
    auto it = find(rank);
    if (it == entries_.end())
      throw Error("rank map has no value for rank " + std::to_string(rank) + " (ranks " +
                  ranks().to_string() + ")");
    return it->second;
  }
  // Ranks 0..n-1, the usual map, hold rank r at position r: no search.
  bool at_own_position(int rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < entries_.size() &&
           entries_[static_cast<size_t>(rank)].first == rank;
  }
  typename std::vector<value_type>::const_iterator find(int rank) const {
    if (at_own_position(rank)) return entries_.begin() + rank;
    auto it = std::lower_bound(entries_.begin(), entries_.end(), rank,
                               [](const value_type& e, int r) { return e.first < r; });
    return it != entries_.end() && it->first == rank ? it : entries_.end();
  }
  void normalise() {
    // Maps are almost always built in rank order; stable_sort would allocate a buffer even then.
    const auto by_rank = [](const value_type& a, const value_type& b) { return a.first < b.first; };
    if (!std::is_sorted(entries_.begin(), entries_.end(), by_rank))
      std::stable_sort(entries_.begin(), entries_.end(), by_rank);
    for (size_t i = 1; i < entries_.size(); ++i)
      if (entries_[i].first == entries_[i - 1].first)
        throw Error("rank map: rank " + std::to_string(entries_[i].first) + " appears twice");
    if (!entries_.empty() && entries_.front().first < 0)
      throw Error("rank map: ranks must be non-negative, got " + std::to_string(entries_.front().first));
  }
  std::vector<value_type> entries_;
};

}  // namespace tessera

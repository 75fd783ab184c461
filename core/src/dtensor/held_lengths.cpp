#include "dtensor/held_lengths.hpp"

#include <algorithm>

namespace tessera::dtensor {

HeldLengths::HeldLengths(int64_t size, int64_t dim, const Placements& placements,
                         const std::vector<int64_t>& mesh_shape, size_t upto)
    : size_(size) {
  int64_t combinations = 1;
  for (size_t i = 0; i < upto; ++i) {
    if (!placements[i].is_shard(dim)) continue;
    shardings_.push_back({i, placements[i], mesh_shape[i], combinations});
    combinations *= mesh_shape[i];
  }
  lengths_.assign(static_cast<size_t>(combinations), -1);
}

int64_t HeldLengths::at(const std::vector<int64_t>& coord) {
  size_t index = 0;
  for (const Sharding& s : shardings_) index += static_cast<size_t>(coord[s.mesh_dim] * s.stride);
  return length_at(index);
}

int64_t HeldLengths::length_at(size_t index) {
  int64_t& known = lengths_[index];
  if (known >= 0) return known;
  // Each mesh dim splits what the earlier ones left (held()); only the lengths matter here.
  int64_t length = size_;
  for (const Sharding& s : shardings_) {
    const auto coordinate = static_cast<size_t>(static_cast<int64_t>(index) / s.stride % s.shards);
    if (&s == &shardings_.front()) {
      if (!first_split_) first_split_ = split_all(s.placement, size_, s.shards);
      length = total_length((*first_split_)[coordinate]);
    } else {
      length = total_length((*split_all(s.placement, length, s.shards))[coordinate]);
    }
  }
  known = length;
  return length;
}

int64_t HeldLengths::widest() {
  int64_t widest = 0;
  for (size_t i = 0; i < lengths_.size(); ++i) widest = std::max(widest, length_at(i));
  return widest;
}

int64_t HeldLengths::narrowest() {
  int64_t narrowest = length_at(0);
  for (size_t i = 1; i < lengths_.size(); ++i) narrowest = std::min(narrowest, length_at(i));
  return narrowest;
}

std::vector<int64_t> HeldLengths::distinct() {
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < lengths_.size(); ++i) lengths.push_back(length_at(i));
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  return lengths;
}

}  // namespace tessera::dtensor

// LocalInt, SymInt and SymShape: integers that may differ per rank.
//
// A LocalInt holds one int64 per rank (PyTorch: LocalIntNode). A SymInt is either a plain int64 or
// a LocalInt; building one from a LocalInt whose values all agree yields the plain integer, so
// arithmetic cannot tell a uniform LocalInt from a constant. Arithmetic follows Python: `/` is
// floor division and `%` takes the sign of the divisor. Comparisons return one bool: `==` is true
// only when true on every rank, `!=` is its negation, and an ordering (<, <=, >, >=) whose answer
// differs between ranks is an error showing the per-rank values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/rank_map.hpp"

namespace tessera {

class LocalInt {
 public:
  LocalInt(std::initializer_list<std::pair<int, int64_t>> values);
  explicit LocalInt(RankMap<int64_t> values);
  explicit LocalInt(const std::map<int, int64_t>& values);

  const RankMap<int64_t>& rank_values() const { return values_; }
  std::map<int, int64_t> values() const { return values_.to_map(); }
  const RankSet& ranks() const { return ranks_; }
  int64_t at(int rank) const { return values_.at(rank); }
  bool is_uniform() const;
  std::string to_string() const;  // "{0: 10, 1: 20}"

 private:
  RankMap<int64_t> values_;
  RankSet ranks_;
};

class SymInt {
 public:
  SymInt() = default;
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  SymInt(T value) : value_(static_cast<int64_t>(value)) {}  // NOLINT: implicit, an int is a SymInt
  SymInt(const LocalInt& value);                            // NOLINT: collapses to a plain int when uniform

  bool is_local() const { return local_ != nullptr; }
  int64_t as_int() const;         // throws when the value differs per rank
  const LocalInt& local() const;  // throws when plain
  std::map<int, int64_t> values() const { return local().values(); }
  // The value on `rank` (a plain value is the same on every rank).
  int64_t at(int rank) const { return local_ ? local_->at(rank) : value_; }
  std::string to_string() const;

 private:
  int64_t value_ = 0;
  std::shared_ptr<const LocalInt> local_;
};

SymInt operator+(const SymInt& a, const SymInt& b);
SymInt operator-(const SymInt& a, const SymInt& b);
SymInt operator*(const SymInt& a, const SymInt& b);
SymInt operator/(const SymInt& a, const SymInt& b);  // floor division, as Python's //
SymInt operator%(const SymInt& a, const SymInt& b);  // sign of the divisor, as Python's %
SymInt operator-(const SymInt& a);
SymInt floordiv(const SymInt& a, const SymInt& b);
SymInt mod(const SymInt& a, const SymInt& b);
SymInt sym_max(const SymInt& a, const SymInt& b);
SymInt sym_min(const SymInt& a, const SymInt& b);
SymInt sym_sum(const std::vector<SymInt>& values);

bool operator==(const SymInt& a, const SymInt& b);
bool operator!=(const SymInt& a, const SymInt& b);
bool operator<(const SymInt& a, const SymInt& b);
bool operator<=(const SymInt& a, const SymInt& b);
bool operator>(const SymInt& a, const SymInt& b);
bool operator>=(const SymInt& a, const SymInt& b);

// A shape whose sizes may differ per rank.
class SymShape {
 public:
  SymShape() = default;
  SymShape(std::initializer_list<SymInt> sizes) : sizes_(sizes) {}
  SymShape(const std::vector<int64_t>& sizes) : sizes_(sizes.begin(), sizes.end()) {}  // NOLINT
  explicit SymShape(std::vector<SymInt> sizes) : sizes_(std::move(sizes)) {}

  size_t size() const { return sizes_.size(); }
  const SymInt& operator[](size_t i) const { return sizes_[i]; }
  auto begin() const { return sizes_.begin(); }
  auto end() const { return sizes_.end(); }
  bool is_local() const;
  std::vector<int64_t> at(int rank) const;  // the shape on `rank`
  std::vector<int64_t> to_shape() const;    // throws when some size differs per rank
  std::string to_string() const;

 private:
  std::vector<SymInt> sizes_;
};

bool operator==(const SymShape& a, const SymShape& b);
inline bool operator==(const SymShape& a, const std::vector<int64_t>& b) { return a == SymShape(b); }

}  // namespace tessera

#include "tessera/sym_int.hpp"

#include <limits>

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera {
namespace {

// Applies `f` rank by rank. Plain operands apply to every rank; two local operands must cover the
// same ranks.
template <class F>
SymInt per_rank(const char* op, const SymInt& a, const SymInt& b, F&& f) {
  if (!a.is_local() && !b.is_local()) return SymInt(f(a.as_int(), b.as_int(), -1));
  if (a.is_local() && b.is_local() && a.local().ranks() != b.local().ranks())
    throw Error(fmt::format("local int {}: rank sets differ: {} and {}", op, a.local().ranks().to_string(),
                            b.local().ranks().to_string()));
  const RankSet& ranks = a.is_local() ? a.local().ranks() : b.local().ranks();
  std::vector<std::pair<int, int64_t>> values;
  for (int r : ranks) values.emplace_back(r, f(a.at(r), b.at(r), r));
  return SymInt(LocalInt(RankMap<int64_t>(std::move(values))));
}

std::string where(int rank) { return rank < 0 ? std::string() : fmt::format(" on rank {}", rank); }

void check_divisor(const char* op, int64_t a, int64_t b, int rank) {
  if (b == 0) throw Error(fmt::format("local int {}: division by zero{} ({} {} 0)", op, where(rank), a, op));
  if (a == std::numeric_limits<int64_t>::min() && b == -1)
    throw Error(fmt::format("local int {}: {} {} -1 overflows int64{}", op, a, op, where(rank)));
}

int64_t floor_div(int64_t a, int64_t b, int rank) {
  check_divisor("//", a, b, rank);
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t python_mod(int64_t a, int64_t b, int rank) {
  check_divisor("%", a, b, rank);
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Integer arithmetic that reports overflow instead of invoking undefined behaviour.
template <class Op>
int64_t checked(const char* op, int64_t a, int64_t b, int rank, Op&& compute) {
  int64_t result;
  if (compute(a, b, &result))
    throw Error(fmt::format("local int {}: {} {} {} overflows int64{}", op, a, op, b, where(rank)));
  return result;
}

// The ordering comparison on every rank; all ranks must agree.
template <class Cmp>
bool ordered(const char* op, const SymInt& a, const SymInt& b, Cmp&& cmp) {
  if (!a.is_local() && !b.is_local()) return cmp(a.as_int(), b.as_int());
  bool first = false;
  bool have_first = false;
  std::string detail;
  bool disagree = false;
  per_rank(op, a, b, [&](int64_t x, int64_t y, int rank) -> int64_t {
    const bool answer = cmp(x, y);
    detail += fmt::format("{}rank {}: {} {} {} is {}", detail.empty() ? "" : "; ", rank, x, op, y, answer);
    if (!have_first)
      first = answer, have_first = true;
    else if (answer != first)
      disagree = true;
    return 0;
  });
  if (disagree)
    throw Error(fmt::format("local int comparison '{}' differs between ranks ({}); compare per rank instead",
                            op, detail));
  return first;
}

}  // namespace

LocalInt::LocalInt(std::initializer_list<std::pair<int, int64_t>> values)
    : LocalInt(RankMap<int64_t>(std::vector<std::pair<int, int64_t>>(values))) {}

LocalInt::LocalInt(const std::map<int, int64_t>& values) : LocalInt(RankMap<int64_t>(values)) {}

LocalInt::LocalInt(RankMap<int64_t> values) : values_(std::move(values)), ranks_(values_.ranks()) {
  if (values_.empty()) throw Error("local int cannot be empty: it needs a value for at least one rank");
}

bool LocalInt::is_uniform() const {
  for (const auto& [rank, value] : values_)
    if (value != values_.begin()->second) return false;
  return true;
}

std::string LocalInt::to_string() const {
  std::string text = "{";
  for (const auto& [rank, value] : values_)
    text += fmt::format("{}{}: {}", text.size() > 1 ? ", " : "", rank, value);
  return text + "}";
}

SymInt::SymInt(const LocalInt& value) {
  if (value.is_uniform())
    value_ = value.rank_values().begin()->second;
  else
    local_ = std::make_shared<const LocalInt>(value);
}

int64_t SymInt::as_int() const {
  if (local_) throw Error("SymInt differs per rank " + local_->to_string() + "; as_int() needs one value");
  return value_;
}

const LocalInt& SymInt::local() const {
  if (!local_) throw Error(fmt::format("SymInt {} is a plain integer, not a local int", value_));
  return *local_;
}

std::string SymInt::to_string() const { return local_ ? local_->to_string() : std::to_string(value_); }

SymInt operator+(const SymInt& a, const SymInt& b) {
  return per_rank("+", a, b, [](int64_t x, int64_t y, int r) {
    return checked("+", x, y, r,
                   [](int64_t p, int64_t q, int64_t* o) { return __builtin_add_overflow(p, q, o); });
  });
}
SymInt operator-(const SymInt& a, const SymInt& b) {
  return per_rank("-", a, b, [](int64_t x, int64_t y, int r) {
    return checked("-", x, y, r,
                   [](int64_t p, int64_t q, int64_t* o) { return __builtin_sub_overflow(p, q, o); });
  });
}
SymInt operator*(const SymInt& a, const SymInt& b) {
  return per_rank("*", a, b, [](int64_t x, int64_t y, int r) {
    return checked("*", x, y, r,
                   [](int64_t p, int64_t q, int64_t* o) { return __builtin_mul_overflow(p, q, o); });
  });
}
SymInt floordiv(const SymInt& a, const SymInt& b) { return per_rank("//", a, b, floor_div); }
SymInt mod(const SymInt& a, const SymInt& b) { return per_rank("%", a, b, python_mod); }
SymInt operator/(const SymInt& a, const SymInt& b) { return floordiv(a, b); }
SymInt operator%(const SymInt& a, const SymInt& b) { return mod(a, b); }
SymInt operator-(const SymInt& a) { return SymInt(0) - a; }
SymInt sym_max(const SymInt& a, const SymInt& b) {
  return per_rank("max", a, b, [](int64_t x, int64_t y, int) { return std::max(x, y); });
}
SymInt sym_min(const SymInt& a, const SymInt& b) {
  return per_rank("min", a, b, [](int64_t x, int64_t y, int) { return std::min(x, y); });
}
SymInt sym_sum(const std::vector<SymInt>& values) {
  SymInt total = 0;
  for (const SymInt& v : values) total = total + v;
  return total;
}

bool operator==(const SymInt& a, const SymInt& b) {
  if (!a.is_local() && !b.is_local()) return a.as_int() == b.as_int();
  bool all_equal = true;
  per_rank("==", a, b, [&](int64_t x, int64_t y, int) -> int64_t {
    all_equal = all_equal && x == y;
    return 0;
  });
  return all_equal;
}
bool operator!=(const SymInt& a, const SymInt& b) { return !(a == b); }
bool operator<(const SymInt& a, const SymInt& b) { return ordered("<", a, b, std::less<>()); }
bool operator<=(const SymInt& a, const SymInt& b) { return ordered("<=", a, b, std::less_equal<>()); }
bool operator>(const SymInt& a, const SymInt& b) { return ordered(">", a, b, std::greater<>()); }
bool operator>=(const SymInt& a, const SymInt& b) { return ordered(">=", a, b, std::greater_equal<>()); }

bool SymShape::is_local() const {
  for (const SymInt& s : sizes_)
    if (s.is_local()) return true;
  return false;
}

std::vector<int64_t> SymShape::at(int rank) const {
  std::vector<int64_t> shape;
  for (const SymInt& s : sizes_) shape.push_back(s.at(rank));
  return shape;
}

std::vector<int64_t> SymShape::to_shape() const {
  std::vector<int64_t> shape;
  for (size_t d = 0; d < sizes_.size(); ++d) {
    if (sizes_[d].is_local())
      throw Error(fmt::format("shape {} differs per rank in dim {} ({}); use the per-rank sizes", to_string(),
                              d, sizes_[d].to_string()));
    shape.push_back(sizes_[d].as_int());
  }
  return shape;
}

std::string SymShape::to_string() const {
  std::string text = "[";
  for (size_t d = 0; d < sizes_.size(); ++d) text += (d ? ", " : "") + sizes_[d].to_string();
  return text + "]";
}

bool operator==(const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t d = 0; d < a.size(); ++d)
    if (a[d] != b[d]) return false;
  return true;
}

}  // namespace tessera

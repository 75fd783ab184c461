// A number passed where a tensor could be: `t + 2`, `full({2}, 1.5)`.
//
// A Scalar may also be a per-rank integer (built from a local SymInt); ops that receive one run
// per rank with that rank's value, like any other local argument.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/sym_int.hpp"

namespace tessera {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v), f_(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)), f_(static_cast<double>(v)) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), i_(0), f_(static_cast<double>(v)) {}
  Scalar(const SymInt& v);  // NOLINT: implicit; per-rank when v is

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ != Kind::Float; }
  bool is_local() const { return local_ != nullptr; }
  // The value on `rank`: itself unless per-rank.
  Scalar at(int rank) const { return local_ ? Scalar(local_->at(rank)) : *this; }
  const LocalInt& local() const;  // throws unless per-rank

  // These throw for a per-rank scalar: there is no single value.
  int64_t to_int() const;
  double to_double() const;
  bool to_bool() const;
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>)
      return to_bool();
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(to_int());
    else
      return static_cast<T>(to_double());
  }

  // The dtype this scalar takes part in promotion as (Python semantics: int -> int64,
  // float -> the default float dtype, bool -> bool).
  DType promotion_dtype() const {
    return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kInt64 : kDefaultFloat;
  }
  std::string to_string() const;

 private:
  void require_single(const char* what) const;

  Kind kind_;
  int64_t i_;
  double f_;
  std::shared_ptr<const LocalInt> local_;
};

}  // namespace tessera

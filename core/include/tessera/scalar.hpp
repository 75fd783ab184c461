// A number passed where a tensor could be: `t + 2`, `full({2}, 1.5)`.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/dtype.hpp"

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

  Kind kind() const { return kind_; }
  bool is_floating() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ != Kind::Float; }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(f_) : i_; }
  double to_double() const { return f_; }
  bool to_bool() const { return kind_ == Kind::Float ? f_ != 0.0 : i_ != 0; }
  template <class T> T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_int());
    else return static_cast<T>(to_double());
  }

  // The dtype this scalar takes part in promotion as (Python semantics: int -> int64,
  // float -> the default float dtype, bool -> bool).
  DType promotion_dtype() const {
    return kind_ == Kind::Bool ? kBool : kind_ == Kind::Int ? kInt64 : kDefaultFloat;
  }
  std::string to_string() const;

 private:
  Kind kind_;
  int64_t i_;
  double f_;
};

}  // namespace tessera

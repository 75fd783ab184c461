#include "tessera/scalar.hpp"

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera {

Scalar::Scalar(const SymInt& v) : kind_(Kind::Int), i_(0), f_(0) {
  if (v.is_local()) {
    local_ = std::make_shared<const LocalInt>(v.local());
  } else {
    i_ = v.as_int();
    f_ = static_cast<double>(i_);
  }
}

const LocalInt& Scalar::local() const {
  if (!local_) throw Error("scalar " + to_string() + " is a single value, not a per-rank value");
  return *local_;
}

void Scalar::require_single(const char* what) const {
  if (local_)
    throw Error(fmt::format("scalar differs per rank {}; {} needs one value", local_->to_string(), what));
}

int64_t Scalar::to_int() const {
  require_single("to_int()");
  if (kind_ != Kind::Float) return i_;
  // Casting NaN or an out-of-range double to int64 is undefined; say so instead.
  if (!(f_ > -9.2233720368547758e18 && f_ < 9.2233720368547758e18))
    throw Error(fmt::format("scalar {} cannot be converted to an integer without overflow", f_));
  return static_cast<int64_t>(f_);
}
double Scalar::to_double() const {
  require_single("to_double()");
  return f_;
}
bool Scalar::to_bool() const {
  require_single("to_bool()");
  return kind_ == Kind::Float ? f_ != 0.0 : i_ != 0;
}

std::string Scalar::to_string() const {
  if (local_) return local_->to_string();
  switch (kind_) {
    case Kind::Bool:
      return i_ != 0 ? "true" : "false";
    case Kind::Int:
      return std::to_string(i_);
    case Kind::Float:
      return fmt::format("{}", f_);
  }
  return {};
}

}  // namespace tessera

#include "tessera/scalar.hpp"

#include <fmt/format.h>

namespace tessera {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool: return i_ != 0 ? "true" : "false";
    case Kind::Int: return std::to_string(i_);
    case Kind::Float: return fmt::format("{}", f_);
  }
  return {};
}

}  // namespace tessera

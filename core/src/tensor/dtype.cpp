#include "tessera/dtype.hpp"

#include <algorithm>

namespace tessera {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "unknown";
}

size_t itemsize(DType dtype) {
  switch (dtype) {
    case DType::Bool: return 1;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Float32: return 4;
    case DType::Float64: return 8;
  }
  return 0;
}

// For these five types the lattice is a chain, so promotion is the larger of the two.
DType promote_types(DType a, DType b) { return std::max(a, b); }

}  // namespace tessera

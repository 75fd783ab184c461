#include "tessera/dtype.hpp"

namespace tessera {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return "bool";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::BFloat16:
      return "bfloat16";
    case DType::Float16:
      return "float16";
    case DType::Int8:
      return "int8";
    case DType::UInt8:
      return "uint8";
  }
  return "unknown";
}

size_t itemsize(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return 1;
    case DType::Int32:
      return 4;
    case DType::Int64:
      return 8;
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
    case DType::BFloat16:
    case DType::Float16:
      return 2;
    case DType::Int8:
    case DType::UInt8:
      return 1;
  }
  return 0;
}

namespace {

// A dtype's place in its category's chain; types of one rank (int8/uint8, bfloat16/float16) hold
// neither the other's values.
int rank_in_category(DType d) {
  switch (d) {
    case DType::Bool:
      return 0;
    case DType::Int8:
    case DType::UInt8:
      return 1;
    case DType::Int32:
      return 2;
    case DType::Int64:
      return 3;
    case DType::BFloat16:
    case DType::Float16:
      return 1;
    case DType::Float32:
      return 2;
    case DType::Float64:
      return 3;
  }
  return 0;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  const bool a_float = is_floating(a), b_float = is_floating(b);
  if (a_float != b_float) return a_float ? a : b;  // an integer with a float: the float
  const int ra = rank_in_category(a), rb = rank_in_category(b);
  if (ra != rb) return ra > rb ? a : b;
  // Two different types of one rank: int8/uint8 (PyTorch's int16, here int32) or bfloat16/float16.
  return a_float ? DType::Float32 : DType::Int32;
}

}  // namespace tessera

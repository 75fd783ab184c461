// Element types and PyTorch's type-promotion lattice for them.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

// Values are appended, never renumbered: a DType's number indexes kernel tables and is written to
// files by tools.
enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64, BFloat16, Float16, Int8, UInt8 };

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
// Two-byte floats: stored as their bit patterns (sdk/cpp/half_precision.hpp converts them). Arithmetic
// on them computes in float32 and rounds each result once, as PyTorch's CPU kernels do.
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr int kNumDTypes = 9;

std::string_view dtype_name(DType dtype);  // "float32", ...
size_t itemsize(DType dtype);
inline bool is_floating(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::BFloat16 || d == DType::Float16;
}
// bfloat16 and float16: stored in two bytes, computed in float32.
inline bool is_reduced_float(DType d) { return d == DType::BFloat16 || d == DType::Float16; }
inline bool is_integral(DType d, bool include_bool) {
  return d == DType::Int32 || d == DType::Int64 || d == DType::Int8 || d == DType::UInt8 ||
         (include_bool && d == DType::Bool);
}

// torch.promote_types: within a category (bool < integer < floating) the type that holds both
// operands' values, across categories the higher category's type. bfloat16 with float16 is float32
// (neither holds the other). One departure: int8 with uint8 is int16 in PyTorch, and Tessera has no
// int16, so it is int32, the smallest type here that holds both ranges.
DType promote_types(DType a, DType b);

// The dtype of a default-typed floating result (true division, exp of an integer tensor, ...).
inline constexpr DType kDefaultFloat = DType::Float32;

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
  return kBool;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return kInt32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return kInt64;
}
template <>
constexpr DType dtype_of<float>() {
  return kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return kFloat64;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return kInt8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return kUInt8;
}

}  // namespace tessera

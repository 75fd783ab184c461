// Element types and PyTorch's type-promotion lattice for them.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64 };

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr int kNumDTypes = 5;

std::string_view dtype_name(DType dtype);  // "float32", ...
size_t itemsize(DType dtype);
inline bool is_floating(DType d) { return d == DType::Float32 || d == DType::Float64; }
inline bool is_integral(DType d, bool include_bool) {
  return d == DType::Int32 || d == DType::Int64 || (include_bool && d == DType::Bool);
}

// The smallest dtype both values fit: bool < int32 < int64 < float32 < float64 (as torch.promote_types).
DType promote_types(DType a, DType b);

// The dtype of a default-typed floating result (true division, exp of an integer tensor, ...).
inline constexpr DType kDefaultFloat = DType::Float32;

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return kBool; }
template <> constexpr DType dtype_of<int32_t>() { return kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return kInt64; }
template <> constexpr DType dtype_of<float>() { return kFloat32; }
template <> constexpr DType dtype_of<double>() { return kFloat64; }

}  // namespace tessera

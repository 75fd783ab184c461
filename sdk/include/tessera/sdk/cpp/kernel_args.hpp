// Header-only C++ view of a tessera_kernel_call: typed access to tensors and named attributes.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/cpp/half_precision.hpp"

namespace tessera::sdk {

inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};
inline constexpr DLDataType kFloat64{kDLFloat, 64, 1};
inline constexpr DLDataType kInt32{kDLInt, 32, 1};
inline constexpr DLDataType kInt64{kDLInt, 64, 1};
inline constexpr DLDataType kBool{TESSERA_DL_BOOL_CODE, 8, 1};
// SDK 1.6 (kBFloat16 and kFloat16 are in half_precision.hpp, with their storage types).
inline constexpr DLDataType kInt8{kDLInt, 8, 1};
inline constexpr DLDataType kUInt8{kDLUInt, 8, 1};

// The DLDataType of a C++ element type (bool is stored as one byte, 0 or 1).
template <class T>
constexpr DLDataType dtype_of();
template <>
constexpr DLDataType dtype_of<float>() {
  return kFloat32;
}
template <>
constexpr DLDataType dtype_of<double>() {
  return kFloat64;
}
template <>
constexpr DLDataType dtype_of<int32_t>() {
  return kInt32;
}
template <>
constexpr DLDataType dtype_of<int64_t>() {
  return kInt64;
}
template <>
constexpr DLDataType dtype_of<bool>() {
  return kBool;
}
template <>
constexpr DLDataType dtype_of<bfloat16>() {
  return kBFloat16;
}
template <>
constexpr DLDataType dtype_of<float16>() {
  return kFloat16;
}
template <>
constexpr DLDataType dtype_of<int8_t>() {
  return kInt8;
}
template <>
constexpr DLDataType dtype_of<uint8_t>() {
  return kUInt8;
}

inline bool same_dtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// Calls body.template operator()<T>() with T the element type of `dtype` (one of the five above);
// false, calling nothing, for any other dtype. For kernels keyed by one dtype whose output's
// dtype is free, as cast's is:
//   if (!sdk::visit_dtype(out.dtype, [&]<class D>() { convert<S, D>(a, out); })) fail(...);
template <class Body>
bool visit_dtype(DLDataType dtype, Body&& body) {
  if (same_dtype(dtype, kFloat32))
    body.template operator()<float>();
  else if (same_dtype(dtype, kFloat64))
    body.template operator()<double>();
  else if (same_dtype(dtype, kInt32))
    body.template operator()<int32_t>();
  else if (same_dtype(dtype, kInt64))
    body.template operator()<int64_t>();
  else if (same_dtype(dtype, kBool))
    body.template operator()<bool>();
  else
    return false;
  return true;
}

// visit_dtype over the nine dtypes of SDK 1.6: the five above, then bfloat16 and float16 (as
// sdk::bfloat16 and sdk::float16, half_precision.hpp), int8 and uint8. visit_dtype itself keeps to
// the five, so a kernel written for them still compiles unchanged.
template <class Body>
bool visit_any_dtype(DLDataType dtype, Body&& body) {
  if (visit_dtype(dtype, body)) return true;
  if (same_dtype(dtype, kBFloat16))
    body.template operator()<bfloat16>();
  else if (same_dtype(dtype, kFloat16))
    body.template operator()<float16>();
  else if (same_dtype(dtype, kInt8))
    body.template operator()<int8_t>();
  else if (same_dtype(dtype, kUInt8))
    body.template operator()<uint8_t>();
  else
    return false;
  return true;
}

inline int64_t numel(const DLTensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return n;
}

template <class T>
T* data_of(const DLTensor& t) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data) + t.byte_offset);
}

class KernelArgs {
 public:
  explicit KernelArgs(const tessera_kernel_call* call) : call_(call) {}

  size_t num_inputs() const { return call_->num_inputs; }
  size_t num_outputs() const { return call_->num_outputs; }

  // Every kernel asks for its operands several times per call: the checks stay inline and the
  // message of a failure is built out of line.
  const DLTensor& input(size_t i) const {
    if (i >= call_->num_inputs) [[unlikely]]
      missing("input", i, call_->num_inputs);
    return call_->inputs[i];
  }
  const DLTensor& output(size_t i) const {
    if (i >= call_->num_outputs) [[unlikely]]
      missing("output", i, call_->num_outputs);
    return call_->outputs[i];
  }

  const tessera_attr* find(const char* name) const {
    for (size_t i = 0; i < call_->num_attrs; ++i)
      if (std::strcmp(call_->attrs[i]->name, name) == 0) return call_->attrs[i];
    return nullptr;
  }
  bool has(const char* name) const { return find(name) != nullptr; }

  int64_t int_attr(const char* name) const { return require(name, TESSERA_ATTR_INT)->int_value; }
  double float_attr(const char* name) const {
    const tessera_attr* a = require(name, 0);
    if (a->kind == TESSERA_ATTR_INT) return static_cast<double>(a->int_value);
    if (a->kind != TESSERA_ATTR_FLOAT) throw wrong_kind(name);
    return a->float_value;
  }
  std::span<const int64_t> ints_attr(const char* name) const {
    const tessera_attr* a = require(name, TESSERA_ATTR_INTS);
    return {a->ints, a->num_ints};
  }

 private:
  // "input"/"output" `index` asked for, but the call has only `count` of them.
  [[noreturn, gnu::cold, gnu::noinline]] static void missing(const char* what, size_t index, size_t count) {
    throw Error(TESSERA_INVALID_ARGUMENT, std::string("kernel expected ") + what + " " +
                                              std::to_string(index) + " but got " + std::to_string(count) +
                                              " " + what + "s");
  }
  const tessera_attr* require(const char* name, int32_t kind) const {
    const tessera_attr* a = find(name);
    if (a == nullptr)
      throw Error(TESSERA_INVALID_ARGUMENT, std::string("kernel attribute '") + name + "' is missing");
    if (kind != 0 && a->kind != kind) throw wrong_kind(name);
    return a;
  }
  static Error wrong_kind(const char* name) {
    return Error(TESSERA_INVALID_ARGUMENT, std::string("kernel attribute '") + name + "' has the wrong kind");
  }

  const tessera_kernel_call* call_;
};

}  // namespace tessera::sdk

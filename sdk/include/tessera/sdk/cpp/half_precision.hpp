// The two-byte floating types, bfloat16 {kDLBfloat,16} and float16 {kDLFloat,16}: their storage
// types and the conversions between them and float32, for host code and (compiled by nvcc) device
// code alike, so that every backend rounds to the same bits.
//
// float32 -> bfloat16/float16 rounds to nearest, ties to the even significand (IEEE's default);
// values beyond the largest finite value round to infinity as that rule says (float16's largest is
// 65504: 65520 and above become infinity); float16 subnormals are rounded like any other value.
// Every NaN becomes the positive quiet NaN (0x7fc0, 0x7e00): IEEE leaves the payload open, and one
// NaN everywhere gives every backend the same bits, as sdk::hd::settled does for float32 results.
// The conversions back to float32 are exact. Only integer operations are used, so the result does
// not depend on a floating-point environment or a device's flush-to-zero setting.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/sdk/cpp/host_device.hpp"
#include "tessera/sdk/dtype.h"

namespace tessera::sdk {

// Storage of one element: the bit pattern. No arithmetic on purpose: kernels convert to float32,
// compute, and convert back once.
struct bfloat16 {
  uint16_t bits;
};
struct float16 {
  uint16_t bits;
};

inline constexpr DLDataType kBFloat16{kDLBfloat, 16, 1};
inline constexpr DLDataType kFloat16{kDLFloat, 16, 1};

namespace half_precision {

TESSERA_SDK_HOST_DEVICE inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
TESSERA_SDK_HOST_DEVICE inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Round-to-nearest-even of `value` >> `shift` (1 <= shift <= 31), the shifted-out bits deciding.
TESSERA_SDK_HOST_DEVICE inline uint32_t shift_round_even(uint32_t value, uint32_t shift) {
  const uint32_t kept = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  return kept + ((rest > half || (rest == half && (kept & 1u) != 0)) ? 1u : 0u);
}

}  // namespace half_precision

TESSERA_SDK_HOST_DEVICE inline uint16_t bfloat16_bits_from_float(float f) {
  const uint32_t u = half_precision::float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;
  // Adding 0x7fff plus the kept part's lowest bit carries into bit 16 exactly when the dropped half
  // is above one half, or one half with an odd kept part; a carry out of the significand raises
  // the exponent, and out of the largest finite exponent gives infinity, as rounding should.
  const uint32_t lowest_kept = (u >> 16) & 1u;
  return static_cast<uint16_t>((u + 0x7fffu + lowest_kept) >> 16);
}

TESSERA_SDK_HOST_DEVICE inline float float_from_bfloat16_bits(uint16_t h) {
  return half_precision::bits_float(static_cast<uint32_t>(h) << 16);
}

TESSERA_SDK_HOST_DEVICE inline uint16_t float16_bits_from_float(float f) {
  const uint32_t u = half_precision::float_bits(f);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return 0x7e00u;
  // 0x477ff000 is 65520, halfway between 65504 (odd significand) and 2^16: it and all above round
  // to infinity.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {
    // A normal float16 (at least 2^-14): rebias the exponent (127 -> 15) and round off 13 bits; a
    // carry out of the significand correctly raises the exponent.
    const uint32_t rebiased = magnitude - (112u << 23);
    return static_cast<uint16_t>(sign | half_precision::shift_round_even(rebiased, 13));
  }
  // A float16 subnormal (or zero): the value in units of 2^-24 is significand * 2^(exponent - 126).
  const uint32_t exponent = magnitude >> 23;
  const uint32_t shift = 126u - exponent;  // >= 14 here
  // At 25 or more the value is below 2^-25, half the smallest subnormal: it rounds to zero (2^-25
  // itself has shift 24 and ties to the even zero below).
  if (shift >= 25u) return sign;
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | half_precision::shift_round_even(significand, shift));
}

TESSERA_SDK_HOST_DEVICE inline float float_from_float16_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t significand = h & 0x3ffu;
  if (exponent == 0x1fu)  // infinity, or a NaN keeping its payload
    return half_precision::bits_float(sign | 0x7f800000u | (significand << 13));
  if (exponent != 0)
    return half_precision::bits_float(sign | ((exponent + 112u) << 23) | (significand << 13));
  if (significand == 0) return half_precision::bits_float(sign);
  // A subnormal: normalize so the leading one becomes the implicit bit.
  int32_t e = 1;
  while ((significand & 0x400u) == 0) {
    significand <<= 1;
    --e;
  }
  return half_precision::bits_float(sign | (static_cast<uint32_t>(e + 112) << 23) |
                                    ((significand & 0x3ffu) << 13));
}

TESSERA_SDK_HOST_DEVICE inline bfloat16 to_bfloat16(float f) { return bfloat16{bfloat16_bits_from_float(f)}; }
TESSERA_SDK_HOST_DEVICE inline float16 to_float16(float f) { return float16{float16_bits_from_float(f)}; }
TESSERA_SDK_HOST_DEVICE inline float to_float(bfloat16 h) { return float_from_bfloat16_bits(h.bits); }
TESSERA_SDK_HOST_DEVICE inline float to_float(float16 h) { return float_from_float16_bits(h.bits); }

// A float32 rounded to T, for generic code over the two types.
template <class T>
TESSERA_SDK_HOST_DEVICE T from_float(float f);
template <>
TESSERA_SDK_HOST_DEVICE inline bfloat16 from_float<bfloat16>(float f) {
  return to_bfloat16(f);
}
template <>
TESSERA_SDK_HOST_DEVICE inline float16 from_float<float16>(float f) {
  return to_float16(f);
}

template <class T>
inline constexpr bool is_half_precision = false;
template <>
inline constexpr bool is_half_precision<bfloat16> = true;
template <>
inline constexpr bool is_half_precision<float16> = true;

}  // namespace tessera::sdk

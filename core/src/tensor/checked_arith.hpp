// Size, stride and offset arithmetic that reports overflow as a tessera::Error instead of wrapping.
// Every shape computation of the tensor layer goes through these (a shape that does not
// fit is an error, never a wrapped number).
#pragma once

#include <cstdint>

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera::detail {

// `what` is evaluated only on overflow, so callers can name the shape without formatting it on
// every call.
template <class What>
int64_t checked_add(int64_t a, int64_t b, What&& what) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result))
    throw Error(fmt::format("{}: {} + {} overflows int64 (the largest is {})", what(), a, b, INT64_MAX));
  return result;
}

template <class What>
int64_t checked_mul(int64_t a, int64_t b, What&& what) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result))
    throw Error(fmt::format("{}: {} * {} overflows int64 (the largest is {})", what(), a, b, INT64_MAX));
  return result;
}

}  // namespace tessera::detail

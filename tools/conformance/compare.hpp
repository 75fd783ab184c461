// Comparing a result brought back from the tested backend with the oracle's.
#pragma once

#include <optional>
#include <string>

#include <tessera/tensor.hpp>

namespace conformance {

// How results of a check group are compared. Integer and bool results are always exact.
enum class Exactness {
  kExact,         // KERNELS.md defines the value exactly (add, copy, cast, comparisons, ...)
  kElementwise,   // one rounding of a math function: per-dtype tolerance
  kAccumulating,  // sums and products over several terms (reductions, matmul): looser absolute term
};

struct Tolerance {
  bool exact = true;
  double rtol = 0;
  double atol = 0;
};

Tolerance tolerance_for(tessera::DType dtype, Exactness exactness);

// Empty when `got` matches `expected` (same dtype, shape and values under the tolerance; NaN matches
// NaN); otherwise what differs, e.g. "index 34, got 1.0000001, expected 1". Both must be on one
// backend that can read values (the oracle).
std::optional<std::string> compare(const tessera::Tensor& got, const tessera::Tensor& expected,
                                   Exactness exactness);

}  // namespace conformance

// Inputs of the checks: seeded values of each dtype in ranges chosen per op, and the layouts
// (shapes and views) every op is run on. Inputs are made on the oracle as contiguous "base"
// tensors; a layout's view is applied after the move, so the tested backend sees the view itself
// (strides, stride 0, negative strides), not a contiguous copy of it.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <tessera/tensor.hpp>

namespace conformance {

// Value ranges. Integer ranges keep results in range (no signed overflow) and make ties likely
// where ties matter (comparisons, max/argmax).
enum class Domain {
  kWide,         // floats in [-4, 4]; int32 in [-10^6, 10^6]; int64 in [-2^40, 2^40] (past int32, so no int32
                 // shortcut passes)
  kMedium,       // floats in [-4, 4]; integers in [-1000, 1000] (products stay in range)
  kUnit,         // floats in [-1, 1]; integers in [-100, 100] (sums and matmul)
  kTies,         // floats in {-2, -1.5, ..., 2}; integers in [-3, 3]: equal values are common
  kPositive,     // floats in [0.01, 10]; integers in [1, 10]
  kPowBase,      // floats in [0.1, 3]; integers in [-3, 3]
  kPowExponent,  // floats in [-2, 2]; integers in [0, 6]
  kSpecial,      // floats: NaN, +-inf, +-0, huge and fractional values; integers: extremes of the type
};

class ValueSource {
 public:
  ValueSource(uint64_t seed, std::string oracle) : engine_(seed), oracle_(std::move(oracle)) {}

  // A contiguous tensor on the oracle. kSpecial fills with a fixed list (cycled) rather than random values.
  tessera::Tensor make(const tessera::Shape& shape, tessera::DType dtype, Domain domain);
  const std::string& oracle() const { return oracle_; }

 private:
  double draw_float(Domain domain);
  int64_t draw_integer(tessera::DType dtype, Domain domain);

  std::mt19937_64 engine_;
  std::string oracle_;
};

// A shape and a view: `base` is the contiguous shape inputs are made in, `view` makes the tensor the
// op sees (identity for contiguous layouts).
struct Layout {
  std::string name;
  tessera::Shape base;
  std::function<tessera::Tensor(const tessera::Tensor&)> view;
};

// 0-d, 1-element, 0-size, odd sizes, and the non-contiguous views: transposed, sliced with a step,
// broadcast (expand), flipped, permuted. All views of rank 2 have shape [7, 5].
const std::vector<Layout>& all_layouts();
// The contiguous ones only (for in-place and gradient checks).
const std::vector<Layout>& contiguous_layouts();
// "[7, 5]", "[]" for a 0-d shape: how case names show shapes.
std::string shape_text(const tessera::Shape& shape);

// The layout of the given name (an Error naming it when there is none).
const Layout& layout(const std::string& name);

}  // namespace conformance

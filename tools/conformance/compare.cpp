#include "compare.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace conformance {

namespace ts = tessera;

Tolerance tolerance_for(ts::DType dtype, Exactness exactness) {
  if (!ts::is_floating(dtype) || exactness == Exactness::kExact) return {};
  const bool single = dtype == ts::kFloat32;
  // float32 carries ~7 digits; sums over a few dozen terms in another order may differ in the last
  // few, hence the larger absolute term for accumulating ops.
  if (exactness == Exactness::kAccumulating)
    return single ? Tolerance{false, 1e-5, 1e-5} : Tolerance{false, 1e-12, 1e-12};
  return single ? Tolerance{false, 1e-5, 1e-6} : Tolerance{false, 1e-12, 1e-12};
}

namespace {

bool close(double got, double expected, const Tolerance& tolerance) {
  if (std::isnan(got) || std::isnan(expected)) return std::isnan(got) && std::isnan(expected);
  if (tolerance.exact || std::isinf(got) || std::isinf(expected)) return got == expected;
  return std::abs(got - expected) <= tolerance.atol + tolerance.rtol * std::abs(expected);
}

// float32 results travel as double; they are printed as float32 (shortest form that reads back).
template <class T>
std::string value_text(T value, bool single) {
  if constexpr (std::is_floating_point_v<T>) {
    if (single) return fmt::format("{}", static_cast<float>(value));
  }
  return fmt::format("{}", value);
}

template <class T>
std::optional<std::string> first_difference(const std::vector<T>& got, const std::vector<T>& expected,
                                            const Tolerance& tolerance, bool single) {
  for (size_t i = 0; i < got.size(); ++i) {
    bool same = false;
    if constexpr (std::is_floating_point_v<T>)
      same = close(got[i], expected[i], tolerance);
    else
      same = got[i] == expected[i];
    if (!same) {
      std::string text = fmt::format("index {}, got {}, expected {}", i, value_text(got[i], single),
                                     value_text(expected[i], single));
      if (!tolerance.exact) text += fmt::format(" (rtol {}, atol {})", tolerance.rtol, tolerance.atol);
      return text;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> compare(const ts::Tensor& got, const ts::Tensor& expected, Exactness exactness) {
  if (got.dtype() != expected.dtype())
    return fmt::format("dtype {}, expected {}", ts::dtype_name(got.dtype()),
                       ts::dtype_name(expected.dtype()));
  if (got.sizes() != expected.sizes())
    return fmt::format("shape [{}], expected [{}]", fmt::join(got.sizes(), ", "),
                       fmt::join(expected.sizes(), ", "));
  const Tolerance tolerance = tolerance_for(expected.dtype(), exactness);
  // float32 widens to double exactly; integers and bool read as int64 so large int64 stay exact.
  if (ts::is_floating(expected.dtype()))
    return first_difference(got.to_vector<double>(), expected.to_vector<double>(), tolerance,
                            expected.dtype() == ts::kFloat32);
  return first_difference(got.to_vector<int64_t>(), expected.to_vector<int64_t>(), tolerance, false);
}

}  // namespace conformance

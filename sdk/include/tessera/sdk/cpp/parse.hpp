// Header-only helpers for plugin authors: reading the text the host passes (parameters, placement
// arguments) into values, with messages that say what was expected.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/sdk/cpp/errors.hpp"

namespace tessera::sdk {

// The whole of `text` as a decimal integer in [minimum, maximum], or sdk::Error
// (TESSERA_INVALID_ARGUMENT) "<what> must be an integer >= 1, got 'x'" ("in 1..64" when bounded).
inline int64_t parse_integer(const std::string& text, const std::string& what, int64_t minimum,
                             int64_t maximum = INT64_MAX) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  const bool whole = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
  if (!whole || value < minimum || value > maximum) {
    const std::string range = maximum == INT64_MAX
                                  ? ">= " + std::to_string(minimum)
                                  : "in " + std::to_string(minimum) + ".." + std::to_string(maximum);
    throw Error(TESSERA_INVALID_ARGUMENT, what + " must be an integer " + range + ", got '" + text + "'");
  }
  return value;
}

// The whole of `text` as a finite decimal number in [minimum, maximum] (either may be infinite), or
// sdk::Error (TESSERA_INVALID_ARGUMENT) "<what> must be a finite number in 0..1, got 'x'" (">= 0"
// when only bounded below).
inline double parse_real(const std::string& text, const std::string& what, double minimum, double maximum) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
  // Written as a negation so that NaN is refused too.
  if (!whole || !(value >= minimum && value <= maximum) || std::isinf(value)) {
    const auto number = [](double x) {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%g", x);
      return std::string(buffer);
    };
    std::string range = "in " + number(minimum) + ".." + number(maximum);
    if (std::isinf(maximum))
      range = std::isinf(minimum) ? "" : ">= " + number(minimum);
    else if (std::isinf(minimum))
      range = "<= " + number(maximum);
    throw Error(TESSERA_INVALID_ARGUMENT, what + " must be a finite number" +
                                              (range.empty() ? "" : " " + range) + ", got '" + text + "'");
  }
  return value;
}

// The whole of `text` as a finite decimal number >= 0 (e.g. "2e-6", "12.5e9"), or sdk::Error
// (TESSERA_INVALID_ARGUMENT) "<what> must be a finite number >= 0, got 'x'".
inline double parse_non_negative(const std::string& text, const std::string& what) {
  return parse_real(text, what, 0.0, HUGE_VAL);
}

}  // namespace tessera::sdk

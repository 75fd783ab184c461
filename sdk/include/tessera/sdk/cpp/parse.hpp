// Header-only helpers for plugin authors: reading the text the host passes (parameters, placement
// arguments) into values, with messages that say what was expected.
#pragma once

#include <cerrno>
#include <cstdint>
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
    const std::string range = maximum == INT64_MAX ? ">= " + std::to_string(minimum)
                                                   : "in " + std::to_string(minimum) + ".." + std::to_string(maximum);
    throw Error(TESSERA_INVALID_ARGUMENT, what + " must be an integer " + range + ", got '" + text + "'");
  }
  return value;
}

// The whole of `text` as a finite decimal number in [minimum, maximum], or sdk::Error
// (TESSERA_INVALID_ARGUMENT) "<what> must be a finite number in 0..1, got 'x'".
inline double parse_real(const std::string& text, const std::string& what, double minimum, double maximum) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const bool whole = !text.empty() && end == text.c_str() + text.size() && errno != ERANGE;
  if (!whole || !(value >= minimum && value <= maximum) || value - value != 0)  // NaN and infinities fail
    throw Error(TESSERA_INVALID_ARGUMENT, what + " must be a finite number in " + std::to_string(minimum) + ".." +
                                              std::to_string(maximum) + ", got '" + text + "'");
  return value;
}

}  // namespace tessera::sdk

// Command-line options of tessera-conformance.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace conformance {

struct Options {
  std::string backend;         // a backend name, or a plugin file (contains '/' or ends in ".so")
  std::string oracle = "cpu";  // the backend whose results count as right
  uint64_t seed = 20240611;    // seeds every generated input and the random-number checks
  bool verbose = false;        // one line per case, not only per group
  bool help = false;
};

// A mistake on the command line (exit status 2); the message names the offending argument.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Options parse_options(int argc, const char* const* argv);
std::string usage_text();

}  // namespace conformance

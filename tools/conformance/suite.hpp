// One backend's conformance run: every catalogue op it provides on every key dtype it declares,
// skips for the ops it lacks, then memory and error-path checks, then the summary.
#pragma once

#include <iosfwd>
#include <string>

#include "options.hpp"

namespace conformance {

// Returns the exit status for this backend (kExitPass or kExitFail).
int run_suite(const std::string& backend, const Options& options, std::ostream& out);

}  // namespace conformance

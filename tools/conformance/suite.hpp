// One backend's conformance run: every catalogue op it provides on every key dtype it declares,
// skips for the ops it lacks, then memory and error-path checks, then the summary.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "options.hpp"

namespace conformance {

// What one backend's run found, beside the lines it printed.
struct SuiteOutcome {
  int status = 0;  // the exit status for this backend (kExitPass or kExitFail)
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  std::vector<std::string> failures;  // one "group: detail" per failed check group
  double seconds = 0;
};

SuiteOutcome run_suite(const std::string& backend, const Options& options, std::ostream& out);

}  // namespace conformance

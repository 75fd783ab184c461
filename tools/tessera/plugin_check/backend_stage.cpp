// The backend stage: the conformance suite of tools/conformance (the one tessera-conformance runs)
// on the backend, against the CPU backend as oracle. Its line-by-line output is not shown; its
// failures become the stage's details.
#include <fmt/format.h>

#include <sstream>
#include <string>
#include <tessera/backend_info.hpp>

#include "options.hpp"
#include "plugin_check/problem_list.hpp"
#include "plugin_check/stages.hpp"
#include "suite.hpp"

namespace tessera::cli::check {

StageOutcome check_backend(const std::string& name) {
  StageOutcome outcome;
  if (backend_capabilities(name).shapes_only) {
    outcome.verdict = Verdict::skipped;
    outcome.summary = "a shapes-only backend: its tensors hold no values to compare";
    return outcome;
  }
  const conformance::Options options;  // the oracle "cpu" and the suite's fixed seed
  std::ostringstream lines;
  const conformance::SuiteOutcome suite = conformance::run_suite(name, options, lines);
  ProblemList problems;
  for (const std::string& failure : suite.failures) problems.add(failure);
  outcome.verdict = suite.failed == 0 ? Verdict::ok : Verdict::failed;
  outcome.summary =
      fmt::format("conformance against '{}' (seed {}): {} passed, {} failed, {} skipped in {:.1f} s",
                  options.oracle, options.seed, suite.passed, suite.failed, suite.skipped, suite.seconds);
  outcome.details = problems.lines();
  return outcome;
}

}  // namespace tessera::cli::check

// What the suite prints: one line per check group (PASS, FAIL or SKIP) and a summary. A skip is
// always printed and counted on its own, never as a pass.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace conformance {

class Report {
 public:
  Report(std::ostream& out, bool verbose) : out_(out), verbose_(verbose) {}

  // `group` is "op dtype" (e.g. "add float32") or a named group such as "transfer int64".
  // `agreed_errors`: cases where both backends raised an error (the specified outcome, e.g. max of
  // an empty tensor), shown so that a group passing on errors alone is noticed.
  void pass(const std::string& group, int cases, int agreed_errors = 0);
  void fail(const std::string& group, const std::string& detail);
  void skip(const std::string& group, const std::string& reason);
  // Printed only with --verbose: one case's outcome.
  void detail(const std::string& line);

  int passed() const { return passed_; }
  int failed() const { return failed_; }
  int skipped() const { return skipped_; }
  const std::vector<std::string>& failures() const { return failures_; }  // "group: detail" each

  // The summary line for one backend; returns the exit status its results call for.
  int summarize(const std::string& backend, const std::string& oracle, unsigned long long seed);

 private:
  std::ostream& out_;
  bool verbose_;
  int passed_ = 0;
  int failed_ = 0;
  int skipped_ = 0;
  std::vector<std::string> failures_;
};

}  // namespace conformance

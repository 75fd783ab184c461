#include "report.hpp"

#include <ostream>

#include "exit_codes.hpp"

namespace conformance {

void Report::pass(const std::string& group, int cases, int agreed_errors) {
  ++passed_;
  out_ << "PASS " << group << " (" << cases << (cases == 1 ? " case" : " cases");
  if (agreed_errors > 0) out_ << ", " << agreed_errors << " of them an error on both backends";
  out_ << ")\n";
}

void Report::fail(const std::string& group, const std::string& detail) {
  ++failed_;
  failures_.push_back(group + ": " + detail);
  out_ << "FAIL " << group << ": " << detail << '\n';
}

void Report::skip(const std::string& group, const std::string& reason) {
  ++skipped_;
  out_ << "SKIP " << group << ": " << reason << '\n';
}

void Report::detail(const std::string& line) {
  if (verbose_) out_ << "  " << line << '\n';
}

int Report::summarize(const std::string& backend, const std::string& oracle, unsigned long long seed) {
  out_ << "Summary for backend '" << backend << "' against oracle '" << oracle << "' (seed " << seed
       << "): " << passed_ << " passed, " << failed_ << " failed, " << skipped_
       << " skipped (not counted as passed)\n";
  out_.flush();
  return failed_ == 0 ? kExitPass : kExitFail;
}

}  // namespace conformance

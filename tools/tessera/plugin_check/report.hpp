// How `tessera plugins check` shows its result: a line per stage (verdict and summary, then the
// stage's details indented) and a last line PASS or FAIL, or the same as one JSON object (--json).
#pragma once

#include <iosfwd>

#include "plugin_check/supervisor.hpp"

namespace tessera::cli::check {

void print_text(const CheckResult& result, std::ostream& out);
// {"file": ..., "timeout_s": ..., "passed": bool, "stages": [{"stage", "verdict", "summary",
// "details": [...], "signal" (crashed only)}]}
void print_json(const CheckResult& result, std::ostream& out);

}  // namespace tessera::cli::check

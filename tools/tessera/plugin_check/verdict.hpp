// What `tessera plugins check` says about one stage of checking a plugin, and what a stage found.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::cli::check {

// ok, failed and skipped come from the worker itself; leak from its load/unload cycles; crashed,
// hung and not_run are what the supervisor concludes when the worker died, stopped answering or
// never got to a stage.
enum class Verdict { ok, failed, skipped, leak, crashed, hung, not_run };

std::string_view verdict_name(Verdict verdict);  // "ok", "failed", ..., "not_run"
std::optional<Verdict> verdict_from_name(std::string_view name);
// Whether a check with this stage verdict passes: ok, and skipped (a stage that cannot run here says
// why, visibly, and is not counted as a failure).
bool verdict_passes(Verdict verdict);

// What one stage of the worker found: its verdict, one line saying what was checked, and a line per
// problem (capped by the stage, which says how many more there were).
struct StageOutcome {
  Verdict verdict = Verdict::ok;
  std::string summary;
  std::vector<std::string> details;
};

}  // namespace tessera::cli::check

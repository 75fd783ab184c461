#include "plugin_check/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace tessera::cli::check {
namespace {

// "not_run" -> "NOT RUN": verdicts stand out in capitals among the summaries.
std::string shouted(Verdict verdict) {
  std::string text(verdict_name(verdict));
  for (char& c : text) c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

void print_text(const CheckResult& result, std::ostream& out) {
  out << fmt::format("Checking {} in a worker process ({} s at most per stage)\n", result.file,
                     result.timeout_s);
  size_t width = 0;
  for (const StageResult& stage : result.stages) width = std::max(width, stage.stage.size());
  std::vector<std::string> failed;
  size_t not_run = 0;
  for (const StageResult& stage : result.stages) {
    out << fmt::format("  {:<{}}  {:<7}  {}\n", stage.stage, width, shouted(stage.verdict), stage.summary);
    for (const std::string& detail : stage.details) out << "      " << detail << '\n';
    if (stage.verdict == Verdict::not_run)
      ++not_run;
    else if (!verdict_passes(stage.verdict))
      failed.push_back(fmt::format("{} {}", stage.stage, verdict_name(stage.verdict)));
  }
  if (result.passed())
    out << "Result: PASS\n";
  else
    out << fmt::format(
        "Result: FAIL ({}{})\n", fmt::join(failed, ", "),
        not_run == 0 ? "" : fmt::format("; {} stage{} not run", not_run, not_run == 1 ? "" : "s"));
}

void print_json(const CheckResult& result, std::ostream& out) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageResult& stage : result.stages) {
    nlohmann::json entry = {{"stage", stage.stage},
                            {"verdict", std::string(verdict_name(stage.verdict))},
                            {"summary", stage.summary},
                            {"details", stage.details}};
    if (!stage.signal.empty()) entry["signal"] = stage.signal;
    stages.push_back(std::move(entry));
  }
  const nlohmann::json report = {{"file", result.file},
                                 {"timeout_s", result.timeout_s},
                                 {"passed", result.passed()},
                                 {"stages", stages}};
  // A plugin's message may hold bytes that are not UTF-8: replaced, never an exception.
  out << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace tessera::cli::check

#include "plugin_check/verdict.hpp"

#include <array>
#include <utility>

namespace tessera::cli::check {
namespace {

constexpr std::array<std::pair<Verdict, std::string_view>, 7> kVerdictNames = {{
    {Verdict::ok, "ok"},
    {Verdict::failed, "failed"},
    {Verdict::skipped, "skipped"},
    {Verdict::leak, "leak"},
    {Verdict::crashed, "crashed"},
    {Verdict::hung, "hung"},
    {Verdict::not_run, "not_run"},
}};

}  // namespace

std::string_view verdict_name(Verdict verdict) {
  for (const auto& [known, name] : kVerdictNames)
    if (known == verdict) return name;
  return "unknown";
}

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (const auto& [verdict, known] : kVerdictNames)
    if (known == name) return verdict;
  return std::nullopt;
}

bool verdict_passes(Verdict verdict) { return verdict == Verdict::ok || verdict == Verdict::skipped; }

}  // namespace tessera::cli::check

#include "plugin_check/rules_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace tessera::cli::check {
namespace {

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? std::string()
                                    : text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::string rules_without(const std::string& rules, const std::string& algorithm) {
  std::vector<std::string> kept;
  size_t start = 0;
  for (;;) {
    const size_t end = rules.find(';', start);
    const std::string rule =
        trimmed(rules.substr(start, end == std::string::npos ? std::string::npos : end - start));
    const size_t colon = rule.rfind(':');  // a rule without one ("auto") selects no algorithm by name
    if (!rule.empty() && (colon == std::string::npos || trimmed(rule.substr(colon + 1)) != algorithm))
      kept.push_back(rule);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return fmt::format("{}", fmt::join(kept, ";"));
}

}  // namespace tessera::cli::check

// libFuzzer target: collective selection rules ("all_reduce:ring;all_gather[0-64K]:rd;*:direct"),
// as TESSERA_COLL, [collectives] algorithms and dist::set_algorithms give them. Any input must
// parse or throw ConfigError; what parses must print (rules_text) as rules that parse back equal,
// and every rule's size range must be a real one (0 <= min <= max).
//
// Algorithm names are checked against the loaded plugins only for inputs whose first byte is odd:
// the check loads every coll-* plugin once, then is a map lookup.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "comm/selection.hpp"
#include "tessera/errors.hpp"

namespace {

namespace comm = tessera::comm;

[[noreturn]] void broken(const std::string& what, const std::string& input) {
  std::fprintf(stderr, "rules_fuzzer: %s\ninput: '%s'\n", what.c_str(), input.c_str());
  std::abort();
}

bool same(const std::vector<comm::SelectionRule>& a, const std::vector<comm::SelectionRule>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].collective != b[i].collective || a[i].min_bytes != b[i].min_bytes ||
        a[i].max_bytes != b[i].max_bytes || a[i].algorithm != b[i].algorithm)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  const bool check_names = (data[0] & 1) != 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<comm::SelectionRule> rules;
  try {
    rules = comm::parse_rules(text, check_names);
  } catch (const tessera::ConfigError&) {
    return 0;
  } catch (const std::exception& e) {
    broken(std::string("escaped exception: ") + e.what(), text);
  }
  for (const comm::SelectionRule& rule : rules)
    if (rule.min_bytes < 0 || rule.max_bytes < rule.min_bytes)
      broken("a rule with an empty or negative range", text);
  const std::string printed = comm::rules_text(rules);
  try {
    if (!same(comm::parse_rules(printed, false), rules))
      broken("'" + printed + "' parses to other rules", text);
  } catch (const tessera::Error& e) {
    broken("its own text '" + printed + "' is rejected: " + e.what(), text);
  }
  return 0;
}

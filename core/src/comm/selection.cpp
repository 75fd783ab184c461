#include "comm/selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "comm/auto_select.hpp"
#include "comm/components.hpp"
#include "log/log.hpp"
#include "plugin/environment.hpp"
#include "plugin/registry.hpp"
#include "tessera/errors.hpp"

namespace tessera::comm {
namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

int64_t parse_bytes(const std::string& text, const std::string& rule) {
  if (text.empty()) return -1;
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  int64_t scale = 1;
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k")
    scale = int64_t{1} << 10;
  else if (suffix == "M" || suffix == "m")
    scale = int64_t{1} << 20;
  else if (suffix == "G" || suffix == "g")
    scale = int64_t{1} << 30;
  else if (!suffix.empty())
    used = 0;
  if (used == 0 || value < 0)
    throw ConfigError(fmt::format(
        "collective rule '{}': size '{}' is not a byte count (expected e.g. 4096, 64K, 1M)", rule, text));
  // Checked before multiplying: "9000000000000G" would overflow (found by tests/fuzz/rules_fuzzer).
  if (value > INT64_MAX / scale)
    throw ConfigError(fmt::format("collective rule '{}': size '{}' is too large (at most {} bytes)", rule,
                                  text, INT64_MAX));
  return value * scale;
}

std::string known_algorithms() {
  std::string names;
  for (const std::string& name : comm::algorithm_names()) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "none loaded" : names;
}

// "all_gather, all_to_all": what a rule may ask of `algorithm`.
std::string collectives_offered_by(const CollectiveAlgorithm& algorithm) {
  std::string names;
  for (int32_t c = 0; c < TESSERA_COLL_COUNT; ++c)
    if (algorithm.offers(c)) names += (names.empty() ? "" : ", ") + std::string(collective_name(c));
  return names.empty() ? "no collective" : names;
}

// "direct, ring, tree": the loaded algorithms a rule for `collective` may name.
std::string algorithms_offering(int32_t collective) {
  std::string names;
  for (const std::string& name : comm::algorithm_names()) {
    const std::shared_ptr<const CollectiveAlgorithm> algorithm = comm::algorithm(name);
    if (algorithm != nullptr && algorithm->offers(collective)) names += (names.empty() ? "" : ", ") + name;
  }
  return names.empty() ? "none loaded" : names;
}

std::mutex rules_mutex;

// Takes rules_mutex once the process configuration is applied. The first use of the registry
// applies it (TESSERA_COLL, a configuration file), which sets the rules through set_rules: taking
// the lock first would deadlock on it.
std::unique_lock<std::mutex> lock_rules() {
  (void)plugin::Registry::instance();
  return std::unique_lock(rules_mutex);
}
// The rules in force, replaced whole (never edited) so that a collective takes a snapshot by
// copying the pointer, not the rules.
using Rules = std::shared_ptr<const std::vector<SelectionRule>>;
Rules& rules_slot() {
  static Rules rules = std::make_shared<const std::vector<SelectionRule>>();
  return rules;
}
bool rules_initialised = false;
// Whether the rules in force were chosen by the user (in code, TESSERA_COLL or a configuration
// file) rather than being the built-in defaults: only a user's rule naming an algorithm that is
// not loaded is an error; a default one falls back.
bool rules_explicit = false;

// TESSERA_COLL's rules, or nullptr when it is unset or empty, as configure() reads it.
const char* rules_variable() { return plugin::env_value("TESSERA_COLL"); }

// Lazily: TESSERA_COLL, else the defaults. Called with rules_mutex held.
const Rules& active_rules() {
  if (!rules_initialised) {
    const char* env = rules_variable();
    // A mistake in TESSERA_COLL is reported naming the variable by configure(), which applies the
    // environment before anything gets here (api/plugins_api.cpp).
    rules_slot() = std::make_shared<const std::vector<SelectionRule>>(
        parse_rules(env != nullptr ? env : kDefaultRules, env != nullptr));
    rules_explicit = env != nullptr;
    rules_initialised = true;
  }
  return rules_slot();
}

bool matches(const SelectionRule& rule, const tessera_collective_request& request, int64_t bytes) {
  return (rule.collective < 0 || rule.collective == request.collective) && bytes >= rule.min_bytes &&
         bytes <= rule.max_bytes;
}

}  // namespace

std::vector<SelectionRule> parse_rules(const std::string& text, bool check_names) {
  std::vector<SelectionRule> rules;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ';');) {
    const std::string rule = trim(item);
    if (rule.empty()) continue;
    if (rule == kAutoAlgorithm) {  // "auto" alone: every collective, every size
      rules.push_back(SelectionRule{-1, 0, INT64_MAX, kAutoAlgorithm});
      continue;
    }
    const size_t colon = rule.rfind(':');
    if (colon == std::string::npos)
      throw ConfigError(fmt::format(
          "collective rule '{}' has no ':'; expected <collective>[<min>-<max>]:<algorithm>", rule));
    SelectionRule parsed;
    parsed.algorithm = trim(rule.substr(colon + 1));
    std::string what = trim(rule.substr(0, colon));
    if (const size_t open = what.find('['); open != std::string::npos) {
      const size_t close = what.find(']', open);
      const size_t dash = what.find('-', open);
      if (close == std::string::npos || close != what.size() - 1 || dash == std::string::npos || dash > close)
        throw ConfigError(fmt::format(
            "collective rule '{}': size range must look like [<min>-<max>] (max may be empty)", rule));
      parsed.min_bytes =
          std::max<int64_t>(0, parse_bytes(trim(what.substr(open + 1, dash - open - 1)), rule));
      const int64_t max = parse_bytes(trim(what.substr(dash + 1, close - dash - 1)), rule);
      parsed.max_bytes = max < 0 ? INT64_MAX : max;
      if (parsed.max_bytes < parsed.min_bytes)
        throw ConfigError(fmt::format("collective rule '{}': the size range is empty", rule));
      what = trim(what.substr(0, open));
    }
    if (what != "*") {
      parsed.collective = collective_from_name(what);
      if (parsed.collective < 0)
        throw ConfigError(
            fmt::format("collective rule '{}': unknown collective '{}'; expected one of all_reduce, "
                        "broadcast, reduce, all_gather, reduce_scatter, all_to_all, scatter, gather, "
                        "barrier or *",
                        rule, what));
    }
    // "auto" is a way of choosing, not an algorithm: it needs no plugin.
    if (check_names && parsed.algorithm != kAutoAlgorithm) {
      const std::shared_ptr<const CollectiveAlgorithm> algorithm = comm::algorithm(parsed.algorithm);
      if (algorithm == nullptr)
        throw ConfigError(
            fmt::format("collective rule '{}': unknown algorithm '{}'; known algorithms: {} (or auto)", rule,
                        parsed.algorithm, known_algorithms()));
      // A rule for one collective naming an algorithm without it would never apply: every such
      // call would quietly run the next rule's algorithm (or direct). A '*' rule is meant to
      // cover only what its algorithm offers.
      if (parsed.collective >= 0 && !algorithm->offers(parsed.collective))
        throw ConfigError(fmt::format(
            "collective rule '{}': algorithm '{}' does not offer {}; it offers {}. Algorithms that offer {}: "
            "{} "
            "(or auto)",
            rule, parsed.algorithm, collective_name(parsed.collective), collectives_offered_by(*algorithm),
            collective_name(parsed.collective), algorithms_offering(parsed.collective)));
    }
    rules.push_back(std::move(parsed));
  }
  return rules;
}

std::string rules_text(const std::vector<SelectionRule>& rules) {
  std::string text;
  for (const SelectionRule& r : rules) {
    if (!text.empty()) text += ';';
    text += r.collective < 0 ? "*" : collective_name(r.collective);
    if (r.min_bytes != 0 || r.max_bytes != INT64_MAX)
      text +=
          fmt::format("[{}-{}]", r.min_bytes, r.max_bytes == INT64_MAX ? "" : std::to_string(r.max_bytes));
    text += ':' + r.algorithm;
  }
  return text;
}

void set_rules(const std::string& text) {
  std::vector<SelectionRule> parsed = parse_rules(text);
  const auto lock = lock_rules();
  rules_slot() = std::make_shared<const std::vector<SelectionRule>>(std::move(parsed));
  rules_initialised = true;
  rules_explicit = true;
  note_algorithms_changed();  // choices remembered under the old rules are stale
}

std::string rules_naming(const std::vector<std::string>& algorithms) {
  std::vector<SelectionRule> rules;
  {
    const auto lock = lock_rules();
    if (rules_initialised) {
      if (!rules_explicit) return {};
      rules = *rules_slot();
    } else if (const char* env = rules_variable()) {
      try {
        rules = parse_rules(env, false);  // unchecked: the names may be the very ones just unloaded
      } catch (const ConfigError&) {
        return {};  // the first collective reports the mistake
      }
    }
  }
  std::vector<SelectionRule> naming;
  for (const SelectionRule& rule : rules)
    if (std::find(algorithms.begin(), algorithms.end(), rule.algorithm) != algorithms.end())
      naming.push_back(rule);
  return rules_text(naming);
}

std::string current_rules() {
  const auto lock = lock_rules();
  return rules_text(*active_rules());
}

std::shared_ptr<const CollectiveAlgorithm> choose(const tessera_collective_request& request, int64_t bytes) {
  Rules rules;
  bool explicit_rules = false;
  {
    const auto lock = lock_rules();
    rules = active_rules();
    explicit_rules = rules_explicit;
  }
  for (const SelectionRule& rule : *rules) {
    if (!matches(rule, request, bytes)) continue;
    if (rule.algorithm == kAutoAlgorithm) {
      if (std::shared_ptr<const CollectiveAlgorithm> algorithm = choose_auto(request, bytes))
        return algorithm;
      continue;  // choose_auto logged why none applies
    }
    std::shared_ptr<const CollectiveAlgorithm> algorithm = comm::algorithm(rule.algorithm);
    if (algorithm == nullptr && explicit_rules)
      throw Error(
          fmt::format("collective {} (group size {}, {} bytes): the rule '{}' in force names algorithm '{}', "
                      "which is not loaded (was its plugin unloaded?); known algorithms: {}. Load its plugin "
                      "again or set other rules (ts::dist::set_algorithms, TESSERA_COLL)",
                      collective_name(request.collective), request.group_size, bytes, rules_text({rule}),
                      rule.algorithm, known_algorithms()));
    if (algorithm == nullptr) {
      observe::logger().info("collective {}: the default rule's algorithm '{}' is not loaded; falling back",
                             collective_name(request.collective), rule.algorithm);
      continue;
    }
    if (!algorithm->offers(request.collective)) continue;
    const std::string reason = algorithm->check(request);
    if (reason.empty()) return algorithm;
    observe::logger().info("collective {} (group size {}, {} bytes): '{}' does not apply ({}); falling back",
                           collective_name(request.collective), request.group_size, bytes, rule.algorithm,
                           reason);
  }
  std::shared_ptr<const CollectiveAlgorithm> direct = comm::algorithm("direct");
  if (direct == nullptr)
    throw Error(fmt::format(
        "no algorithm applies to {} and the 'direct' fallback is not loaded (known algorithms: {})",
        collective_name(request.collective), known_algorithms()));
  return direct;
}

}  // namespace tessera::comm

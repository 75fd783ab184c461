// Config parsing (tessera/config.hpp). In the top "api" layer with configure(): it checks values
// against the components they configure (the thread count against dispatch).
#include "tessera/config.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <toml++/toml.h>

#include "dispatch/thread_pool.hpp"
#include "plugin/environment.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxRanksPerProcess = 1 << 16;

[[noreturn]] void fail(const fs::path& file, const toml::source_region& where, const std::string& key,
                       const std::string& what) {
  throw ConfigError(fmt::format("{}:{}: key '{}': {}", file.string(), where.begin.line, key, what));
}

// Unknown keys are errors: a misspelt key silently ignored is a configuration that does not apply.
void check_keys(const fs::path& file, const toml::table& table, const std::string& prefix,
                const std::set<std::string>& known) {
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    if (known.count(name) == 0) {
      std::string expected;
      for (const std::string& k : known) expected += (expected.empty() ? "" : ", ") + prefix + k;
      fail(file, node.source(), prefix + name, "unknown key; expected one of " + expected);
    }
  }
}

const toml::table* section(const fs::path& file, const toml::table& root, const std::string& name) {
  const toml::node* node = root.get(name);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) fail(file, node->source(), name, "expected a table [" + name + "]");
  return node->as_table();
}

std::string string_value(const fs::path& file, const toml::table& table, const std::string& prefix,
                         const std::string& key, const std::string& fallback) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return fallback;
  if (!node->is_string()) fail(file, node->source(), prefix + key, "expected a string");
  return node->as_string()->get();
}

std::vector<std::string> string_list(const fs::path& file, const toml::table& table,
                                     const std::string& prefix, const std::string& key) {
  std::vector<std::string> values;
  const toml::node* node = table.get(key);
  if (node == nullptr) return values;
  if (!node->is_array()) fail(file, node->source(), prefix + key, "expected an array of strings");
  for (const toml::node& item : *node->as_array()) {
    if (!item.is_string()) fail(file, item.source(), prefix + key, "expected an array of strings");
    values.push_back(item.as_string()->get());
  }
  return values;
}

// [plugins]: the keys of the section itself, and a table of parameters per plugin
// ([plugins.<plugin name>]), whose values a plugin receives as text.
void parse_plugins(const fs::path& file, const toml::table& plugins, const fs::path& base, Config& config) {
  const std::set<std::string> known = {"search_path", "load", "allow_override"};
  for (const auto& [key, node] : plugins) {
    const std::string name(key.str());
    if (known.count(name) != 0) continue;
    if (!node.is_table())
      fail(file, node.source(), "plugins." + name,
           "unknown key; expected one of plugins.allow_override, plugins.load, plugins.search_path, or a "
           "table "
           "[plugins.<plugin name>] of that plugin's parameters");
    for (const auto& [parameter_key, value] : *node.as_table()) {
      const std::string parameter(parameter_key.str());
      std::string text;
      if (value.is_string())
        text = value.as_string()->get();
      else if (value.is_integer())
        text = std::to_string(value.as_integer()->get());
      else if (value.is_floating_point())
        text = fmt::format("{}", value.as_floating_point()->get());
      else if (value.is_boolean())
        text = value.as_boolean()->get() ? "true" : "false";
      else
        fail(file, value.source(), "plugins." + name + "." + parameter,
             "expected a string, integer, float or boolean (passed to the plugin as text)");
      config.plugin_parameters[name][parameter] = text;
      config.plugin_parameter_origins[name + "." + parameter] =
          fmt::format("{}:{}: [plugins.{}] {}", file.string(), value.source().begin.line, name, parameter);
    }
  }
  for (const std::string& dir : string_list(file, plugins, "plugins.", "search_path"))
    config.plugin_search_path.push_back(fs::path(dir).is_absolute() ? fs::path(dir) : base / dir);
  for (const std::string& plugin : string_list(file, plugins, "plugins.", "load"))
    // A relative file path is relative to the config file; a bare name is looked up on the path.
    config.plugins_to_load.push_back(plugin.find('/') != std::string::npos && !fs::path(plugin).is_absolute()
                                         ? (base / plugin).string()
                                         : plugin);
  if (const toml::node* node = plugins.get("allow_override")) {
    if (!node->is_boolean()) fail(file, node->source(), "plugins.allow_override", "expected true or false");
    config.plugin_allow_override = node->as_boolean()->get();
  }
}

// TESSERA_PLUGIN_PARAMS: "<plugin>.<key>=<value>" entries separated by ';' (empty entries skipped).
// The plugin name ends at the first '.', the key at the first '='; the value is the rest.
void parse_plugin_params_variable(const std::string& text, Config& config) {
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos) end = text.size();
    const std::string entry = text.substr(begin, end - begin);
    begin = end + 1;
    if (entry.empty()) continue;
    const size_t dot = entry.find('.');
    const size_t equals = entry.find('=');
    if (dot == std::string::npos || equals == std::string::npos || dot == 0 || equals < dot + 2)
      throw ConfigError(
          fmt::format("TESSERA_PLUGIN_PARAMS='{}': entry '{}' is not <plugin>.<key>=<value>", text, entry));
    const std::string plugin = entry.substr(0, dot);
    const std::string key = entry.substr(dot + 1, equals - dot - 1);
    config.plugin_parameters[plugin][key] = entry.substr(equals + 1);
    config.plugin_parameter_origins[plugin + "." + key] =
        fmt::format("TESSERA_PLUGIN_PARAMS (entry '{}')", entry);
  }
}

void parse_world(const fs::path& file, const toml::table& world, Config& config) {
  check_keys(file, world, "world.", {"transport", "ranks_per_process", "timeout", "check_collectives"});
  config.world_transport = string_value(file, world, "world.", "transport", config.world_transport);
  if (config.world_transport.empty())
    fail(file, world.source(), "world.transport",
         "expected auto, local or a transport name, got an empty string");
  if (const toml::node* node = world.get("ranks_per_process")) {
    if (!node->is_integer() || node->as_integer()->get() < 1 ||
        node->as_integer()->get() > kMaxRanksPerProcess)
      fail(file, node->source(), "world.ranks_per_process",
           fmt::format("expected an integer 1..{}", kMaxRanksPerProcess));
    config.ranks_per_process = static_cast<int>(node->as_integer()->get());
  }
  if (const toml::node* node = world.get("timeout")) {
    if (!node->is_string())
      fail(file, node->source(), "world.timeout", "expected a duration string such as \"60s\"");
    try {
      config.world_timeout_ms = parse_timeout(node->as_string()->get(), "world.timeout");
    } catch (const ConfigError& e) {
      fail(file, node->source(), "world.timeout", e.what());
    }
  }
  if (const toml::node* node = world.get("check_collectives")) {
    if (!node->is_boolean()) fail(file, node->source(), "world.check_collectives", "expected true or false");
    config.check_collectives = node->as_boolean()->get();
  }
}

Config parse(const toml::table& root, const fs::path& file) {
  Config config;
  config.source = file;
  check_keys(file, root, "",
             {"plugins", "backend", "log", "execution", "collectives", "topology", "trace", "world"});
  const fs::path base = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (const toml::table* plugins = section(file, root, "plugins"))
    parse_plugins(file, *plugins, base, config);
  if (const toml::table* backend = section(file, root, "backend")) {
    check_keys(file, *backend, "backend.", {"default"});
    config.default_backend = string_value(file, *backend, "backend.", "default", config.default_backend);
  }
  if (const toml::table* log = section(file, root, "log")) {
    check_keys(file, *log, "log.", {"level"});
    config.log_level = string_value(file, *log, "log.", "level", config.log_level);
  }
  if (const toml::table* execution = section(file, root, "execution")) {
    check_keys(file, *execution, "execution.", {"threads"});
    if (const toml::node* node = execution->get("threads")) {
      if (!node->is_integer() || node->as_integer()->get() < 0 || node->as_integer()->get() > 4096)
        fail(file, node->source(), "execution.threads",
             "expected an integer 0..4096 (0 = one per hardware thread)");
      config.threads = static_cast<int>(node->as_integer()->get());
    }
  }
  if (const toml::table* collectives = section(file, root, "collectives")) {
    check_keys(file, *collectives, "collectives.", {"algorithms", "tuner"});
    config.collective_algorithms = string_value(file, *collectives, "collectives.", "algorithms", "");
    config.collective_tuner = string_value(file, *collectives, "collectives.", "tuner", "");
  }
  if (const toml::table* topology = section(file, root, "topology")) {
    check_keys(file, *topology, "topology.", {"preset"});
    config.topology = string_value(file, *topology, "topology.", "preset", "");
  }
  if (const toml::table* trace = section(file, root, "trace")) {
    check_keys(file, *trace, "trace.", {"file"});
    const std::string path = string_value(file, *trace, "trace.", "file", "");
    if (!path.empty()) config.trace_file = fs::path(path).is_absolute() ? fs::path(path) : base / path;
  }
  if (const toml::table* world = section(file, root, "world")) parse_world(file, *world, config);
  return config;
}

}  // namespace

Config Config::from_environment() {
  const char* file = plugin::env_value("TESSERA_CONFIG");
  if (file == nullptr) return Config{};
  try {
    return from_file(file);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("TESSERA_CONFIG='{}': {}", file, e.what()));
  }
}

Config with_environment(Config config) {
  if (const char* level = plugin::env_value("TESSERA_LOG_LEVEL")) config.log_level = level;
  // Set but empty is malformed here, as the rank pool reads it (dispatch/thread_pool.cpp).
  if (const char* threads = std::getenv("TESSERA_THREADS"))
    config.threads = dispatch::threads_variable(threads);
  if (const char* rules = plugin::env_value("TESSERA_COLL")) config.collective_algorithms = rules;
  if (const char* tuner = plugin::env_value("TESSERA_TUNER")) config.collective_tuner = tuner;
  if (const char* trace = plugin::env_value("TESSERA_TRACE")) config.trace_file = trace;
  if (const char* transport = plugin::env_value("TESSERA_TRANSPORT")) config.world_transport = transport;
  if (const char* k = plugin::env_value("TESSERA_RANKS_PER_PROCESS")) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(k, &end, 10);
    if (errno != 0 || *end != '\0' || value < 1 || value > kMaxRanksPerProcess)
      throw ConfigError(
          fmt::format("TESSERA_RANKS_PER_PROCESS='{}': expected an integer 1..{}", k, kMaxRanksPerProcess));
    config.ranks_per_process = static_cast<int>(value);
  }
  if (const char* timeout = plugin::env_value("TESSERA_TIMEOUT"))
    config.world_timeout_ms = parse_timeout(timeout, "TESSERA_TIMEOUT");
  if (const char* allow = plugin::env_value("TESSERA_PLUGIN_ALLOW_OVERRIDE")) {
    const std::string value = allow;
    if (value != "0" && value != "1")
      throw ConfigError(
          fmt::format("TESSERA_PLUGIN_ALLOW_OVERRIDE='{}': expected 1 (a component flagged "
                      "TESSERA_COMPONENT_OVERRIDES may replace a loaded one) or 0",
                      value));
    config.plugin_allow_override = value == "1";
  }
  if (const char* params = plugin::env_value("TESSERA_PLUGIN_PARAMS"))
    parse_plugin_params_variable(params, config);
  if (const char* debug = plugin::env_value("TESSERA_DEBUG")) {
    const std::string value = debug;
    if (value != "0" && value != "1")
      throw ConfigError(
          fmt::format("TESSERA_DEBUG='{}': expected 1 (check collectives across processes) or 0", value));
    config.check_collectives = value == "1";
  }
  return config;
}

int64_t parse_timeout(const std::string& text, const std::string& where) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) ++digits;
  const std::string unit = text.substr(digits);
  const int64_t scale = unit == "ms" ? 1 : unit.empty() || unit == "s" ? 1000 : unit == "m" ? 60000 : 0;
  // 10 days is far past any sensible wait and keeps the product in range.
  constexpr int64_t kLongestMs = int64_t{10} * 24 * 3600 * 1000;
  const std::string number = text.substr(0, digits);
  const int64_t value = digits == 0 || digits > 12 ? 0 : std::stoll(number) * (scale == 0 ? 0 : scale);
  if (scale == 0 || value <= 0 || value > kLongestMs)
    throw ConfigError(
        fmt::format("{}: '{}' is not a timeout; expected a positive duration up to 10 days such as "
                    "\"250ms\", \"60s\" or \"2m\"",
                    where, text));
  return value;
}

Config Config::from_file(const fs::path& file) {
  std::error_code error;
  if (!fs::is_regular_file(file, error))
    throw ConfigError(fmt::format("configuration file '{}' does not exist", file.string()));
  try {
    return parse(toml::parse_file(file.string()), file);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}: {}", file.string(), e.source().begin.line, e.description()));
  }
}

Config Config::from_string(const std::string& text, const fs::path& source_name) {
  try {
    return parse(toml::parse(text, source_name.string()), source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}: {}", source_name.string(), e.source().begin.line, e.description()));
  }
}

}  // namespace tessera

// SDK 1.5 parameter schemas: a plugin that declares its parameters has them listed with type,
// default, valid values and help (PluginInfo::parameters); the host refuses an undeclared key or an
// invalid value itself, before the plugin sees it, through every way a value is set (a file,
// TESSERA_PLUGIN_PARAMS, Config); and a schema with a defect rejects the plugin at load, naming the
// parameter. libtessera-coll-schema.so declares one parameter of each type; its own checks word
// their messages differently from the host's, so the messages show who refused.
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
using Type = tessera::ParameterInfo::Type;

namespace {

tessera::Config with_parameter(const std::string& key, const std::string& value) {
  tessera::Config config;
  config.plugin_parameters["coll-schema"][key] = value;
  return config;
}

const tessera::ParameterInfo& declared(const tessera::PluginInfo& info, const std::string& name) {
  for (const tessera::ParameterInfo& parameter : info.parameters)
    if (parameter.name == name) return parameter;
  FAIL("no parameter " << name);
  throw;
}

}  // namespace

TEST_CASE("a declared schema is read at load: names, types, defaults, ranges, choices and help") {
  const ResetAndUnload cleanup({"coll-schema"});
  const tessera::PluginInfo info = tessera::load_plugin(test_plugin("coll-schema").string());
  CHECK(info.declares_parameters);
  REQUIRE(info.parameters.size() == 5);
  const tessera::ParameterInfo& pieces = declared(info, "pieces");
  CHECK(pieces.type == Type::integer);
  CHECK(pieces.default_value == "4");
  CHECK(pieces.integer_min == 1);
  CHECK(pieces.integer_max == 64);
  CHECK(pieces.allowed() == "1 .. 64");
  CHECK(pieces.help == "How many pieces a message is cut into.");
  const tessera::ParameterInfo& ratio = declared(info, "ratio");
  CHECK(ratio.type == Type::real);
  CHECK(ratio.default_value == "0.5");
  CHECK(ratio.allowed() == "0 .. 1");
  CHECK(declared(info, "verbose").type_name() == "boolean");
  CHECK(declared(info, "verbose").default_value == "false");
  CHECK(declared(info, "label").allowed() == "any text");
  const tessera::ParameterInfo& order = declared(info, "order");
  CHECK(order.choices == std::vector<std::string>{"forward", "reverse"});
  CHECK(order.allowed() == "one of: forward, reverse");
  // The same, without loading: a probe reads the schema too.
  CHECK(tessera::probe_plugin(test_plugin("coll-schema")).info.parameters.size() == 5);
}

TEST_CASE("ParameterInfo::check accepts exactly the values of each type and range") {
  tessera::ParameterInfo integer{"n", Type::integer, "1", "h", 1, 64, 0, 0, {}};
  CHECK(integer.check("1") == "");
  CHECK(integer.check("64") == "");
  CHECK(integer.check("-3") == "must be an integer 1 .. 64, got '-3'");
  CHECK(integer.check("65") != "");
  CHECK(integer.check("4x") != "");
  CHECK(integer.check(" 4") != "");
  CHECK(integer.check("") != "");
  CHECK(integer.check("99999999999999999999") != "");  // beyond int64_t
  tessera::ParameterInfo unbounded{"n",
                                   Type::integer,
                                   "1",
                                   "h",
                                   std::numeric_limits<int64_t>::min(),
                                   std::numeric_limits<int64_t>::max(),
                                   0,
                                   0,
                                   {}};
  CHECK(unbounded.check("-9223372036854775808") == "");
  CHECK(unbounded.check("x") == "must be an integer, got 'x'");
  tessera::ParameterInfo real{"r", Type::real, "0", "h", 0, 0, -1.0, HUGE_VAL, {}};
  CHECK(real.allowed() == ">= -1");
  CHECK(real.check("2.5e3") == "");
  CHECK(real.check("-1.5") == "must be a finite number >= -1, got '-1.5'");
  CHECK(real.check("inf") != "");
  CHECK(real.check("nan") != "");
  tessera::ParameterInfo boolean{"b", Type::boolean, "true", "h", 0, 0, 0, 0, {}};
  for (const char* good : {"true", "false", "1", "0"}) CHECK(boolean.check(good) == "");
  CHECK(boolean.check("yes") == "must be true, false, 1 or 0, got 'yes'");
  tessera::ParameterInfo choice{"c", Type::choice, "a", "h", 0, 0, 0, 0, {"a", "b"}};
  CHECK(choice.check("b") == "");
  CHECK(choice.check("A") == "must be one of: a, b, got 'A'");
}

TEST_CASE("valid values of every type pass to the plugin, invalid ones are refused by the host") {
  const ResetAndUnload cleanup({"coll-schema"});
  tessera::load_plugin(test_plugin("coll-schema").string());
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"pieces", "64"}, {"ratio", "0.25"}, {"verbose", "1"}, {"label", "x y"}, {"order", "reverse"}})
    CHECK_NOTHROW(tessera::configure(with_parameter(key, value)));

  const std::string out_of_range =
      error_of<tessera::ConfigError>([] { tessera::configure(with_parameter("pieces", "65")); });
  CAPTURE(out_of_range);
  // The host's wording ("an integer 1 .. 64"), not the plugin's ("an integer in 1..64").
  CHECK(contains(out_of_range,
                 "plugin 'coll-schema' parameter 'pieces' (integer): must be an integer 1 .. 64, got "
                 "'65'"));
  const std::string not_a_choice =
      error_of<tessera::ConfigError>([] { tessera::configure(with_parameter("order", "sideways")); });
  CHECK(
      contains(not_a_choice, "parameter 'order' (choice): must be one of: forward, reverse, got 'sideways'"));
  const std::string unknown =
      error_of<tessera::ConfigError>([] { tessera::configure(with_parameter("colour", "red")); });
  CHECK(contains(unknown,
                 "plugin 'coll-schema' has no parameter 'colour' (set to 'red'); its parameters: pieces, "
                 "ratio, verbose, label, order"));
}

TEST_CASE("a kept value for a plugin not yet loaded is checked against its schema when it loads") {
  const ResetAndUnload cleanup({"coll-schema"});
  tessera::configure(with_parameter("ratio", "1.5"));
  const std::string message =
      error_of<tessera::ConfigError>([] { tessera::load_plugin(test_plugin("coll-schema").string()); });
  CHECK(contains(message, "parameter 'ratio' (real): must be a finite number 0 .. 1, got '1.5'"));
  CHECK_FALSE(is_loaded("coll-schema"));
}

TEST_CASE("schema checks apply to values from a file (naming file and line) and from TESSERA_PLUGIN_PARAMS") {
  const ResetAndUnload cleanup({"coll-schema"});
  tessera::load_plugin(test_plugin("coll-schema").string());
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tessera-schema-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(file) << "[plugins.coll-schema]\npieces = 8\nverbose = \"maybe\"\n";
  const std::string from_file =
      error_of<tessera::ConfigError>([&] { tessera::configure(tessera::Config::from_file(file)); });
  std::filesystem::remove(file);
  CAPTURE(from_file);
  CHECK(contains(from_file, file.string() + ":3"));
  CHECK(contains(from_file, "parameter 'verbose' (boolean): must be true, false, 1 or 0, got 'maybe'"));

  const ScopedEnv env("TESSERA_PLUGIN_PARAMS", "coll-schema.pieces=0");
  const std::string from_env = error_of<tessera::ConfigError>([] { tessera::configure(tessera::Config{}); });
  CAPTURE(from_env);
  CHECK(contains(from_env, "TESSERA_PLUGIN_PARAMS"));
  CHECK(contains(from_env, "parameter 'pieces' (integer): must be an integer 1 .. 64, got '0'"));
}

TEST_CASE("a schema with a defect rejects the plugin at load, naming the parameter and the defect") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"duplicate", "parameter #1 ('size') is invalid: its name is declared twice"},
      {"default-outside",
       "parameter #0 ('size') is invalid: its default is not valid for its own declaration: it "
       "must be an integer 1 .. 8, got '16'"},
      {"unknown-type", "parameter #1 ('mode') is invalid: its type 9 is none of TESSERA_PARAMETER_INTEGER"},
      {"empty-range", "parameter #0 ('size') is invalid: its range is empty: integer_min 5 > integer_max 2"},
      {"nan-bound",
       "parameter #1 ('mode') is invalid: its range is empty or not a range: real_min 0 and real_max nan"},
      {"no-choices", "parameter #1 ('mode') is invalid: it is a choice without choices"},
      {"choice-twice", "parameter #1 ('mode') is invalid: it lists choice 'a' twice"},
      {"no-help", "parameter #0 ('size') is invalid: it has no help text"},
      {"bad-name", "parameter #1 is invalid: its name is missing or not made of letters, digits and '_'"},
      {"no-set-parameter", "it declares 2 parameters but has no set_parameter to receive them"},
  };
  for (const auto& [defect_bound, reason] : cases) {
    const auto& defect = defect_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(defect);
    const std::filesystem::path file = test_plugin("bad-schema-" + defect);
    const std::string message = load_error(file);
    CAPTURE(message);
    CHECK(contains(message, "plugin '" + file.string() + "' rejected: " + reason));
    CHECK_FALSE(is_loaded("bad-schema"));
  }
  check_cpu_still_works();
}

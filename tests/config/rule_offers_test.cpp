// A collective rule whose algorithm does not offer its collective ("all_reduce:bruck": Bruck offers
// only all_gather and all_to_all) is a ConfigError when the rules are set, through each way a user
// sets them: dist::set_algorithms, a configuration file's [collectives] algorithms, and TESSERA_COLL
// under configure(). (TESSERA_CONFIG and TESSERA_COLL at start-up, in fresh processes: see
// CMakeLists.txt here.) Before, such a rule never matched and the call quietly ran another algorithm.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <tessera/tessera.hpp>

#include "plugin/plugin_test_support.hpp"

namespace fs = std::filesystem;
namespace ts = tessera;
using plugin_test::contains;
using plugin_test::ScopedEnv;

namespace {

// The rules in force before a case, put back after it (with every other key at its default).
struct RestoreRulesAndKeys {
  std::string rules = ts::dist::algorithms();
  ~RestoreRulesAndKeys() {
    try {
      ts::configure(ts::Config{});
      ts::dist::set_algorithms(rules);
    } catch (const std::exception& e) {
      FAIL_CHECK("restoring the rules failed: " << e.what());
    }
  }
};

// Writes `toml` as a tessera.toml of its own and applies it as a program does.
void configure_offers_file(const std::string& toml) {
  const fs::path dir = fs::temp_directory_path() / ("tessera-rule-offers-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "tessera.toml";
  std::ofstream(file) << toml;
  struct Remove {
    fs::path dir;
    ~Remove() {
      std::error_code error;
      fs::remove_all(dir, error);
    }
  } remove_dir{dir};
  ts::configure(ts::Config::from_file(file));
}

// The expected parts of the message for `rule`: what the algorithm lacks and what it offers.
void check_names_offers(const std::string& message, const std::string& rule, const std::string& algorithm,
                        const std::string& collective, const std::string& offered) {
  CAPTURE(message);
  CHECK(contains(message, "collective rule '" + rule + "': algorithm '" + algorithm + "' does not offer " +
                              collective + "; it offers " + offered + "."));
  CHECK(contains(message, "Algorithms that offer " + collective + ": "));
}

}  // namespace

TEST_CASE("dist::set_algorithms refuses a rule whose algorithm lacks the collective, naming what it offers") {
  const RestoreRulesAndKeys restore;
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  const std::string before = ts::dist::algorithms();

  const std::string bruck =
      plugin_test::error_of<ts::ConfigError>([] { ts::dist::set_algorithms("all_reduce:bruck;*:direct"); });
  check_names_offers(bruck, "all_reduce:bruck", "bruck", "all_reduce", "all_gather, all_to_all");
  // The algorithms that do offer all_reduce, and none that does not.
  for (const char* offering : {"direct", "rabenseifner", "rd", "ring", "tree"})
    CHECK_MESSAGE(contains(bruck, offering), offering);
  CHECK_FALSE(contains(bruck.substr(bruck.find("Algorithms that offer")), "bruck"));

  // With a size range, and with the offending rule after good ones: the rule is named as written.
  check_names_offers(plugin_test::error_of<ts::ConfigError>([] {
                       ts::dist::set_algorithms("all_gather:ring;reduce_scatter[0-64K]:tree;*:direct");
                     }),
                     "reduce_scatter[0-64K]:tree", "tree", "reduce_scatter", "all_reduce, broadcast, reduce");
  check_names_offers(
      plugin_test::error_of<ts::ConfigError>([] { ts::dist::set_algorithms("broadcast:ring"); }),
      "broadcast:ring", "ring", "broadcast", "all_reduce, all_gather, reduce_scatter");

  // The rejected rules leave the rules in force as they were.
  CHECK(ts::dist::algorithms() == before);
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 1024) == "ring");

  // A '*' rule covers what its algorithm offers and leaves the rest to later rules: accepted.
  ts::dist::set_algorithms("*:bruck;*:direct");
  CHECK(ts::dist::algorithm_for("all_gather", 4, 1024) == "bruck");
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 1024) == "direct");
  // A rule naming a collective its algorithm offers is accepted as before.
  ts::dist::set_algorithms("all_to_all:bruck;broadcast:tree;*:direct");
  CHECK(ts::dist::algorithm_for("all_to_all", 4, 1024) == "bruck");
}

TEST_CASE("a configuration file's rule whose algorithm lacks the collective names the file and key") {
  const RestoreRulesAndKeys restore;
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  const std::string message = plugin_test::error_of<ts::ConfigError>([] {
    configure_offers_file("[collectives]\nalgorithms = \"all_gather:ring;all_reduce:bruck;*:direct\"\n");
  });
  CHECK(contains(message, "tessera.toml: [collectives] algorithms"));
  check_names_offers(message, "all_reduce:bruck", "bruck", "all_reduce", "all_gather, all_to_all");
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 1024) == "ring");
}

TEST_CASE("TESSERA_COLL's rule whose algorithm lacks the collective names the variable") {
  const RestoreRulesAndKeys restore;
  const ScopedEnv coll("TESSERA_COLL", "all_to_all:rd");
  const std::string message = plugin_test::error_of<ts::ConfigError>([] { ts::configure(ts::Config{}); });
  CHECK(contains(message, "TESSERA_COLL='all_to_all:rd'"));
  check_names_offers(message, "all_to_all:rd", "rd", "all_to_all", "all_reduce, all_gather, reduce_scatter");
}

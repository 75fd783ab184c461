// The tuner component (SDK 1.5): [collectives] tuner names a tuner plugin that reprices or vetoes
// the candidates of the rule "auto". Judged by the algorithm a collective really runs (CommCounter)
// and by its result against sums computed here; a tuner that fails in any way is worked around
// with a warning naming it; changing the tuner or its parameters makes "auto" choose again; the
// host rejects malformed tuner tables at load. The tuners live in their own directory
// (tests/plugin/CMakeLists.txt), put on the search path by each configuration here.

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "log/log.hpp"
#include "log_capture.hpp"
#include "plugin_log.hpp"
#include "plugin_test_support.hpp"

namespace fs = std::filesystem;
namespace ts = tessera;
using plugin_test::contains;

namespace {

const std::vector<std::string> kTunerPlugins = {"tuner-prefer", "tuner-fails",    "tuner-throws",
                                                "tuner-nan",    "tuner-negative", "tuner-vetoes-all",
                                                "tuner-probe"};

constexpr int kTunedRanks = 8;
constexpr int64_t kTunedCount = 16 * 1024;  // 64 KiB of float32 per rank

// A configuration: the tuners' directory on the search path, `tuner` in force ("" for none) and
// tuner-prefer's parameters. It sets no rules (TunerCleanup does, once): setting rules alone makes
// "auto" choose again, which would hide whether a change of tuner does.
ts::Config tuned(const std::string& tuner, const std::string& prefer = "", const std::string& veto = "") {
  ts::Config config;
  config.plugin_search_path = {TESSERA_TUNER_TEST_PLUGIN_DIR};
  config.collective_tuner = tuner;
  config.plugin_parameters["tuner-prefer"] = {{"prefer", prefer}, {"veto", veto}};
  return config;
}

// "all_reduce:auto" for the scope; then the rules put back (configure leaves them when a Config
// has none), and what ResetAndUnload does.
struct TunerCleanup {
  std::string rules = ts::dist::algorithms();
  plugin_test::ResetAndUnload reset{kTunerPlugins};
  TunerCleanup() { ts::dist::set_algorithms("all_reduce:auto"); }
  ~TunerCleanup() {
    try {
      ts::dist::set_algorithms(rules);
    } catch (const std::exception& e) {
      FAIL_CHECK("restoring the rules failed: " << e.what());
    }
  }
};

struct TunedRun {
  std::string algorithm;  // as CommCounter saw it
  bool sums_right = false;
};

// One all_reduce (sum) over kTunedRanks ranks whose rank r holds r + 1 everywhere; every rank must
// get 1 + 2 + ... + p, computed here.
TunedRun tuned_all_reduce() {
  ts::LocalMode mode(kTunedRanks);
  ts::Tensor x = ts::rank_map([](int r) { return ts::full({kTunedCount}, static_cast<float>(r + 1)); });
  const ts::CommCounter counter;
  ts::dist::all_reduce(x);
  TunedRun run;
  for (const ts::CommCounter::Entry& entry : counter.entries())
    if (entry.collective == "all_reduce") run.algorithm = entry.algorithm;
  const ts::Tensor expected =
      ts::full({kTunedCount}, static_cast<float>(kTunedRanks * (kTunedRanks + 1)) / 2);
  run.sums_right = true;
  for (int r = 0; r < kTunedRanks; ++r) run.sums_right = run.sums_right && ts::equal(x.shard(r), expected);
  return run;
}

std::string tuned_choice() { return ts::dist::algorithm_for("all_reduce", kTunedRanks, kTunedCount * 4); }

// The untuned choice for the runs here, and two other algorithms that apply, for a tuner to move
// the choice to: the first two of ring, rd and tree that are not the untuned choice.
struct Untuned {
  std::string algorithm;
  std::string target;
  std::string other;
};
Untuned untuned_choice() {
  ts::configure(tuned(""));
  const TunedRun run = tuned_all_reduce();
  CHECK(run.sums_right);
  std::vector<std::string> others;
  for (const char* name : {"ring", "rd", "tree"})
    if (run.algorithm != name) others.emplace_back(name);
  return {run.algorithm, others[0], others[1]};
}

}  // namespace

TEST_CASE(
    "a tuner's veto keeps auto from an algorithm, its price makes auto take one, and results stay right") {
  const TunerCleanup cleanup;
  const Untuned untuned = untuned_choice();
  CAPTURE(untuned.algorithm);

  ts::configure(tuned("prefer", "", untuned.algorithm));  // vetoes the untuned choice
  TunedRun run = tuned_all_reduce();
  CHECK(run.algorithm != untuned.algorithm);
  CHECK(run.algorithm == tuned_choice());
  CHECK(run.sums_right);

  ts::configure(tuned("prefer", untuned.target));  // priced at 0 s: nothing is cheaper
  run = tuned_all_reduce();
  CHECK(run.algorithm == untuned.target);
  CHECK(tuned_choice() == untuned.target);
  CHECK(run.sums_right);

  // A veto wins over a price: the preferred algorithm, vetoed too, is not taken.
  ts::configure(tuned("prefer", untuned.target, untuned.target));
  run = tuned_all_reduce();
  CHECK(run.algorithm == untuned.algorithm);
  CHECK(run.sums_right);
}

TEST_CASE("changing the tuner or its parameters makes auto choose again") {
  const TunerCleanup cleanup;
  const Untuned untuned = untuned_choice();
  // The same call each time: a choice kept from before a change would show as the old algorithm.
  ts::configure(tuned("prefer", untuned.target));
  CHECK(tuned_all_reduce().algorithm == untuned.target);
  ts::configure(tuned(""));  // no tuner
  CHECK(tuned_all_reduce().algorithm == untuned.algorithm);
  ts::configure(tuned("prefer", untuned.target));
  CHECK(tuned_all_reduce().algorithm == untuned.target);
  ts::configure(tuned("prefer", untuned.other));  // only a parameter changes
  const TunedRun run = tuned_all_reduce();
  CHECK(run.algorithm == untuned.other);
  CHECK(run.sums_right);
  ts::configure(tuned("throws", untuned.target));  // another tuner, which fails: the host's own costs
  CHECK(tuned_all_reduce().algorithm == untuned.algorithm);
}

TEST_CASE(
    "a tuner that fails, throws, prices NaN or below zero, or vetoes everything is ignored with a warning") {
  const TunerCleanup cleanup;
  const Untuned untuned = untuned_choice();
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"fails", "it failed with status 5 (INTERNAL): no measurements for this machine"},
      {"throws", "tune threw: the tuning database is locked"},
      {"nan", "at nan seconds; a price must be a finite number of seconds >= 0"},
      {"negative", "at -1 seconds; a price must be a finite number of seconds >= 0"},
      {"vetoes-all", "it vetoed every applicable algorithm ("}};
  for (const auto& [fault_name, problem] : faults) {
    const std::string& fault = fault_name;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(fault);
    ts::configure(tuned(fault));
    const tessera_test::LogCapture capture;
    const TunedRun run = tuned_all_reduce();
    CHECK(run.algorithm == untuned.algorithm);
    CHECK(run.sums_right);
    const std::string log = capture.text.str();
    CAPTURE(log);
    CHECK(contains(log, "tuner '" + fault + "' of plugin 'tuner-" + fault + "' ("));
    CHECK(contains(log, "gave an answer \"auto\" cannot use, so its own costs decide: "));
    CHECK(contains(log, problem));
    CHECK(contains(log, "auto chose '" + untuned.algorithm + "'"));
  }
}

TEST_CASE(
    "an unknown tuner is a configuration error naming it, where it came from and the available tuners") {
  const TunerCleanup cleanup;
  const Untuned untuned = untuned_choice();
  ts::configure(tuned("prefer", untuned.target));
  const std::string available = "available tuners: fails, nan, negative, prefer, probe, throws, vetoes-all";
  std::string message =
      plugin_test::error_of<ts::ConfigError>([&] { ts::configure(tuned("nosuch", untuned.target)); });
  CAPTURE(message);
  CHECK(contains(message, "[collectives] tuner: unknown tuner 'nosuch'; " + available));
  CHECK(contains(message, "libtessera-tuner-*.so"));
  CHECK(tuned_all_reduce().algorithm == untuned.target);  // the tuner in force is kept
  {
    const plugin_test::ScopedEnv variable("TESSERA_TUNER", "nosuch-either");
    message = plugin_test::error_of<ts::ConfigError>([] { ts::configure(tuned("prefer")); });
    CAPTURE(message);
    CHECK(contains(message, "TESSERA_TUNER='nosuch-either': unknown tuner 'nosuch-either'; " + available));
  }
  // The variable wins over the configuration's tuner.
  const plugin_test::ScopedEnv variable("TESSERA_TUNER", "prefer");
  ts::configure(tuned("throws", untuned.target));
  CHECK(tuned_all_reduce().algorithm == untuned.target);
}

TEST_CASE("a tuner is told the call, the topology's nodes and slowest path, and every candidate's cost") {
  const TunerCleanup cleanup;
  const plugin_test::PluginLog log;
  const std::string preset = ts::default_topology_preset();
  ts::configure(tuned("probe"));
  // 12 ranks in nodes of 4 (intra-node links 1 us and 300 GB/s, between nodes 10 us and 25 GB/s):
  // the slowest path from rank 0 is to another node's rank of another local index, two hops.
  ts::set_default_topology("nodes:4");
  CHECK_FALSE(ts::dist::algorithm_for("all_reduce", 12, 4096).empty());
  ts::set_default_topology("");
  CHECK_FALSE(ts::dist::algorithm_for("all_reduce", 8, 4096).empty());
  ts::set_default_topology(preset);
  const auto line = [](int p, int nodes, int per_node, double latency, double bandwidth) {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "tune 0 p=%d bytes=4096 nodes=%d per_node=%d latency=%.6g bandwidth=%.6g "
                  "request=same",
                  p, nodes, per_node, latency, bandwidth);
    return std::string(text);
  };
  const std::vector<std::string> lines = log.lines();
  CAPTURE(fmt::format("{}", fmt::join(lines, "\n")));
  REQUIRE(!lines.empty());
  CHECK(lines.front() == line(12, 3, 4, 10e-6 + 1e-6, 1.0 / (1.0 / 25e9 + 1.0 / 300e9)));
  // Fully connected (equal links of 2 us and 100 GB/s) states no nodes.
  CHECK(log.count(line(8, 0, 0, 2e-6, 100e9)) == 1);
  // Each call's table: every applicable algorithm, costed by the model (the built-ins have no
  // estimate of their own), "direct" and "ring" among them.
  CHECK(log.count(" direct *") == 2);
  CHECK(log.count(" ring *") == 2);
  for (const std::string& entry : lines)
    if (entry.starts_with(" ")) CHECK(entry.ends_with(" model"));
}

TEST_CASE("unloading the tuner's plugin warns, and auto goes back to the host's own costs") {
  const TunerCleanup cleanup;
  const Untuned untuned = untuned_choice();
  ts::configure(tuned("prefer", untuned.target));
  CHECK(tuned_all_reduce().algorithm == untuned.target);
  const tessera_test::LogCapture capture;
  ts::unload_plugin("tuner-prefer");
  CHECK(contains(capture.text.str(),
                 "unloaded plugin 'tuner-prefer', which provides the tuner in force ('prefer')"));
  CHECK(tuned_all_reduce().algorithm == untuned.algorithm);
  // Loaded again (by file, as a program may), the tuner in force is back.
  ts::load_plugin((fs::path(TESSERA_TUNER_TEST_PLUGIN_DIR) / "libtessera-tuner-prefer.so").string());
  ts::configure(tuned("prefer", untuned.target));
  CHECK(tuned_all_reduce().algorithm == untuned.target);
}

TEST_CASE("a malformed tuner table is rejected at load, naming the plugin and the defect") {
  const std::vector<std::pair<std::string, std::string>> defects = {
      {"small",
       "tuner 'bad-tuner-small': tessera_tuner struct is 32 bytes, the host needs at least 40 (SDK 1.5, up "
       "to field 'tune')"},
      {"null-tune", "tuner 'bad-tuner-null-tune': required function 'tune' is NULL"},
      {"no-name", "tuner 'bad-tuner-no-name': the tuner table has no name"},
      {"sdk14",
       "tuner 'bad-tuner-sdk14': the tuner component (kind 5) came with SDK 1.5, but the plugin claims SDK "
       "1.4"}};
  for (const auto& [defect_name, problem] : defects) {
    const std::string& defect = defect_name;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(defect);
    const std::string message = plugin_test::load_error(plugin_test::test_plugin("bad-tuner-" + defect));
    CAPTURE(message);
    CHECK(contains(message, "libtessera-bad-tuner-" + defect + ".so"));
    CHECK(contains(message, problem));
    CHECK_FALSE(plugin_test::is_loaded("bad-tuner-" + defect));
  }
  plugin_test::check_cpu_still_works();
}

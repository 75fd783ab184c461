// Every key of tessera.toml, written to a file and applied with configure(Config::from_file(...)),
// judged by its effect: the algorithm a collective really uses, the rank pool's size, the cost
// estimate over the topology, a trace file with events in it, log lines that do or do not reach
// stderr, plugins loaded and the backend new tensors land on. Then each environment variable over
// the file. (TESSERA_CONFIG itself is tested in fresh processes: see CMakeLists.txt here.)
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "plugin/plugin_test_support.hpp"

namespace fs = std::filesystem;
namespace ts = tessera;
using plugin_test::contains;
using plugin_test::ScopedEnv;

namespace {

constexpr int kRanks = 8;
constexpr int64_t kElements = 4096;  // 16 KiB of float32 per rank

// A directory of its own for one test's files, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    const std::string name =
        "tessera-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++);
    path = fs::temp_directory_path() / name;
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path, error);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

// Writes `toml` as DIR/tessera.toml and applies it the way a program does.
void configure_file(const TempDir& dir, const std::string& toml) {
  const fs::path file = dir.path / "tessera.toml";
  std::ofstream(file) << toml;
  ts::configure(ts::Config::from_file(file));
}

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Puts back what a test case configures, so the cases also pass run one after another in one
// process: defaults for every key (an empty Config), then the rules and topology saved first.
struct RestoreConfiguration {
  std::string rules = ts::dist::algorithms();
  std::string topology = ts::default_topology_preset();
  ~RestoreConfiguration() {
    try {
      if (ts::tracing()) ts::stop_trace();
      ts::configure(ts::Config{});
      ts::dist::set_algorithms(rules);
      ts::set_default_topology(topology);
      if (plugin_test::is_loaded("backend-testdev")) ts::unload_plugin("backend-testdev");
    } catch (const std::exception& e) {
      FAIL_CHECK("restoring the configuration failed: " << e.what());
    }
  }
};

struct Counted {
  std::vector<ts::CommCounter::Entry> entries;
  double seconds = 0;
};

// One all_reduce and one all_gather over kRanks ranks, counted, in a new world (which takes the
// default topology in force when it is made).
Counted run_collectives() {
  ts::LocalMode mode(kRanks);
  const ts::CommCounter counter;
  ts::Tensor x = ts::ones({kElements}, ts::TensorOptions().backend("cpu"));
  ts::dist::all_reduce(x);
  ts::Tensor gathered = ts::zeros({kRanks * kElements}, ts::TensorOptions().backend("cpu"));
  ts::dist::all_gather_into_tensor(gathered, x);
  return {counter.entries(), counter.seconds()};
}

// The algorithm the counted call of `collective` used.
std::string used(const Counted& counted, const std::string& collective) {
  for (const ts::CommCounter::Entry& entry : counted.entries)
    if (entry.collective == collective) return entry.algorithm;
  return "(not called)";
}

// What the library writes to stderr (fd 2) while `body` runs.
template <class Body>
std::string stderr_of(Body&& body) {
  std::fflush(stderr);
  const fs::path capture = fs::temp_directory_path() / ("tessera-stderr-" + std::to_string(::getpid()));
  std::FILE* file = std::fopen(capture.c_str(), "w+");
  REQUIRE(file != nullptr);
  const int saved = ::dup(2);
  ::dup2(::fileno(file), 2);
  try {
    body();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(file);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::fclose(file);
  std::string text = read_file(capture);
  fs::remove(capture);
  return text;
}

// Loads the testdev plugin afresh (it logs "loaded plugin" at info) and returns what reached stderr.
std::string log_of_loading_testdev() {
  if (plugin_test::is_loaded("backend-testdev")) ts::unload_plugin("backend-testdev");
  return stderr_of([] { ts::load_plugin(plugin_test::testdev_file().string()); });
}

}  // namespace

TEST_CASE("[collectives] algorithms decides the algorithm collectives use") {
  const RestoreConfiguration restore;
  // The built-in defaults first (recursive doubling for a small all_reduce), so the change below
  // is the file's doing.
  CHECK(used(run_collectives(), "all_reduce") == "rd");
  const TempDir dir;
  configure_file(dir, "[collectives]\nalgorithms = \"all_reduce:ring;all_gather:bruck;*:direct\"\n");
  const Counted counted = run_collectives();
  CHECK(used(counted, "all_reduce") == "ring");
  CHECK(used(counted, "all_gather") == "bruck");
  CHECK(ts::dist::algorithm_for("broadcast", kRanks, 1024) == "direct");
}

TEST_CASE("[execution] threads sizes the rank pool") {
  const RestoreConfiguration restore;
  const TempDir dir;
  for (int threads : {1, 3, 7}) {
    configure_file(dir, "[execution]\nthreads = " + std::to_string(threads) + "\n");
    CHECK(ts::threads() == threads);
    // Ops still run on every rank with the pool that size.
    const Counted counted = run_collectives();
    CHECK(used(counted, "all_reduce") == "rd");
  }
}

TEST_CASE("[topology] preset is the topology collectives are estimated over") {
  const RestoreConfiguration restore;
  const double fully_connected = run_collectives().seconds;
  const TempDir dir;
  configure_file(dir, "[topology]\npreset = \"nodes:2\"\n");
  CHECK(ts::default_topology(kRanks).name() == ts::Topology::preset("nodes:2", kRanks).name());
  const double two_nodes = run_collectives().seconds;
  CAPTURE(fully_connected);
  CAPTURE(two_nodes);
  // Half the traffic crosses the slower link between the nodes.
  CHECK(two_nodes > fully_connected);
}

TEST_CASE("[trace] file records collectives into a file relative to the configuration file") {
  const RestoreConfiguration restore;
  const TempDir dir;
  configure_file(dir, "[trace]\nfile = \"run.json\"\n");
  REQUIRE(ts::tracing());
  (void)run_collectives();
  ts::stop_trace();  // what the exit handler does
  const std::string trace = read_file(dir.path / "run.json");
  CHECK(contains(trace, "traceEvents"));
  CHECK(contains(trace, "all_reduce"));
  CHECK(contains(trace, "all_gather"));
}

TEST_CASE("[trace] file in a missing directory is an error naming the key") {
  const RestoreConfiguration restore;
  const TempDir dir;
  const std::string message =
      plugin_test::error_of([&] { configure_file(dir, "[trace]\nfile = \"no-such-dir/run.json\"\n"); });
  CAPTURE(message);
  CHECK(contains(message, "[trace] file"));
  CHECK(contains(message, "no-such-dir"));
  CHECK_FALSE(ts::tracing());
}

TEST_CASE("[log] level filters what the library logs") {
  const RestoreConfiguration restore;
  const TempDir dir;
  configure_file(dir, "[log]\nlevel = \"info\"\n");
  CHECK(contains(log_of_loading_testdev(), "loaded plugin 'backend-testdev'"));
  configure_file(dir, "[log]\nlevel = \"warn\"\n");
  CHECK(log_of_loading_testdev().empty());
}

TEST_CASE("[plugins] search_path and load load a plugin by name, and [backend] default makes tensors on it") {
  const RestoreConfiguration restore;
  const TempDir dir;
  // Relative to the configuration file, as a file kept beside its plugins would say it.
  const fs::path relative = fs::relative(TESSERA_TEST_PLUGIN_DIR, dir.path);
  CAPTURE(relative);
  configure_file(dir, "[plugins]\nsearch_path = [\"" + relative.string() +
                          "\"]\nload = [\"backend-testdev\"]\n[backend]\ndefault = \"testdev\"\n");
  CHECK(plugin_test::is_loaded("backend-testdev"));
  CHECK(ts::default_backend() == "testdev");
  CHECK(ts::full({2}, 4.0f).backend() == "testdev");
  CHECK(ts::full({2}, 4.0f).to_vector<float>() == std::vector<float>{4, 4});
}

TEST_CASE("[plugins] load of a name found nowhere lists the directories searched") {
  const RestoreConfiguration restore;
  const TempDir dir;
  fs::create_directories(dir.path / "empty");
  const std::string message = plugin_test::error_of(
      [&] { configure_file(dir, "[plugins]\nsearch_path = [\"empty\"]\nload = [\"no-such-plugin\"]\n"); });
  CAPTURE(message);
  CHECK(contains(message, "plugin 'no-such-plugin' not found"));
  CHECK(contains(message, (dir.path / "empty").string()));
}

TEST_CASE("an unknown default backend lists the backends that are available") {
  const RestoreConfiguration restore;
  const std::string message = plugin_test::error_of([] { ts::set_default_backend("cuda"); });
  CAPTURE(message);
  CHECK(contains(message, "no backend named 'cuda'"));
  CHECK(contains(message, "available backends: cpu"));  // cpu is loaded: never "none"
  CHECK(ts::default_backend() == "cpu");
}

namespace {

// A configuration file's text that puts the test tuners on the search path, asks "auto" to choose
// all_reduce and makes the tuner "prefer" (when it is in force) price `preferred` at 0 s.
std::string tuner_toml(const std::string& tuner_line, const std::string& preferred) {
  return "[plugins]\nsearch_path = [\"" TESSERA_TEST_PLUGIN_DIR
         "/tuners\"]\n[plugins.tuner-prefer]\nprefer = \"" +
         preferred + "\"\n[collectives]\nalgorithms = \"all_reduce:auto;*:direct\"\n" + tuner_line;
}

// What "auto" takes without a tuner, and an algorithm it does not take, for a tuner to prefer.
std::pair<std::string, std::string> untuned_and_other(const TempDir& dir) {
  configure_file(dir, tuner_toml("", "ring"));
  const std::string untuned = used(run_collectives(), "all_reduce");
  return {untuned, untuned == "ring" ? "rd" : "ring"};
}

}  // namespace

TEST_CASE("[collectives] tuner names the tuner that reprices auto's candidates") {
  const RestoreConfiguration restore;
  const TempDir dir;
  const auto [untuned, other] = untuned_and_other(dir);
  configure_file(dir, tuner_toml("tuner = \"prefer\"\n", other));
  CHECK(used(run_collectives(), "all_reduce") == other);
  CHECK(ts::current_config().collective_tuner == "prefer");
  // A file without the key has no tuner: the choice is auto's own again.
  configure_file(dir, tuner_toml("", other));
  CHECK(used(run_collectives(), "all_reduce") == untuned);
}

TEST_CASE("an unknown [collectives] tuner names the file, the key, the value and the tuners available") {
  const RestoreConfiguration restore;
  const TempDir dir;
  const std::string message =
      plugin_test::error_of([&] { configure_file(dir, tuner_toml("tuner = \"warp\"\n", "ring")); });
  CAPTURE(message);
  CHECK(contains(message, "tessera.toml: [collectives] tuner: unknown tuner 'warp'; available tuners: "));
  CHECK(contains(message, "prefer"));
  // The rules of the same file were applied before the tuner, and stay.
  CHECK(ts::dist::algorithms() == "all_reduce:auto;*:direct");
}

// Environment variables win over the file, key by key.

TEST_CASE("TESSERA_TUNER wins over [collectives] tuner") {
  const RestoreConfiguration restore;
  const TempDir dir;
  const auto [untuned, other_tuner] = untuned_and_other(dir);
  const std::string& other = other_tuner;  // named again: clang 14 cannot capture a structured binding
  {
    // The file's tuner fails on every call (so auto's own choice stands); the variable's prefers.
    const ScopedEnv tuner("TESSERA_TUNER", "prefer");
    configure_file(dir, tuner_toml("tuner = \"throws\"\n", other));
    CHECK(used(run_collectives(), "all_reduce") == other);
  }
  const ScopedEnv tuner("TESSERA_TUNER", "warp");
  const std::string message =
      plugin_test::error_of([&] { configure_file(dir, tuner_toml("tuner = \"prefer\"\n", other)); });
  CAPTURE(message);
  CHECK(contains(message, "TESSERA_TUNER='warp': unknown tuner 'warp'; available tuners: "));
}

TEST_CASE("TESSERA_COLL wins over [collectives] algorithms") {
  const RestoreConfiguration restore;
  const ScopedEnv coll("TESSERA_COLL", "all_reduce:direct");
  const TempDir dir;
  configure_file(dir, "[collectives]\nalgorithms = \"all_reduce:rd;all_gather:bruck;*:direct\"\n");
  const Counted counted = run_collectives();
  CHECK(used(counted, "all_reduce") == "direct");
  CHECK(used(counted, "all_gather") == "direct");  // the file's rules are not in force at all
}

TEST_CASE("an empty TESSERA_COLL is unset: the file's rules are in force") {
  const RestoreConfiguration restore;
  const ScopedEnv coll("TESSERA_COLL", "");
  const TempDir dir;
  configure_file(dir, "[collectives]\nalgorithms = \"all_reduce:ring;all_gather:bruck;*:direct\"\n");
  const Counted counted = run_collectives();
  CHECK(used(counted, "all_reduce") == "ring");  // not the built-in rules' rd
  CHECK(used(counted, "all_gather") == "bruck");
}

TEST_CASE("TESSERA_THREADS wins over [execution] threads") {
  const RestoreConfiguration restore;
  const ScopedEnv threads("TESSERA_THREADS", "2");
  const TempDir dir;
  configure_file(dir, "[execution]\nthreads = 5\n");
  CHECK(ts::threads() == 2);
}

TEST_CASE("TESSERA_LOG_LEVEL wins over [log] level") {
  const RestoreConfiguration restore;
  const TempDir dir;
  {
    const ScopedEnv level("TESSERA_LOG_LEVEL", "warn");
    configure_file(dir, "[log]\nlevel = \"info\"\n");
    CHECK(log_of_loading_testdev().empty());
  }
  const ScopedEnv level("TESSERA_LOG_LEVEL", "info");
  configure_file(dir, "[log]\nlevel = \"error\"\n");
  CHECK(contains(log_of_loading_testdev(), "loaded plugin 'backend-testdev'"));
}

TEST_CASE("TESSERA_TRACE wins over [trace] file") {
  const RestoreConfiguration restore;
  const TempDir dir;
  const ScopedEnv trace("TESSERA_TRACE", (dir.path / "from-variable.json").string());
  configure_file(dir, "[trace]\nfile = \"from-file.json\"\n");
  REQUIRE(ts::tracing());
  (void)run_collectives();
  ts::stop_trace();
  CHECK(contains(read_file(dir.path / "from-variable.json"), "all_reduce"));
  CHECK_FALSE(fs::exists(dir.path / "from-file.json"));
}

TEST_CASE("TESSERA_PLUGIN_PATH is searched before [plugins] search_path") {
  const RestoreConfiguration restore;
  const TempDir dir;
  fs::create_directories(dir.path / "empty");
  const ScopedEnv path("TESSERA_PLUGIN_PATH", TESSERA_TEST_PLUGIN_DIR);
  configure_file(dir, "[plugins]\nsearch_path = [\"empty\"]\nload = [\"backend-testdev\"]\n");
  CHECK(plugin_test::is_loaded("backend-testdev"));
}

TEST_CASE("a bad value names where it came from: the variable, or the file and key") {
  const RestoreConfiguration restore;
  const TempDir dir;
  {
    const ScopedEnv coll("TESSERA_COLL", "*:warp");
    const std::string message = plugin_test::error_of([&] { configure_file(dir, ""); });
    CAPTURE(message);
    CHECK(contains(message, "TESSERA_COLL='*:warp'"));
    CHECK(contains(message, "unknown algorithm 'warp'"));
  }
  const std::string message =
      plugin_test::error_of([&] { configure_file(dir, "[collectives]\nalgorithms = \"*:warp\"\n"); });
  CAPTURE(message);
  CHECK(contains(message, "tessera.toml: [collectives] algorithms"));
  CHECK(contains(message, "unknown algorithm 'warp'"));
  // The rules in force are untouched by the rejected ones.
  CHECK(used(run_collectives(), "all_reduce") == "rd");
}

TEST_CASE("[world] values are checked with the key named") {
  const auto rejects = [](const std::string& toml, const std::string& part) {
    CAPTURE(toml);
    try {
      (void)ts::Config::from_string(toml);
      FAIL("accepted");
    } catch (const ts::ConfigError& e) {
      CHECK(contains(e.what(), part));
    }
  };
  rejects("[world]\nranks_per_process = 0\n", "key 'world.ranks_per_process': expected an integer 1..65536");
  rejects("[world]\ntimeout = \"-3s\"\n", "'-3s' is not a timeout");
  rejects("[world]\ntimeout = \"5 hours\"\n", "'5 hours' is not a timeout");
  rejects("[world]\ncheck_collectives = \"yes\"\n", "key 'world.check_collectives': expected true or false");
  rejects("[world]\nprocesses = 4\n", "key 'world.processes': unknown key");
  CHECK(ts::parse_timeout("250ms", "t") == 250);
  CHECK(ts::parse_timeout("60s", "t") == 60000);
  CHECK(ts::parse_timeout("2m", "t") == 120000);
  CHECK(ts::parse_timeout("7", "t") == 7000);
}

TEST_CASE("current_config is what configure last applied, so a few keys can change and the rest stay") {
  const RestoreConfiguration restore;
  const TempDir dir;
  configure_file(dir, "[execution]\nthreads = 3\n[topology]\npreset = \"nodes:2\"\n");
  ts::Config config = ts::current_config();
  CHECK(config.threads == 3);
  CHECK(config.topology == "nodes:2");
  config.threads = 5;  // change one key only
  ts::configure(config);
  CHECK(ts::threads() == 5);
  CHECK(ts::current_config().topology == "nodes:2");  // kept
  // A configuration that fails is not the one in force.
  ts::Config bad = ts::current_config();
  bad.default_backend = "no-such-backend";
  CHECK_THROWS_AS(ts::configure(bad), ts::Error);
  CHECK(ts::current_config().default_backend == "cpu");
}

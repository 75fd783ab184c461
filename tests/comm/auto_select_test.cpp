// The selection rule "auto" (SDK 1.3 tuning): the applicable algorithm with the lowest estimate,
// the algorithm's own or the cost model's of its schedule; ties by name; explicit rules first; an
// estimate that cannot be used is replaced by the model (with one warning naming the plugin); a
// candidate whose schedule does not build is skipped for the next-cheapest.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "comm/components.hpp"
#include "comm/cost_model.hpp"
#include "comm/request_topology.hpp"
#include "comm/run_collective.hpp"
#include "comm_plugin_support.hpp"
#include "log/log.hpp"
#include "log_capture.hpp"
#include "world/world.hpp"

using namespace comm_test;

namespace {

// Unloads a test plugin when the scope ends, so that later cases in the same process do not see it.
struct Loaded {
  explicit Loaded(std::string plugin) : name(std::move(plugin)) { ensure_loaded(name); }
  ~Loaded() { ts::unload_plugin(name); }
  std::string name;
};

constexpr int64_t kMiB = int64_t{1} << 20;

// An all_reduce request of `bytes` float32 over world ranks 0..p-1 of `topology`, as a call makes it.
struct Request {
  Request(int p, int64_t bytes, const ts::Topology& t) : topology(t), members(static_cast<size_t>(p)) {
    std::iota(members.begin(), members.end(), 0);
    request =
        ts::comm::make_request(TESSERA_COLL_ALL_REDUCE, p, bytes / 4, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
    where = {&topology, members.data(), p};
    ts::comm::attach_topology(request, where);
  }
  ts::Topology topology;
  std::vector<int> members;
  ts::comm::RequestTopology where;
  tessera_collective_request request{};
};

}  // namespace

TEST_CASE("auto is a rule target that needs no plugin, alone or after other rules") {
  ScopedRules rules("all_reduce[0-1K]:direct;all_reduce:auto;*:auto");
  CHECK(ts::dist::algorithms() == "all_reduce[0-1024]:direct;all_reduce:auto;*:auto");
  CHECK_THROWS_WITH_AS(ts::dist::set_algorithms("all_reduce:autox"),
                       doctest::Contains("unknown algorithm 'autox'; known algorithms: "), ts::ConfigError);
  // "auto" alone is every collective's rule (as in [collectives] algorithms = "auto").
  ts::dist::set_algorithms(" auto ");
  CHECK(ts::dist::algorithms() == "*:auto");
  // Every algorithm offering the collective is a candidate: broadcast goes to one that offers it.
  const std::string broadcast = ts::dist::algorithm_for("broadcast", 4, 4096);
  CHECK((broadcast == "tree" || broadcast == "direct"));
}

TEST_CASE("auto takes hier where its estimate is lowest: 12 ranks in nodes of 4, large messages") {
  ensure_loaded("coll-hier");
  ScopedTopology topology("nodes:4");
  ScopedRules rules("all_reduce:auto");
  CHECK(ts::dist::algorithm_for("all_reduce", 12, 4 * kMiB) == "hier");
  // And a call runs it (the counter names the algorithm that ran).
  ts::LocalMode mode(12);
  ts::Tensor x = per_rank(12, [](int r) { return ts::full({kMiB / 4}, static_cast<double>(r)); });
  ts::CommCounter counter;
  ts::dist::all_reduce(x, ts::ReduceOp::SUM);
  CHECK(algorithm_seen(counter) == "hier");
  CHECK(ts::equal(x.shard(7), ts::full({kMiB / 4}, 66.0)));  // 0 + 1 + ... + 11
}

TEST_CASE("auto takes another algorithm where hier's estimate is higher: small messages, fully connected") {
  ensure_loaded("coll-hier");
  ScopedRules rules("all_reduce:auto");
  {
    ScopedTopology topology("nodes:4");  // latency-bound: recursive doubling crosses nodes once
    CHECK(ts::dist::algorithm_for("all_reduce", 8, 64) != "hier");
  }
  ScopedTopology topology("");
  for (int p : {2, 4, 8}) {
    CAPTURE(p);
    CHECK(ts::dist::algorithm_for("all_reduce", p, 64) != "hier");
  }
  ts::LocalMode mode(8);
  ts::Tensor x = per_rank(8, [](int r) { return ts::full({16}, static_cast<double>(r)); });
  ts::CommCounter counter;
  ts::dist::all_reduce(x, ts::ReduceOp::SUM);
  const std::string ran = algorithm_seen(counter);
  CHECK(ran != "hier");
  CHECK(ran == ts::dist::algorithm_for("all_reduce", 8, 64));
}

TEST_CASE("hier's own estimate agrees with the cost model of its schedule") {
  ensure_loaded("coll-hier");
  auto hier = tessera::comm::algorithm("hier");
  REQUIRE(hier != nullptr);
  for (int p : {8, 12, 16})
    for (int64_t bytes : {int64_t{256}, 64 * int64_t{1024}, 4 * kMiB}) {
      CAPTURE(p);
      CAPTURE(bytes);
      const Request q(p, bytes, ts::Topology::nodes(p, 4));
      REQUIRE(hier->check(q.request).empty());
      const std::optional<double> own = hier->estimate(q.request);
      REQUIRE(own.has_value());
      const double model =
          ts::comm::estimate(*ts::comm::cached_schedule("hier", q.request), q.members, q.topology, 4).seconds;
      CHECK(*own == doctest::Approx(model).epsilon(0.1));
    }
}

TEST_CASE("explicit rules before auto win, and auto's estimate does not override them") {
  ensure_loaded("coll-hier");
  ScopedTopology topology("nodes:4");
  {
    ScopedRules rules("all_reduce:ring;all_reduce:auto");
    CHECK(ts::dist::algorithm_for("all_reduce", 12, 4 * kMiB) == "ring");
  }
  {
    ScopedRules rules("all_reduce[0-1M]:direct;all_reduce:auto");
    CHECK(ts::dist::algorithm_for("all_reduce", 12, 4 * kMiB) == "hier");
    CHECK(ts::dist::algorithm_for("all_reduce", 12, 1024) == "direct");
  }
  {
    // A rule after auto never gets a say when auto finds an applicable algorithm.
    ScopedRules rules("all_reduce:auto;all_reduce:ring");
    CHECK(ts::dist::algorithm_for("all_reduce", 12, 4 * kMiB) == "hier");
  }
}

TEST_CASE(
    "auto uses an algorithm's own estimate and breaks ties by name, and loading or unloading re-chooses") {
  ScopedRules rules("all_reduce:auto");
  const std::string before = ts::dist::algorithm_for("all_reduce", 4, 4096);
  CHECK(before != "est-zero");
  {
    Loaded zero("coll-est-zero");  // estimates 0 s: nothing is cheaper
    CHECK(ts::dist::algorithm_for("all_reduce", 4, 4096) == "est-zero");
    // count 0: every schedule is empty (0 s by the model), so every candidate ties and the first
    // name wins: "direct" before "est-zero".
    CHECK(ts::dist::algorithm_for("all_reduce", 4, 0) == "direct");
  }
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 4096) == before);
}

TEST_CASE("an estimate that declines, or none, is costed by the model") {
  Loaded declines("coll-est-declines");
  Loaded none("coll-est-none");
  ScopedRules rules("all_reduce:auto");
  // Both build a gather-to-rank-0 all_reduce, which the model costs above the tuned ones at scale.
  const std::string chosen = ts::dist::algorithm_for("all_reduce", 8, 4 * kMiB);
  CHECK(chosen != "est-declines");
  CHECK(chosen != "est-none");
  // Declining is not an error: the estimate is asked and the model used instead.
  auto declining = tessera::comm::algorithm("est-declines");
  REQUIRE(declining != nullptr);
  const Request q(8, 4096, ts::Topology::fully_connected(8));
  CHECK(declining->has_estimate());
  CHECK_FALSE(declining->estimate(q.request).has_value());
  CHECK_FALSE(tessera::comm::algorithm("est-none")->has_estimate());
}

namespace {

// Every element of every rank's result of an all_reduce (sum) of `p` ranks whose rank r holds r + 1
// everywhere: 1 + 2 + ... + p, computed here and not by a collective.
void check_sums(const ts::Tensor& x, int p, int64_t count) {
  const float sum = static_cast<float>(p * (p + 1)) / 2;
  for (int r = 0; r < p; ++r) CHECK(ts::equal(x.shard(r), ts::full({count}, sum)));
}

ts::Tensor ranks_plus_one(int p, int64_t count) {
  return per_rank(p, [&](int r) { return ts::full({count}, static_cast<float>(r + 1)); });
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("an estimate that is NaN, negative, infinite or throws is costed by the model, with one warning") {
  ScopedRules rules("all_reduce:auto");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nan", "at nan seconds; an estimate must be a finite number of seconds >= 0"},
      {"negative", "at -1 seconds; an estimate must be a finite number of seconds >= 0"},
      {"inf", "at inf seconds; an estimate must be a finite number of seconds >= 0"},
      {"throws",
       "failed to estimate all_reduce (group size 4, count 1024, float32, sum): estimate threw: the "
       "tuning table is missing"}};
  for (const auto& [mode_name, problem] : cases) {
    const std::string& mode = mode_name;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(mode);
    // What auto takes without the plugin: its gather-to-rank-0 schedule costs more by the model.
    const std::string without = ts::dist::algorithm_for("all_reduce", 4, 4096);
    Loaded bad("coll-est-" + mode);
    const std::string name = "est-" + mode;
    tessera_test::LogCapture capture;
    ts::LocalMode local(4);
    for (const int64_t count : {int64_t{1024}, int64_t{2048}}) {  // two sizes: two choices, two estimates
      CAPTURE(count);
      ts::Tensor x = per_rank(4, [&](int r) { return ts::full({count}, static_cast<float>(r + 1)); });
      const ts::CommCounter counter;
      ts::dist::all_reduce(x, ts::ReduceOp::SUM);
      CHECK(algorithm_seen(counter) == without);
      for (int r = 0; r < 4; ++r) CHECK(ts::equal(x.shard(r), ts::full({count}, 10.0f)));  // 1 + 2 + 3 + 4
    }
    const std::string log = capture.text.str();
    CAPTURE(log);
    // The choice line shows the plugin costed by the model, not left out.
    const size_t chose = log.find("auto chose");
    REQUIRE(chose != std::string::npos);
    const size_t listed = log.find(name + " ", chose);
    REQUIRE(listed != std::string::npos);
    CHECK(log.substr(listed, log.find_first_of(",;\n", listed) - listed).ends_with("s (model)"));
    // One warning for the algorithm, however many estimates failed: it names the plugin, the value
    // and what an estimate must be.
    const std::string phrase = "the host costs its schedule with its own model instead";
    CHECK(occurrences(log, phrase) == 1);
    const size_t at = log.find(phrase);
    REQUIRE(at != std::string::npos);
    const size_t line_start = log.rfind('\n', at) == std::string::npos ? 0 : log.rfind('\n', at) + 1;
    const std::string line = log.substr(line_start, log.find('\n', at) - line_start);
    CAPTURE(line);
    CHECK(line.find("warn") != std::string::npos);
    CHECK(line.find("collective algorithm '" + name + "' of plugin 'coll-" + name + "'") !=
          std::string::npos);
    CHECK(line.find(problem) != std::string::npos);
  }
}

TEST_CASE("auto skips the cheapest candidate when its schedule does not build, for the next-cheapest") {
  ScopedRules rules("all_reduce:auto");
  // build returns an error, throws, or makes a schedule the checker rejects; each estimates 0 s.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fails", "has no schedule for this machine"},
      {"throws", "build threw: the schedule generator crashed"},
      {"wrong", "built a wrong schedule"}};
  for (const auto& [fault_name, problem] : cases) {
    const std::string& fault = fault_name;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(fault);
    const std::string name = "est-build-" + fault;
    const std::string without = ts::dist::algorithm_for("all_reduce", 4, 4096);
    REQUIRE(without != name);
    {
      Loaded bad("coll-" + name);
      tessera_test::LogCapture capture;
      // Its 0 s makes it the cheapest; its build fails, so the choice is the one made without it.
      CHECK(ts::dist::algorithm_for("all_reduce", 4, 4096) == without);
      ts::LocalMode local(4);
      for (int call = 0; call < 2; ++call) {  // the second call reuses the choice that built
        ts::Tensor x = ranks_plus_one(4, 1024);
        const ts::CommCounter counter;
        ts::dist::all_reduce(x, ts::ReduceOp::SUM);
        CHECK(algorithm_seen(counter) == without);
        check_sums(x, 4, 1024);
      }
      const std::string log = capture.text.str();
      CAPTURE(log);
      const std::string skipped =
          "auto skips '" + name + "' (0 s, the cheapest left): its schedule could not be built";
      // algorithm_for and the calls share one request key (4 ranks, 4096 bytes, the same topology) but
      // not one request (int64 elements there, float32 here): at most two choices, each skipping it once.
      CHECK(occurrences(log, skipped) >= 1);
      CHECK(occurrences(log, skipped) == occurrences(log, "auto chose"));
      CHECK(log.find(problem) != std::string::npos);
      CHECK(log.find("auto chose '" + without + "' (its schedule builds; skipped: '" + name +
                     "', whose schedules do not)") != std::string::npos);
    }
    {
      // With a second 0 s candidate that builds, that one is next: "est-zero" (after it by name).
      Loaded bad("coll-" + name);
      Loaded zero("coll-est-zero");
      CHECK(ts::dist::algorithm_for("all_reduce", 4, 4096) == "est-zero");
      ts::LocalMode local(4);
      ts::Tensor x = ranks_plus_one(4, 1024);
      const ts::CommCounter counter;
      ts::dist::all_reduce(x, ts::ReduceOp::SUM);
      CHECK(algorithm_seen(counter) == "est-zero");
      check_sums(x, 4, 1024);
    }
  }
}

namespace {

// Unloads every collective-algorithm plugin for a scope and loads them again at its end, so that
// the test plugins are the only candidates "auto" has.
struct WithoutAlgorithmPlugins {
  WithoutAlgorithmPlugins() {
    for (const ts::PluginInfo& info : ts::loaded_plugins())
      if (info.name.starts_with("coll-")) {
        ts::unload_plugin(info.name);
        unloaded.push_back(info.name);
      }
  }
  ~WithoutAlgorithmPlugins() {
    for (const std::string& name : unloaded) {
      if (name == "coll-hier")
        ensure_loaded(name);  // a test plugin, loaded by file
      else
        ts::load_plugin(name);
    }
  }
  std::vector<std::string> unloaded;
};

}  // namespace

TEST_CASE("when no applicable candidate builds, auto's error names each candidate and its failure") {
  ScopedRules rules("all_reduce:auto");
  (void)ts::dist::algorithm_for("all_reduce", 4, 4096);  // discovery done: the built-ins are loaded
  {
    const WithoutAlgorithmPlugins alone;
    REQUIRE(!alone.unloaded.empty());
    Loaded fails("coll-est-build-fails");
    Loaded throws("coll-est-build-throws");
    ts::LocalMode local(4);
    ts::Tensor x = ranks_plus_one(4, 1024);
    const std::string message = [&] {
      try {
        ts::dist::all_reduce(x, ts::ReduceOp::SUM);
      } catch (const ts::Error& e) {
        return std::string(e.what());
      }
      return std::string("(no error)");
    }();
    CAPTURE(message);
    CHECK(message.find(
              "auto found no applicable algorithm whose schedule builds; it tried 'est-build-fails' (") !=
          std::string::npos);
    CHECK(message.find("has no schedule for this machine") != std::string::npos);
    CHECK(message.find("'est-build-throws' (") != std::string::npos);
    CHECK(message.find("build threw: the schedule generator crashed") != std::string::npos);
  }
  // Everything back: auto works again.
  ts::LocalMode local(4);
  ts::Tensor x = ranks_plus_one(4, 1024);
  ts::dist::all_reduce(x, ts::ReduceOp::SUM);
  check_sums(x, 4, 1024);
}

TEST_CASE("a candidate a tuner vetoed runs only when no candidate it kept has a schedule that builds") {
  ScopedRules rules("all_reduce:auto");
  (void)ts::dist::algorithm_for("all_reduce", 4, 4096);  // discovery done: the built-ins are loaded
  const WithoutAlgorithmPlugins alone;
  Loaded fails("coll-est-build-fails");  // 0 s, kept by the tuner, does not build
  Loaded zero("coll-est-zero");          // 0 s, vetoed by the tuner, builds
  ts::load_plugin(
      (std::filesystem::path(TESSERA_TUNER_TEST_PLUGIN_DIR) / "libtessera-tuner-prefer.so").string());
  ts::Config config;
  config.collective_tuner = "prefer";
  config.plugin_parameters["tuner-prefer"] = {{"veto", "est-zero"}};
  ts::configure(config);
  {
    tessera_test::LogCapture capture;
    ts::LocalMode local(4);
    ts::Tensor x = ranks_plus_one(4, 1024);
    const ts::CommCounter counter;
    ts::dist::all_reduce(x, ts::ReduceOp::SUM);
    CHECK(algorithm_seen(counter) == "est-zero");
    check_sums(x, 4, 1024);
    const std::string log = capture.text.str();
    CAPTURE(log);
    CHECK(log.find("auto skips 'est-build-fails'") != std::string::npos);
    CHECK(
        log.find(
            "auto runs 'est-zero', which the tuner vetoed, because no algorithm it kept has a schedule that "
            "builds") != std::string::npos);
  }
  // Without the veto, est-zero is simply the next-cheapest: no such warning.
  config.plugin_parameters["tuner-prefer"] = {{"veto", ""}};
  ts::configure(config);
  tessera_test::LogCapture capture;
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 4096) == "est-zero");
  CHECK(capture.text.str().find("which the tuner vetoed") == std::string::npos);
  ts::configure(ts::Config{});  // no tuner
  ts::unload_plugin("tuner-prefer");
}

TEST_CASE("the schedule cache tells topologies and member sets apart") {
  ensure_loaded("coll-hier");
  // The same request shape over nodes of 4 and nodes of 2: hier groups differently, so a schedule
  // built for one must not serve the other.
  const Request four(8, 64, ts::Topology::nodes(8, 4));
  const Request two(8, 64, ts::Topology::nodes(8, 2));
  const auto a = ts::comm::cached_schedule("hier", four.request);
  const auto b = ts::comm::cached_schedule("hier", two.request);
  CHECK(a != b);
  CHECK(a->step_count() != b->step_count());
  // The same preset built again (another world's copy) shares the schedule.
  const Request four_again(8, 64, ts::Topology::nodes(8, 4));
  CHECK(ts::comm::cached_schedule("hier", four_again.request) == a);
  // Other world ranks: the group {4..7, 0..3} has the same nodes but other ranks, so its own entry.
  Request shifted(8, 64, ts::Topology::nodes(8, 4));
  std::rotate(shifted.members.begin(), shifted.members.begin() + 4, shifted.members.end());
  CHECK(ts::comm::cached_schedule("hier", shifted.request) != a);
}

// Run by the CTest entry test_comm.env_auto with TESSERA_COLL="all_reduce:auto" (CMakeLists.txt);
// without the variable it has nothing to check.
TEST_CASE("TESSERA_COLL may name auto") {
  const char* env = std::getenv("TESSERA_COLL");
  if (env == nullptr || std::string(env) != "all_reduce:auto") return;
  CHECK(ts::dist::algorithms() == "all_reduce:auto");
  ensure_loaded("coll-hier");
  ScopedTopology topology("nodes:4");
  CHECK(ts::dist::algorithm_for("all_reduce", 12, 4 * kMiB) == "hier");
}

// Run alone in a fresh process (ctest's test_comm.auto_first_choice): the process's first
// collective discovers the algorithm plugins while "auto" chooses, and loading one changes the
// generation choices are kept under. The first choice must be kept all the same, not made again
// (and every candidate's schedule costed again, seconds at a thousand ranks) by the next call.
TEST_CASE("a process's first auto choice is kept: the calls after it do not choose again") {
  if (std::getenv("TESSERA_TEST_FIRST_CHOICE") == nullptr) return;
  ScopedRules rules("all_reduce:auto");  // configures the process (and its logger) first
  tessera_test::LogCapture capture;
  const std::ostringstream& log = capture.text;
  ts::LocalMode mode(6);
  ts::Tensor x = ts::rank_map([](int r) { return ts::full({3}, static_cast<float>(r + 1)); });
  for (int call = 0; call < 3; ++call) ts::dist::all_reduce(x);
  // 1 + 2 + ... + 6 = 21, then 6 * 21 = 126, then 6 * 126 = 756: exact in float32.
  CHECK(x.shard(5).to_vector<float>() == std::vector<float>{756.0f, 756.0f, 756.0f});
  size_t choices = 0;
  for (size_t at = log.str().find("auto chose"); at != std::string::npos;
       at = log.str().find("auto chose", at + 1))
    ++choices;
  CAPTURE(log.str());
  CHECK(choices == 1);
}

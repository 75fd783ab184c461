// Traces: the file parses as Chrome JSON with one track per rank and the expected events.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <set>
#include <fstream>

#include <nlohmann/json.hpp>
#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("a trace has a track per rank with op slices and collective steps") {
  const std::string path = std::string(TESSERA_TEST_OUTPUT_DIR) + "/trace_test.json";
  std::filesystem::remove(path);
  {
    ts::TraceScope trace(path);
    CHECK(ts::tracing());
    ts::Tensor t = ts::local_tensor({{0, ts::ones({8})}, {1, ts::ones({8})}, {2, ts::ones({8})}});
    ts::Tensor doubled = t * 2;
    ts::dist::all_reduce(doubled);
  }
  CHECK_FALSE(ts::tracing());
  std::ifstream in(path);
  REQUIRE(in);
  const nlohmann::json file = nlohmann::json::parse(in);
  const nlohmann::json& events = file.at("traceEvents");
  std::set<int> tracks, ops, collectives, steps;
  bool step_has_bytes_and_peer = false;
  for (const auto& e : events) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") tracks.insert(e.at("tid").get<int>());
    if (e.at("ph") != "X") continue;
    const std::string cat = e.at("cat");
    const int tid = e.at("tid");
    if (cat == "op" && e.at("name") == "mul") ops.insert(tid);
    if (cat == "collective") collectives.insert(tid);
    if (cat == "step") {
      steps.insert(tid);
      step_has_bytes_and_peer =
          step_has_bytes_and_peer || (e.at("args").contains("bytes") && e.at("args").contains("peer"));
    }
  }
  CHECK(tracks == std::set<int>{0, 1, 2});
  CHECK(ops == std::set<int>{0, 1, 2});
  CHECK(collectives == std::set<int>{0, 1, 2});
  CHECK(steps == std::set<int>{0, 1, 2});
  CHECK(step_has_bytes_and_peer);
}

TEST_CASE("an unwritable trace path is a clear error") {
  CHECK_THROWS_WITH_AS(ts::start_trace("/nonexistent-dir/trace.json"), doctest::Contains("cannot write"),
                       ts::Error);
  CHECK_FALSE(ts::tracing());
}

TEST_CASE("the trace file comes from the configuration") {
  const ts::Config config = ts::Config::from_string("[trace]\nfile = \"t.json\"\n", "/tmp/x/tessera.toml");
  CHECK(config.trace_file == std::filesystem::path("/tmp/x/t.json"));
}

namespace {

// The collective slices in a trace file, per collective name (one slice per member rank per call).
std::map<std::string, int> collective_slices(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  const nlohmann::json file = nlohmann::json::parse(in);
  std::map<std::string, int> count;
  for (const auto& e : file.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("cat") == "collective") {
      const std::string name = e.at("name");
      ++count[name.substr(0, name.find(' '))];
    }
  return count;
}

}  // namespace

TEST_CASE("the program's trace and a TraceScope inside it both get the whole of what they saw") {
  // A regression: TESSERA_TRACE (the program's trace) with a TraceScope once left the program's file empty.
  const std::string dir = TESSERA_TEST_OUTPUT_DIR;
  const std::string program = dir + "/trace_program.json", scope = dir + "/trace_scope.json";
  std::filesystem::remove(program);
  std::filesystem::remove(scope);
  CHECK(ts::trace_path().empty());
  ts::start_trace(program);
  CHECK(ts::trace_path() == program);
  {
    ts::LocalMode mode(3);
    ts::Tensor before = ts::ones({4});
    ts::dist::all_reduce(before);  // the program's trace only
    ts::TraceScope trace(scope);
    ts::Tensor t = ts::ones({4});
    ts::dist::all_reduce(t);
    ts::dist::broadcast(t, 1);
  }
  CHECK(ts::tracing());
  ts::stop_trace();
  CHECK(ts::trace_path().empty());
  CHECK_FALSE(ts::tracing());
  CHECK(collective_slices(program) == std::map<std::string, int>{{"all_reduce", 6}, {"broadcast", 3}});
  CHECK(collective_slices(scope) == std::map<std::string, int>{{"all_reduce", 3}, {"broadcast", 3}});
}

TEST_CASE("a second program trace is refused and the first keeps recording") {
  const std::string dir = TESSERA_TEST_OUTPUT_DIR;
  const std::string first = dir + "/trace_first.json", second = dir + "/trace_second.json";
  std::filesystem::remove(second);
  ts::start_trace(first);
  const std::string refused = "already being recorded to '" + first + "'";
  CHECK_THROWS_WITH_AS(ts::start_trace(second), doctest::Contains(refused.c_str()), ts::Error);
  {
    ts::LocalMode mode(2);
    ts::Tensor t = ts::ones({4});
    ts::dist::all_reduce(t);
  }
  ts::stop_trace();
  CHECK(collective_slices(first) == std::map<std::string, int>{{"all_reduce", 2}});
  CHECK_FALSE(std::filesystem::exists(second));
}

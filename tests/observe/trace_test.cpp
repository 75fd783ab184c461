// Traces: the file parses as Chrome JSON with one track per rank and the expected events.
#include <doctest/doctest.h>

#include <filesystem>
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
      step_has_bytes_and_peer = step_has_bytes_and_peer || (e.at("args").contains("bytes") && e.at("args").contains("peer"));
    }
  }
  CHECK(tracks == std::set<int>{0, 1, 2});
  CHECK(ops == std::set<int>{0, 1, 2});
  CHECK(collectives == std::set<int>{0, 1, 2});
  CHECK(steps == std::set<int>{0, 1, 2});
  CHECK(step_has_bytes_and_peer);
}

TEST_CASE("an unwritable trace path is a clear error") {
  CHECK_THROWS_WITH_AS(ts::start_trace("/nonexistent-dir/trace.json"), doctest::Contains("cannot write"), ts::Error);
  CHECK_FALSE(ts::tracing());
}

TEST_CASE("the trace file comes from the configuration") {
  const ts::Config config = ts::Config::from_string("[trace]\nfile = \"t.json\"\n", "/tmp/x/tessera.toml");
  CHECK(config.trace_file == std::filesystem::path("/tmp/x/t.json"));
}

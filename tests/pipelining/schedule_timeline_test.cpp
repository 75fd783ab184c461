// A plan in time: the timeline the cost model places each rank's actions on (worked out by hand
// for small pipelines), the activations a stage holds at its peak (1F1B's warm-up bound, GPipe's
// every micro-batch) and the trace file that draws the timeline with its bubbles.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;
namespace pp = tessera::pipelining;

namespace {

struct Slot {
  std::string action;
  double start;
  double end;
};

std::vector<Slot> slots(const std::vector<pp::TimedAction>& timed) {
  std::vector<Slot> out;
  for (const pp::TimedAction& t : timed) out.push_back({t.action.to_string(), t.start, t.end});
  return out;
}

void check_slots(const std::vector<Slot>& got, const std::vector<Slot>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].action == want[i].action);
    CHECK(got[i].start == doctest::Approx(want[i].start));
    CHECK(got[i].end == doctest::Approx(want[i].end));
  }
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("pipelining timeline: GPipe on 2 stages, worked out by hand") {
  // Forward 1, backward 2 (1 + 1), messages free. Rank 1 starts when rank 0's first forward is
  // done; rank 0's backwards wait for rank 1's.
  const pp::SchedulePlan plan = pp::ScheduleGPipe::plan(2, 2);
  const auto timeline = plan.timeline();
  REQUIRE(timeline.size() == 2);
  check_slots(slots(timeline[0]), {{"0F0", 0, 1}, {"0F1", 1, 2}, {"0B0", 5, 7}, {"0B1", 7, 9}});
  check_slots(slots(timeline[1]), {{"1F0", 1, 2}, {"1F1", 2, 3}, {"1B0", 3, 5}, {"1B1", 5, 7}});
}

TEST_CASE("pipelining timeline: message costs delay each hand-over") {
  pp::ActionCosts costs;
  costs.forward = 2;
  costs.backward_input = 1;
  costs.backward_weight = 3;
  costs.message = 0.5;
  // 1F1B on 2 stages, 2 micro-batches: rank 0 F0 F1 B0 B1, rank 1 F0 B0 F1 B1.
  const auto timeline = pp::Schedule1F1B::plan(2, 2).timeline(costs);
  check_slots(slots(timeline[1]),
              {{"1F0", 2.5, 4.5}, {"1B0", 4.5, 8.5}, {"1F1", 8.5, 10.5}, {"1B1", 10.5, 14.5}});
  check_slots(slots(timeline[0]), {{"0F0", 0, 2}, {"0F1", 2, 4}, {"0B0", 9, 13}, {"0B1", 15, 19}});
  CHECK(pp::Schedule1F1B::plan(2, 2).step_time(costs) == doctest::Approx(19));
}

TEST_CASE("pipelining timeline: peak activations per stage") {
  // GPipe holds every micro-batch before its first backward.
  for (int s = 0; s < 4; ++s) CHECK(pp::ScheduleGPipe::plan(4, 6).peak_activations(s) == 6);
  // 1F1B: stage s warms up with p - s forwards and then frees one per forward.
  const pp::SchedulePlan one_f_one_b = pp::Schedule1F1B::plan(4, 8);
  for (int s = 0; s < 4; ++s) {
    CAPTURE(s);
    CHECK(one_f_one_b.peak_activations(s) == 4 - s);
  }
  // With fewer micro-batches than the warm-up, at most all of them.
  CHECK(pp::ScheduleGPipe::plan(3, 1).peak_activations(0) == 1);
  // Split backwards hold a micro-batch until its W.
  const pp::SchedulePlan zbv = pp::ScheduleZBVZeroBubble::plan(2, 4);
  for (int s = 0; s < zbv.num_stages(); ++s) {
    CHECK(zbv.peak_activations(s) >= 1);
    CHECK(zbv.peak_activations(s) <= 4);
  }
  CHECK_THROWS_WITH_AS(one_f_one_b.peak_activations(4),
                       doctest::Contains("peak_activations of stage 4; the stages are 0..3"), ts::Error);
  CHECK_THROWS_AS(one_f_one_b.peak_activations(-1), ts::Error);
}

TEST_CASE("pipelining timeline: the trace draws one track per rank with its bubbles") {
  const auto dir = std::filesystem::temp_directory_path() / "tessera_pipeline_trace_test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "gpipe.json";
  const int p = 4, m = 4;
  const pp::SchedulePlan plan = pp::ScheduleGPipe::plan(p, m);
  plan.write_trace(file.string());
  const nlohmann::json trace = read_json(file);
  std::map<int, double> busy, idle;
  std::map<int, int> actions;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const int rank = e.at("tid").get<int>();
    const double seconds = e.at("dur").get<double>() / 1e6;
    if (e.at("name") == "bubble") {
      idle[rank] += seconds;
    } else {
      busy[rank] += seconds;
      ++actions[rank];
    }
  }
  // Uniform stages: each rank is busy m * (1 + 2) and the step lasts (m + p - 1) * 3, so each
  // rank idles (p - 1) * 3: the bubble fraction (p - 1) / (m + p - 1).
  REQUIRE(busy.size() == static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    CAPTURE(r);
    CHECK(actions[r] == 2 * m);
    CHECK(busy[r] == doctest::Approx(3.0 * m));
    CHECK(idle[r] == doctest::Approx(3.0 * (p - 1)));
  }
  CHECK_THROWS_WITH_AS(plan.write_trace((dir / "missing" / "x.json").string()),
                       doctest::Contains("cannot write the trace"), ts::Error);
  std::filesystem::remove_all(dir);
}

// Schedules as data: the orders of ScheduleGPipe and Schedule1F1B against PyTorch's (printed by
// torch.distributed.pipelining 2.15 for these sizes and pinned here), the plan check, the table and
// the cost model's bubble fraction.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;
namespace pp = tessera::pipelining;

namespace {

std::string joined(const std::vector<pp::Action>& actions) {
  std::string out;
  for (const pp::Action& a : actions) out += (out.empty() ? "" : " ") + a.to_string();
  return out;
}

std::vector<pp::Action> parsed(const std::string& text) {
  std::vector<pp::Action> actions;
  std::istringstream words(text);
  for (std::string word; words >> word;) actions.push_back(pp::Action::parse(word));
  return actions;
}

}  // namespace

TEST_CASE("pipelining: actions print and parse in PyTorch's form") {
  CHECK(pp::Action{0, pp::ActionType::F, 1}.to_string() == "0F1");
  CHECK(pp::Action{2, pp::ActionType::SEND_B, 10}.to_string() == "2SEND_B10");
  for (const char* text : {"0F1", "1I0", "3W2", "0B0", "1SEND_F3", "2RECV_F0", "12SEND_B7", "0RECV_B11"})
    CHECK(pp::Action::parse(text).to_string() == text);
  CHECK(pp::Action::parse("1RECV_B2") == pp::Action{1, pp::ActionType::RECV_B, 2});
  for (const char* bad : {"", "F1", "0X1", "0F", "0F1x", "-1F0", "0SEND1"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(pp::Action::parse(bad), doctest::Contains("expected stage, action and micro-batch"),
                         ts::Error);
  }
}

TEST_CASE("pipelining: GPipe's compute order is PyTorch's") {
  // PyTorch's ScheduleGPipe pipeline_order, bubbles and REDUCE_GRAD left out.
  const pp::SchedulePlan p2 = pp::ScheduleGPipe::plan(2, 2);
  CHECK(joined(p2.compute_actions(0)) == "0F0 0F1 0B0 0B1");
  CHECK(joined(p2.compute_actions(1)) == "1F0 1F1 1B0 1B1");
  const pp::SchedulePlan p4 = pp::ScheduleGPipe::plan(4, 8);
  CHECK(joined(p4.compute_actions(3)) == "3F0 3F1 3F2 3F3 3F4 3F5 3F6 3F7 3B0 3B1 3B2 3B3 3B4 3B5 3B6 3B7");
}

TEST_CASE("pipelining: GPipe and 1F1B with messages are PyTorch's") {
  // PyTorch's _add_send_recv applied to each schedule's compute order (1F1B's as its runtime
  // runs it: stage s warms up with num_stages - s forwards, then alternates B and F).
  const pp::SchedulePlan gpipe = pp::ScheduleGPipe::plan(3, 4);
  CHECK(joined(gpipe.actions(0)) ==
        "0F0 0SEND_F0 0F1 0SEND_F1 0F2 0SEND_F2 0F3 0SEND_F3 0RECV_B0 0B0 0RECV_B1 0B1 0RECV_B2 0B2 0RECV_B3 "
        "0B3");
  CHECK(
      joined(gpipe.actions(1)) ==
      "1RECV_F0 1F0 1SEND_F0 1RECV_F1 1F1 1SEND_F1 1RECV_F2 1F2 1SEND_F2 1RECV_F3 1F3 1SEND_F3 1RECV_B0 1B0 "
      "1SEND_B0 1RECV_B1 1B1 1SEND_B1 1RECV_B2 1B2 1SEND_B2 1RECV_B3 1B3 1SEND_B3");
  CHECK(joined(gpipe.actions(2)) ==
        "2RECV_F0 2F0 2RECV_F1 2F1 2RECV_F2 2F2 2RECV_F3 2F3 2B0 2SEND_B0 2B1 2SEND_B1 2B2 2SEND_B2 2B3 "
        "2SEND_B3");

  const pp::SchedulePlan f3 = pp::Schedule1F1B::plan(3, 4);
  CHECK(joined(f3.actions(0)) ==
        "0F0 0SEND_F0 0F1 0SEND_F1 0F2 0SEND_F2 0RECV_B0 0B0 0F3 0SEND_F3 0RECV_B1 0B1 0RECV_B2 0B2 0RECV_B3 "
        "0B3");
  CHECK(joined(f3.actions(1)) ==
        "1RECV_F0 1F0 1SEND_F0 1RECV_F1 1F1 1SEND_F1 1RECV_B0 1RECV_F2 1B0 1SEND_B0 1F2 1SEND_F2 1RECV_B1 "
        "1RECV_F3 "
        "1B1 1SEND_B1 1F3 1SEND_F3 1RECV_B2 1B2 1SEND_B2 1RECV_B3 1B3 1SEND_B3");
  CHECK(joined(f3.actions(2)) ==
        "2RECV_F0 2F0 2RECV_F1 2B0 2SEND_B0 2F1 2RECV_F2 2B1 2SEND_B1 2F2 2RECV_F3 2B2 2SEND_B2 2F3 2B3 "
        "2SEND_B3");

  const pp::SchedulePlan f4 = pp::Schedule1F1B::plan(4, 4);
  CHECK(joined(f4.actions(0)) ==
        "0F0 0SEND_F0 0F1 0SEND_F1 0F2 0SEND_F2 0F3 0SEND_F3 0RECV_B0 0B0 0RECV_B1 0B1 0RECV_B2 0B2 0RECV_B3 "
        "0B3");
  CHECK(joined(f4.actions(2)) ==
        "2RECV_F0 2F0 2SEND_F0 2RECV_F1 2F1 2SEND_F1 2RECV_B0 2RECV_F2 2B0 2SEND_B0 2F2 2SEND_F2 2RECV_B1 "
        "2RECV_F3 "
        "2B1 2SEND_B1 2F3 2SEND_F3 2RECV_B2 2B2 2SEND_B2 2RECV_B3 2B3 2SEND_B3");
  CHECK(joined(f4.actions(3)) ==
        "3RECV_F0 3F0 3RECV_F1 3B0 3SEND_B0 3F1 3RECV_F2 3B1 3SEND_B1 3F2 3RECV_F3 3B2 3SEND_B2 3F3 3B3 "
        "3SEND_B3");
}

TEST_CASE("pipelining: the table is PyTorch's _format_pipeline_order") {
  CHECK(pp::ScheduleGPipe::plan(2, 2).table() ==
        "        Rank 0   Rank 1  \nStep 0: 0F0      1RECV_F0\nStep 1: 0SEND_F0 1F0     \nStep 2: 0F1      "
        "1RECV_F1\nStep 3: 0SEND_F1 1F1     \nStep 4: 0RECV_B0 1B0     \nStep 5: 0B0      1SEND_B0\nStep 6: "
        "0RECV_B1 1B1     \nStep 7: 0B1      1SEND_B1\n");
  CHECK(pp::Schedule1F1B::plan(2, 2).table() ==
        "        Rank 0   Rank 1  \nStep 0: 0F0      1RECV_F0\nStep 1: 0SEND_F0 1F0     \nStep 2: 0F1      "
        "1RECV_F1\nStep 3: 0SEND_F1 1B0     \nStep 4: 0RECV_B0 1SEND_B0\nStep 5: 0B0      1F1     \nStep 6: "
        "0RECV_B1 1B1     \nStep 7: 0B1      1SEND_B1\n");
}

TEST_CASE("pipelining: bubble fraction of GPipe and 1F1B with uniform stages is (p-1)/(m+p-1)") {
  for (int p : {1, 2, 3, 4, 8})
    for (int m : {1, 2, 3, 4, 8, 16, 32}) {
      CAPTURE(p);
      CAPTURE(m);
      const double want = static_cast<double>(p - 1) / static_cast<double>(m + p - 1);
      CHECK(pp::ScheduleGPipe::plan(p, m).bubble_fraction() == doctest::Approx(want).epsilon(1e-12));
      if (m >= p)
        CHECK(pp::Schedule1F1B::plan(p, m).bubble_fraction() == doctest::Approx(want).epsilon(1e-12));
    }
  // Fixed values, written out: p=4, m=4 -> 3/7; p=2, m=8 -> 1/9; p=8, m=32 -> 7/39.
  CHECK(pp::ScheduleGPipe::plan(4, 4).bubble_fraction() == doctest::Approx(3.0 / 7.0));
  CHECK(pp::Schedule1F1B::plan(2, 8).bubble_fraction() == doctest::Approx(1.0 / 9.0));
  CHECK(pp::Schedule1F1B::plan(8, 32).bubble_fraction() == doctest::Approx(7.0 / 39.0));
  // Step time with forward 1 and backward 2 per micro-batch and stage: (m + p - 1) * 3.
  CHECK(pp::ScheduleGPipe::plan(4, 8).step_time() == doctest::Approx(33.0));
  // A message cost delays every hand-over: GPipe crosses 2 (p - 1) of them on its critical path.
  pp::ActionCosts slow;
  slow.message = 0.5;
  CHECK(pp::ScheduleGPipe::plan(4, 8).step_time(slow) == doctest::Approx(33.0 + 0.5 * 6));
}

TEST_CASE("pipelining: plans are checked when made") {
  SUBCASE("a compute order that cannot run") {
    CHECK_THROWS_WITH_AS(
        pp::SchedulePlan("backward-first", 1, {0, 1}, {parsed("0B0 0F0"), parsed("1F0 1B0")}),
        doctest::Contains("the compute order deadlocks: rank 0 waits at 0B0 for 0F0"), ts::Error);
  }
  SUBCASE("two ranks that both receive first deadlock") {
    CHECK_THROWS_WITH_AS(
        pp::SchedulePlan("recv-first", 1, {0, 1},
                         {parsed("0RECV_B0 0F0 0SEND_F0 0B0"), parsed("1RECV_F0 1F0 1B0 1SEND_B0")}),
        doctest::Contains("it deadlocks: rank 0 waits at 0RECV_B0 (action 1 of 4) for a message from "
                          "rank 1; rank 1 waits at 1RECV_F0 (action 1 of 4) for a message from rank 0"),
        ts::Error);
  }
  SUBCASE("the same actions with the receive later run") {
    const pp::SchedulePlan plan("fine", 1, {0, 1},
                                {parsed("0F0 0SEND_F0 0RECV_B0 0B0"), parsed("1RECV_F0 1F0 1B0 1SEND_B0")});
    CHECK(joined(plan.actions(0)) == "0F0 0SEND_F0 0RECV_B0 0B0");
  }
  SUBCASE("a message nobody receives") {
    CHECK_THROWS_WITH_AS(
        pp::SchedulePlan("extra-send", 1, {0, 1},
                         {parsed("0F0 0SEND_F0 0RECV_B0 0B0"), parsed("1RECV_F0 1F0 1B0 1SEND_B0 1SEND_B0")}),
        doctest::Contains("rank 0 is sent a message for 0RECV_B0 but has no such receive"), ts::Error);
  }
  SUBCASE("a missing backward, a duplicate forward, a stage on the wrong rank, out of range") {
    CHECK_THROWS_WITH_AS(pp::SchedulePlan("x", 2, {0}, {parsed("0F0 0F1 0B0")}),
                         doctest::Contains("stage 0 micro-batch 1 has 0 B, 0 I and 0 W"), ts::Error);
    CHECK_THROWS_WITH_AS(pp::SchedulePlan("x", 1, {0}, {parsed("0F0 0F0 0B0")}),
                         doctest::Contains("has 2 forward(s) (0F0); expected exactly one"), ts::Error);
    CHECK_THROWS_WITH_AS(pp::SchedulePlan("x", 1, {0, 1}, {parsed("1F0 1B0"), parsed("0F0 0B0")}),
                         doctest::Contains("rank 0 lists 1F0, but stage 1 is on rank 1"), ts::Error);
    CHECK_THROWS_WITH_AS(pp::SchedulePlan("x", 1, {0}, {parsed("0F0 0B0 0F1")}),
                         doctest::Contains("rank 0 lists 0F1, but the micro-batches are 0..0"), ts::Error);
    CHECK_THROWS_WITH_AS(pp::SchedulePlan("x", 1, {0, 2}, {parsed("0F0 0B0"), parsed("")}),
                         doctest::Contains("stage 1 is placed on rank 2, but the ranks are 0..1"), ts::Error);
  }
  SUBCASE("split backwards (I then W) are accepted") {
    const pp::SchedulePlan plan("zb", 1, {0, 1}, {parsed("0F0 0I0 0W0"), parsed("1F0 1I0 1W0")});
    CHECK(joined(plan.actions(0)) == "0F0 0SEND_F0 0RECV_B0 0I0 0W0");
    CHECK(joined(plan.actions(1)) == "1RECV_F0 1F0 1I0 1SEND_B0 1W0");
  }
  SUBCASE("schedule sizes") {
    CHECK_THROWS_WITH_AS(pp::Schedule1F1B::plan(4, 3),
                         doctest::Contains("n_microbatches (3) must be at least"), ts::Error);
    CHECK_THROWS_WITH_AS(pp::ScheduleGPipe::plan(2, 0), doctest::Contains("n_microbatches is 0"), ts::Error);
  }
}

TEST_CASE("pipelining: Interleaved 1F1B's orders are PyTorch's") {
  // PyTorch's ScheduleInterleaved1F1B pipeline_order (bubbles left out) and _add_send_recv of it.
  const pp::SchedulePlan p2 = pp::ScheduleInterleaved1F1B::plan(2, 2, 4);
  CHECK(p2.num_stages() == 4);
  CHECK(p2.stages_of(1) == std::vector<int>{1, 3});
  CHECK(joined(p2.compute_actions(0)) == "0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3");
  CHECK(joined(p2.compute_actions(1)) == "1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3");
  CHECK(joined(p2.actions(0)) ==
        "0F0 0SEND_F0 2RECV_F0 0F1 0SEND_F1 2RECV_F1 2F0 2SEND_F0 2F1 2SEND_F1 2RECV_B0 0F2 0SEND_F2 2B0 "
        "2SEND_B0 "
        "2RECV_B1 0F3 0SEND_F3 2RECV_F2 2B1 2SEND_B1 0RECV_B0 2F2 2SEND_F2 2RECV_F3 0B0 0RECV_B1 2F3 "
        "2SEND_F3 0B1 "
        "2RECV_B2 2B2 2SEND_B2 2RECV_B3 2B3 2SEND_B3 0RECV_B2 0B2 0RECV_B3 0B3");
  CHECK(joined(p2.actions(1)) ==
        "1RECV_F0 1F0 1SEND_F0 1RECV_F1 1F1 1SEND_F1 3RECV_F0 3F0 3RECV_F1 3B0 3SEND_B0 1RECV_F2 3F1 "
        "1RECV_B0 3B1 "
        "3SEND_B1 1RECV_F3 1F2 1SEND_F2 1RECV_B1 1B0 1SEND_B0 3RECV_F2 1F3 1SEND_F3 1B1 1SEND_B1 3RECV_F3 "
        "3F2 3B2 "
        "3SEND_B2 1RECV_B2 3F3 3B3 3SEND_B3 1RECV_B3 1B2 1SEND_B2 1B3 1SEND_B3");
  const pp::SchedulePlan p3 = pp::ScheduleInterleaved1F1B::plan(3, 2, 3);
  CHECK(joined(p3.compute_actions(0)) == "0F0 0F1 0F2 3F0 3F1 3F2 3B0 3B1 3B2 0B0 0B1 0B2");
  CHECK(joined(p3.compute_actions(2)) == "2F0 2F1 2F2 5F0 5B0 5F1 5B1 5F2 5B2 2B0 2B1 2B2");
  CHECK(
      joined(p3.actions(2)) ==
      "2RECV_F0 2F0 2SEND_F0 2RECV_F1 2F1 2SEND_F1 2RECV_F2 2F2 2SEND_F2 5RECV_F0 5F0 5RECV_F1 5B0 5SEND_B0 "
      "5RECV_F2 5F1 5B1 5SEND_B1 2RECV_B0 5F2 2RECV_B1 5B2 5SEND_B2 2B0 2SEND_B0 2RECV_B2 2B1 2SEND_B1 2B2 "
      "2SEND_B2");
  const pp::SchedulePlan odd = pp::ScheduleInterleaved1F1B::plan(2, 2, 3);
  CHECK(joined(odd.compute_actions(1)) == "1F0 1F1 1F2 3F0 3B0 3F1 3B1 3F2 3B2 1B0 1B1 1B2");
  CHECK_THROWS_WITH_AS(pp::ScheduleInterleaved1F1B::plan(4, 2, 10 + 1),
                       doctest::Contains("must be a multiple of the number of rounds (2"), ts::Error);
  // Half-size stages (forward 0.5, backward 1) interleaved leave a smaller bubble than 1F1B's
  // whole stages over the same ranks and micro-batches.
  pp::ActionCosts half;
  half.forward = 0.5;
  half.backward_input = 0.5;
  half.backward_weight = 0.5;
  CHECK(p2.bubble_fraction(half) < pp::Schedule1F1B::plan(2, 4).bubble_fraction());
}

TEST_CASE("pipelining: Interleaved zero bubble's orders are PyTorch's") {
  const pp::SchedulePlan p2 = pp::ScheduleInterleavedZeroBubble::plan(2, 2, 4);
  CHECK(joined(p2.compute_actions(0)) ==
        "0F0 0F1 2F0 2F1 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 0W1 2F3 2I2 2W2 2I3 2W3 0I2 0W2 0I3 0W3");
  CHECK(joined(p2.compute_actions(1)) ==
        "1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 3I2 1W1 3F3 3I3 3W2 1I2 3W3 1I3 1W2 1W3");
  CHECK(joined(p2.actions(1)) ==
        "1RECV_F0 1F0 1SEND_F0 1RECV_F1 1F1 1SEND_F1 3RECV_F0 3F0 3RECV_F1 3I0 3SEND_B0 1RECV_B0 3F1 3I1 "
        "3SEND_B1 "
        "1RECV_F2 3W0 1RECV_B1 1F2 1SEND_F2 1I0 1SEND_B0 1RECV_F3 3W1 1F3 1SEND_F3 1I1 1SEND_B1 3RECV_F2 1W0 "
        "3F2 "
        "3I2 3SEND_B2 3RECV_F3 1W1 1RECV_B2 3F3 3I3 3SEND_B3 1RECV_B3 3W2 1I2 1SEND_B2 3W3 1I3 1SEND_B3 1W2 "
        "1W3");
  const pp::SchedulePlan p3 = pp::ScheduleInterleavedZeroBubble::plan(3, 2, 3);
  CHECK(joined(p3.compute_actions(0)) ==
        "0F0 0F1 0F2 3F0 3F1 3F2 3I0 3W0 3I1 3W1 3I2 3W2 0I0 0W0 0I1 0W1 0I2 0W2");
  CHECK(joined(p3.compute_actions(1)) ==
        "1F0 1F1 1F2 4F0 4F1 4I0 4F2 4I1 4W0 4I2 4W1 1I0 4W2 1I1 1W0 1I2 1W1 1W2");
  CHECK(joined(p3.compute_actions(2)) ==
        "2F0 2F1 2F2 5F0 5I0 5F1 5I1 5F2 5I2 5W0 2I0 5W1 2I1 5W2 2I2 2W0 2W1 2W2");
  CHECK(joined(p3.actions(2)) ==
        "2RECV_F0 2F0 2SEND_F0 2RECV_F1 2F1 2SEND_F1 2RECV_F2 2F2 2SEND_F2 5RECV_F0 5F0 5RECV_F1 5I0 "
        "5SEND_B0 5F1 "
        "2RECV_B0 5RECV_F2 5I1 5SEND_B1 5F2 2RECV_B1 5I2 5SEND_B2 5W0 2RECV_B2 2I0 2SEND_B0 5W1 2I1 2SEND_B1 "
        "5W2 "
        "2I2 2SEND_B2 2W0 2W1 2W2");
  // Filling bubbles with weight gradients: a smaller bubble than interleaved 1F1B's.
  CHECK(p2.bubble_fraction() < pp::ScheduleInterleaved1F1B::plan(2, 2, 4).bubble_fraction());
}

TEST_CASE("pipelining: ZBV zero bubble's orders are PyTorch's") {
  const pp::SchedulePlan small = pp::ScheduleZBVZeroBubble::plan(2, 2);
  CHECK(small.num_stages() == 4);
  CHECK(small.stages_of(0) == std::vector<int>{0, 3});
  CHECK(small.stages_of(1) == std::vector<int>{1, 2});
  CHECK(joined(small.compute_actions(0)) == "0F0 0F1 3F0 3I0 3W0 3F1 3I1 3W1 0I0 0W0 0I1 0W1");
  CHECK(joined(small.compute_actions(1)) == "1F0 2F0 1F1 2F1 2I0 2W0 1I0 1W0 2I1 2W1 1I1 1W1");
  // Stages 1 and 2 share rank 1: no message between them.
  CHECK(joined(small.actions(1)) ==
        "1RECV_F0 1F0 1RECV_F1 2F0 2SEND_F0 1F1 2RECV_B0 2F1 2SEND_F1 2I0 2W0 2RECV_B1 "
        "1I0 1SEND_B0 1W0 2I1 2W1 1I1 1SEND_B1 1W1");
  const pp::SchedulePlan p2 = pp::ScheduleZBVZeroBubble::plan(2, 4);
  CHECK(joined(p2.actions(0)) ==
        "0F0 0SEND_F0 0F1 0SEND_F1 3RECV_F0 0F2 0SEND_F2 3F0 3RECV_F1 3I0 3SEND_B0 3W0 3F1 3I1 3SEND_B1 "
        "0RECV_B0 "
        "3W1 0F3 0SEND_F3 3RECV_F2 0I0 0W0 3F2 3I2 3SEND_B2 0RECV_B1 3W2 0I1 3RECV_F3 0W1 3F3 3I3 3SEND_B3 "
        "0RECV_B2 "
        "3W3 0I2 0RECV_B3 0W2 0I3 0W3");
  CHECK(joined(p2.compute_actions(1)) ==
        "1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 2I3 1I3 1W2 2W3 1W3");
  const pp::SchedulePlan p3 = pp::ScheduleZBVZeroBubble::plan(3, 5);
  CHECK(joined(p3.compute_actions(2)) ==
        "2F0 3F0 2F1 3F1 2F2 3F2 3I0 3W0 2F3 2I0 2W0 3F3 3I1 3W1 2F4 2I1 2W1 3F4 "
        "3I2 3W2 2I2 3I3 2I3 3I4 2I4 2W2 3W3 3W4 2W3 2W4");
}

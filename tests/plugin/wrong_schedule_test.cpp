// Collective plugins whose schedules are wrong (tests/plugin/bad_plugins/bad_collective.h: a valid
// direct all_reduce with exactly one defect each). They load like any plugin; the first collective
// that selects one verifies its schedule and fails with an Error naming the algorithm, the plugin's
// file, the request and what is wrong — never zeros, a rank's own input, a write out of bounds or a
// hang. The host keeps working: a good algorithm computes the same call right afterwards.
#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

constexpr int kScheduleRanks = 3;

// Rank r holds 10 r + k at element k, so every contribution is distinct.
ts::Tensor distinct_inputs(int64_t count) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < kScheduleRanks; ++r)
    shards.emplace_back(r, ts::arange(count).to(ts::kFloat32) + 10.0 * r);
  return ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
}

// The sum over 3 ranks, written out: 0 + 10 + 20 + 3 k.
std::vector<float> expected_sum(int64_t count) {
  std::vector<float> sums;
  for (int64_t k = 0; k < count; ++k) sums.push_back(30.0f + 3.0f * static_cast<float>(k));
  return sums;
}

// Loads the plugin with `defect`, runs an all_reduce of `count` elements with its algorithm and
// returns the error; then checks that verify_schedule says the same without throwing, and that
// the direct algorithm computes the call right afterwards.
std::string rejection_of(const std::string& defect, int64_t count) {
  const std::string algorithm = "bad-coll-" + defect;
  const std::filesystem::path file = test_plugin(algorithm);
  tessera::load_plugin(file.string());
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:" + algorithm + ";*:direct");

  ts::Tensor t = distinct_inputs(count);
  const ts::Tensor before = t.clone();
  std::string message = error_of([&] { ts::dist::all_reduce(t, ts::ReduceOp::SUM); });
  CAPTURE(message);
  CHECK(contains(message, "collective algorithm '" + algorithm + "' of plugin '" + algorithm + "'"));
  CHECK(contains(message, std::filesystem::weakly_canonical(file).string()));
  CHECK(contains(message, "built a wrong schedule for all_reduce (group size 3, count " +
                              std::to_string(count) + ", float32, sum)"));
  CHECK(ts::equal(t, before));  // nothing ran

  // The same diagnosis from verify_schedule, returned rather than thrown (or crashed on).
  std::string verified;
  CHECK_NOTHROW(verified = ts::dist::verify_schedule(algorithm, "all_reduce", kScheduleRanks, count));
  CHECK(verified == message);

  // The host keeps working: the good algorithm computes the same call.
  ts::dist::set_algorithms("*:direct");
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);
  for (int r = 0; r < kScheduleRanks; ++r) CHECK(t.shard(r).to_vector<float>() == expected_sum(count));
  ts::dist::set_algorithms(saved);
  check_cpu_still_works();
  return message;
}

}  // namespace

TEST_CASE("a schedule without steps is rejected: outputs would hold garbage") {
  const std::string message = rejection_of("no-steps", 4);
  CHECK(contains(message,
                 "rank 0 output[0] holds an unspecified value (never written, or reduced into before being "
                 "written) but should hold "
                 "{r0[0], r1[0], r2[0]}"));
}

TEST_CASE("a schedule where every rank copies its own input is rejected: a sum needs every rank") {
  const std::string message = rejection_of("self-copy", 4);
  CHECK(contains(message,
                 "rank 0 output[0] holds {r0[0]} but should hold {r0[0], r1[0], r2[0]}; missing {r1[0], "
                 "r2[0]}"));
}

TEST_CASE("a chunk at offset INT64_MAX is out of bounds, however the end overflows") {
  const std::string message = rejection_of("huge-offset", 2);
  CHECK(contains(message,
                 "rank 0: chunk at offset 9223372036854775807 of 2 elements is out of bounds of buffer 1 "
                 "(size 2)"));
}

TEST_CASE("a receive that no rank sends to is a deadlock, named by rank and step") {
  const std::string message = rejection_of("recv-without-send", 4);
  CHECK(contains(
      message,
      "the schedule deadlocks:\n  rank 0 step 3: recv-reduce buffer 1[0:4] from rank 1 waits forever"));
}

TEST_CASE("a schedule that leaves out one rank's contribution is rejected, naming it") {
  const std::string message = rejection_of("missing-contribution", 4);
  CHECK(contains(
      message,
      "rank 0 output[0] holds {r0[0], r1[0]} but should hold {r0[0], r1[0], r2[0]}; missing {r2[0]}"));
}

TEST_CASE("a rejected schedule is rejected on every call, and a good one for another size still runs") {
  tessera::load_plugin(test_plugin("bad-coll-self-copy").string());
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:bad-coll-self-copy;*:direct");
  for (int attempt = 0; attempt < 2; ++attempt) {
    ts::Tensor t = distinct_inputs(5);
    CHECK_THROWS_WITH_AS(ts::dist::all_reduce(t, ts::ReduceOp::SUM),
                         doctest::Contains("built a wrong schedule"), ts::Error);
  }
  // A group of one: copying the own input is the right all_reduce, so it verifies and runs.
  ts::Tensor alone = ts::local_tensor(ts::RankMap<ts::Tensor>({{0, ts::from_values<float>({4, 5}, {2})}}));
  ts::dist::all_reduce(alone, ts::ReduceOp::SUM);
  CHECK(alone.shard(0).to_vector<float>() == std::vector<float>{4, 5});
  ts::dist::set_algorithms(saved);
}

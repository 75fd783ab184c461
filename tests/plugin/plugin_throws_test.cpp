// Plugin code that lets a C++ exception escape (the SDK forbids it) after loading: a collective
// algorithm's build or check, a backend's kernel. The error names the plugin, the component, the
// call and what it was asked for; verify_schedule returns that text rather than throwing; the host
// goes on working.
#include <string>

#include "plugin_test_support.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

constexpr int kThrowingRanks = 3;

// Rank r holds 10 r + k at element k.
ts::Tensor distinct_inputs() {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < kThrowingRanks; ++r) shards.emplace_back(r, ts::arange(4).to(ts::kFloat32) + 10.0 * r);
  return ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
}

// Runs an all_reduce that selects `algorithm` from its plugin and returns the error; checks that
// verify_schedule returns the same text and that the direct algorithm then computes the call.
std::string all_reduce_error(const std::string& algorithm) {
  tessera::load_plugin(test_plugin(algorithm).string());
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:" + algorithm + ";*:direct");
  ts::Tensor t = distinct_inputs();
  const ts::Tensor before = t.clone();
  std::string message = error_of([&] { ts::dist::all_reduce(t, ts::ReduceOp::SUM); });
  CHECK(ts::equal(t, before));

  std::string verified;
  CHECK_NOTHROW(verified = ts::dist::verify_schedule(algorithm, "all_reduce", kThrowingRanks, 4));
  CHECK(contains(verified, "collective algorithm '" + algorithm + "' of plugin '" + algorithm + "'"));
  CHECK(contains(verified, "threw"));

  ts::dist::set_algorithms("*:direct");
  ts::dist::all_reduce(t, ts::ReduceOp::SUM);  // 0 + 10 + 20 + 3 k
  for (int r = 0; r < kThrowingRanks; ++r)
    CHECK(t.shard(r).to_vector<float>() == std::vector<float>{30, 33, 36, 39});
  ts::dist::set_algorithms(saved);
  tessera::unload_plugin(algorithm);
  check_cpu_still_works();
  return message;
}

}  // namespace

TEST_CASE(
    "an exception escaping a collective algorithm's build names the plugin, algorithm, collective and call") {
  const std::string file = std::filesystem::weakly_canonical(test_plugin("bad-coll-build-throws")).string();
  const std::string message = all_reduce_error("bad-coll-build-throws");
  CHECK(message == "collective algorithm 'bad-coll-build-throws' of plugin 'bad-coll-build-throws' (" + file +
                       ") could not build all_reduce (group size 3, count 4, float32, sum): build threw: no "
                       "schedule for 3 ranks");
  CHECK(ts::dist::verify_schedule("direct", "all_reduce", kThrowingRanks, 4).empty());
}

TEST_CASE("a non-standard exception escaping build is named as such") {
  const std::string message = all_reduce_error("bad-coll-build-throws-int");
  CHECK(contains(message,
                 "collective algorithm 'bad-coll-build-throws-int' of plugin 'bad-coll-build-throws-int'"));
  CHECK(contains(message,
                 "could not build all_reduce (group size 3, count 4, float32, sum): build threw a "
                 "non-standard exception"));
}

TEST_CASE(
    "an exception escaping a collective algorithm's check names the plugin, algorithm, collective and call") {
  const std::string message = all_reduce_error("bad-coll-check-throws");
  CHECK(contains(message, "collective algorithm 'bad-coll-check-throws' of plugin 'bad-coll-check-throws'"));
  CHECK(contains(message,
                 "failed for all_reduce (group size 3, count 4, float32, sum): check threw: the check's "
                 "table of group sizes is missing"));
}

TEST_CASE("under the rule auto, an algorithm whose check or build throws is skipped with a warning") {
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce:auto");
  for (const std::string algorithm : {"bad-coll-check-throws", "bad-coll-build-throws"}) {
    CAPTURE(algorithm);
    tessera::load_plugin(test_plugin(algorithm).string());
    ts::Tensor t = distinct_inputs();
    const ts::CommCounter counter;
    CHECK_NOTHROW(ts::dist::all_reduce(t, ts::ReduceOp::SUM));  // 0 + 10 + 20 + 3 k
    for (int r = 0; r < kThrowingRanks; ++r)
      CHECK(t.shard(r).to_vector<float>() == std::vector<float>{30, 33, 36, 39});
    REQUIRE(counter.entries().size() == 1);
    CHECK(counter.entries()[0].algorithm != algorithm);
    tessera::unload_plugin(algorithm);
  }
  ts::dist::set_algorithms(saved);
}

TEST_CASE("an exception escaping a kernel names the op, the backend and its plugin") {
  const std::filesystem::path file = test_plugin("bad-kernel-throws");
  tessera::load_plugin(file.string());
  const std::string message =
      error_of([] { (void)ts::full({3}, 2.5f, ts::TensorOptions().backend("bad-kernel-throws")); });
  CHECK(message == "fill (float32) on backend 'bad-kernel-throws' of plugin 'bad-kernel-throws' (" +
                       std::filesystem::weakly_canonical(file).string() +
                       "): the kernel threw: fill: the scratch buffer is too small");
  tessera::unload_plugin("bad-kernel-throws");
  check_cpu_still_works();
}

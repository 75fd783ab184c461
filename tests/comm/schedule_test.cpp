// The schedule machinery through the direct algorithm: symbolic verification of every collective,
// selection rules, fallbacks and configuration errors.
#include <doctest/doctest.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <tessera/tessera.hpp>

#include "comm/selection.hpp"

namespace ts = tessera;

namespace {
const std::vector<std::string> kCollectivesAndBarrier = {"all_reduce", "broadcast",      "reduce",
                                                         "all_gather", "reduce_scatter", "all_to_all",
                                                         "scatter",    "gather",         "barrier"};
}

TEST_CASE("the direct schedules verify for every collective and group size") {
  for (const std::string& collective : kCollectivesAndBarrier)
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16})
      for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{5}})
        for (int root : {0, p - 1}) {
          CAPTURE(collective);
          CAPTURE(p);
          CAPTURE(count);
          CAPTURE(root);
          CHECK(ts::dist::verify_schedule("direct", collective, p, count, root) == "");
        }
}

TEST_CASE("verification names what is wrong") {
  CHECK_THROWS_WITH_AS(ts::dist::verify_schedule("direct", "all_scatter", 2, 1),
                       doctest::Contains("unknown collective"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::dist::verify_schedule("nosuch", "all_reduce", 2, 1),
                       doctest::Contains("no collective algorithm named 'nosuch'"), ts::Error);
  CHECK(ts::dist::verify_schedule("direct", "broadcast", 3, 4, 3).find("out of bounds") == std::string::npos);
}

TEST_CASE("verify_schedule diagnoses a malformed request instead of throwing or crashing") {
  auto diagnosis = [](const std::string& collective, int p, int64_t count, int root = 0) {
    std::string text;
    CHECK_NOTHROW(text = ts::dist::verify_schedule("direct", collective, p, count, root));
    return text;
  };
  CHECK(diagnosis("all_reduce", 0, 4).find("group size 0 is out of range (expected 1..65536)") !=
        std::string::npos);
  CHECK(diagnosis("all_reduce", -3, 4).find("group size -3 is out of range") != std::string::npos);
  CHECK(diagnosis("all_reduce", 1 << 30, 4).find("group size 1073741824 is out of range") !=
        std::string::npos);
  CHECK(diagnosis("all_reduce", 2, -1).find("count -1 is negative") != std::string::npos);
  CHECK(diagnosis("broadcast", 3, 4, 3).find("root 3 is not a group rank (expected 0..2)") !=
        std::string::npos);
  CHECK(diagnosis("all_gather", 2, INT64_MAX)
            .find("group size 2 times count 9223372036854775807 does not fit") != std::string::npos);
}

TEST_CASE("verification works on intervals: a schedule over 2^40 elements verifies at once") {
  // Element by element this would need terabytes; the checker's cost follows the steps.
  const int64_t huge = int64_t{1} << 40;
  for (const char* collective : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
    CAPTURE(collective);
    CHECK(ts::dist::verify_schedule("direct", collective, 4, huge) == "");
    CHECK(ts::dist::verify_schedule("ring",
                                    collective == std::string("all_to_all") ? "all_gather" : collective, 5,
                                    huge + 3) == "");
  }
}

TEST_CASE("an unknown algorithm in TESSERA_COLL names the variable") {
  // The environment is applied once per process, at first use, so the check runs in a fresh copy
  // of this test program (the child branch below) with the variable set.
  if (std::getenv("TESSERA_TEST_COLL_CHILD") != nullptr) {
    try {
      (void)ts::dist::algorithms();
      std::printf("no error\n");
    } catch (const ts::ConfigError& e) {
      std::printf("%s\n", e.what());
    }
    std::fflush(stdout);
    std::_Exit(0);
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "TESSERA_TEST_COLL_CHILD=1 TESSERA_COLL='all_reduce:warp;*:direct' '" + self +
                              "' '-tc=an unknown algorithm in TESSERA_COLL names the variable' 2>&1";
  FILE* child = popen(command.c_str(), "r");
  REQUIRE(child != nullptr);
  std::string message;
  char buffer[512];
  for (size_t got; (got = std::fread(buffer, 1, sizeof(buffer), child)) > 0;) message.append(buffer, got);
  pclose(child);
  CAPTURE(message);
  CHECK(message.find("TESSERA_COLL") != std::string::npos);
  CHECK(message.find("all_reduce:warp;*:direct") != std::string::npos);
  CHECK(message.find("collective rule 'all_reduce:warp': unknown algorithm 'warp'; known algorithms: ") !=
        std::string::npos);
}

TEST_CASE("selection rules: order, size ranges, wildcard and errors") {
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_reduce[0-1K]:direct;all_reduce:ring;*:direct");
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 512) == "direct");
  CHECK(ts::dist::algorithm_for("all_reduce", 4, 4096) == "ring");
  CHECK(ts::dist::algorithm_for("gather", 4, 4096) == "direct");
  CHECK(ts::dist::algorithms() == "all_reduce[0-1024]:direct;all_reduce:ring;*:direct");
  CHECK_THROWS_WITH_AS(ts::dist::set_algorithms("all_reduce:warp"),
                       doctest::Contains("unknown algorithm 'warp'; known algorithms: "), ts::ConfigError);
  CHECK_THROWS_WITH_AS(ts::dist::set_algorithms("all_reduse:ring"),
                       doctest::Contains("unknown collective 'all_reduse'"), ts::ConfigError);
  CHECK_THROWS_WITH_AS(ts::dist::set_algorithms("all_reduce[1M-1K]:ring"),
                       doctest::Contains("the size range is empty"), ts::ConfigError);
  CHECK_THROWS_WITH_AS(ts::dist::set_algorithms("all_reduce ring"), doctest::Contains("has no ':'"),
                       ts::ConfigError);
  // A failed set leaves the rules as they were.
  CHECK(ts::dist::algorithms() == "all_reduce[0-1024]:direct;all_reduce:ring;*:direct");
  ts::dist::set_algorithms(saved);
}

TEST_CASE("built-in rules: recursive doubling for an all_reduce of up to 64 KiB per rank, ring above") {
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms(ts::comm::kDefaultRules);
  for (int p : {2, 3, 4, 7, 8}) {
    CAPTURE(p);
    CHECK(ts::dist::algorithm_for("all_reduce", p, 4) == "rd");
    CHECK(ts::dist::algorithm_for("all_reduce", p, 64 * 1024) == "rd");  // the range is inclusive
    CHECK(ts::dist::algorithm_for("all_reduce", p, 64 * 1024 + 1) == "ring");
    CHECK(ts::dist::algorithm_for("all_reduce", p, int64_t{64} << 20) == "ring");
    CHECK(ts::dist::algorithm_for("all_gather", p, 4) == "ring");
  }
  ts::dist::set_algorithms(saved);
}

TEST_CASE("an algorithm whose precondition fails falls back to the next rule") {
  const std::string saved = ts::dist::algorithms();
  ts::dist::set_algorithms("all_gather:rd;all_gather:bruck;*:direct");
  CHECK(ts::dist::algorithm_for("all_gather", 8, 64) == "rd");     // power of two
  CHECK(ts::dist::algorithm_for("all_gather", 6, 64) == "bruck");  // rd needs a power of two
  // A rule for a collective its algorithm does not offer is refused when set (ring has no gather).
  CHECK_THROWS_AS(ts::dist::set_algorithms("gather:ring"), ts::ConfigError);
  ts::dist::set_algorithms(saved);
}

TEST_CASE("collective rules from a configuration file") {
  ts::Config config = ts::Config::from_string("[collectives]\nalgorithms = \"*:direct\"\n");
  CHECK(config.collective_algorithms == "*:direct");
  CHECK_THROWS_WITH_AS(ts::Config::from_string("[collectives]\nalgos = 1\n", "c.toml"),
                       doctest::Contains("c.toml:2: key 'collectives.algos': unknown key"), ts::ConfigError);
}

TEST_CASE("every bundled algorithm is loaded") {
  const std::vector<std::string> names = ts::dist::algorithm_names();
  for (const char* name : {"direct", "ring", "tree", "rd", "rabenseifner", "bruck"})
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
}

TEST_CASE("ring schedules follow a ring order and stay correct") {
  for (const char* collective : {"all_reduce", "all_gather", "reduce_scatter"})
    for (int64_t count : {int64_t{1}, int64_t{7}}) {
      CAPTURE(collective);
      CHECK(ts::dist::verify_schedule("ring", collective, 5, count, 0, ts::ReduceOp::SUM, {3, 0, 4, 1, 2}) ==
            "");
      CHECK(ts::dist::verify_schedule("ring", collective, 8, count, 0, ts::ReduceOp::SUM,
                                      {0, 2, 4, 6, 1, 3, 5, 7}) == "");
    }
  CHECK_THROWS_WITH_AS(ts::dist::verify_schedule("ring", "all_reduce", 3, 1, 0, ts::ReduceOp::SUM, {0, 0, 1}),
                       doctest::Contains("permutation"), ts::Error);
}

TEST_CASE("collectives on a group that straddles nodes use the topology's ring order") {
  const std::string saved = ts::dist::algorithms();
  ts::set_default_topology("nodes:4");
  // Interleaved across two nodes of four: the ring visits each node's ranks together.
  const std::vector<int> members = {0, 4, 1, 5, 2, 6, 3, 7};
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < 8; ++r) shards.emplace_back(r, ts::arange(10).to(ts::kFloat64) * (r + 1));
  ts::Tensor ring_result = ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
  ts::Tensor direct_result = ts::local_tensor(ts::RankMap<ts::Tensor>(shards)).clone();
  ring_result = ring_result.clone();
  ts::dist::set_algorithms("all_reduce:ring;all_gather:ring;*:direct");
  ts::dist::all_reduce(ring_result, ts::ReduceOp::SUM, ts::ProcessGroup(members));
  ts::dist::set_algorithms("*:direct");
  ts::dist::all_reduce(direct_result, ts::ReduceOp::SUM, ts::ProcessGroup(members));
  CHECK(ts::equal(ring_result, direct_result));
  CHECK(ts::default_topology(8).ring_order(members) == std::vector<int>{0, 1, 2, 3, 7, 4, 5, 6});
  ts::set_default_topology("");
  ts::dist::set_algorithms(saved);
}

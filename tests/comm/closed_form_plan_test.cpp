// The bundled direct, ring, rd and bruck algorithms' plans are written in closed form
// (comm/closed_form_plan.hpp) instead of being derived from their recorded schedules. The oracle is
// the general path: the same algorithm's schedule, recorded, verified by the checker and run
// symbolically by derive_plan. Equal plans evaluate to equal bits, so every result of the closed
// form is the one the schedule gives.
#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <filesystem>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "comm/algorithm.hpp"
#include "comm/closed_form_plan.hpp"
#include "comm/components.hpp"
#include "comm/run_collective.hpp"
#include "comm/schedule_plan.hpp"
#include "plugin/loaded_plugin.hpp"
#include "plugin/registry.hpp"

namespace ts = tessera;
namespace comm = tessera::comm;
namespace fs = std::filesystem;

namespace {

bool same_place(const comm::PlanPlace& a, const comm::PlanPlace& b) {
  return a.base == b.base && a.at == b.at;
}

// Every field of two plans, node by node, so that a difference names where it is.
void check_same_plan(const comm::SchedulePlan& got, const comm::SchedulePlan& want) {
  CHECK(got.group_size == want.group_size);
  CHECK(got.reduce_op == want.reduce_op);
  REQUIRE(got.nodes.size() == want.nodes.size());
  for (size_t i = 0; i < got.nodes.size(); ++i) {
    CAPTURE(i);
    const comm::PlanNode& a = got.nodes[i];
    const comm::PlanNode& b = want.nodes[i];
    CHECK(a.left == b.left);
    CHECK(a.left_offset == b.left_offset);
    CHECK(a.right == b.right);
    CHECK(a.right_offset == b.right_offset);
    CHECK(a.length == b.length);
    CHECK(a.slot == b.slot);
    CHECK(a.home == b.home);
    CHECK(a.over == b.over);
    CHECK(same_place(a.left_place, b.left_place));
    CHECK(same_place(a.right_place, b.right_place));
    CHECK(same_place(a.out_place(got.group_size), b.out_place(want.group_size)));
  }
  REQUIRE(got.batches.size() == want.batches.size());
  for (size_t i = 0; i < got.batches.size(); ++i) {
    CAPTURE(i);
    const comm::PlanBatch& a = got.batches[i];
    const comm::PlanBatch& b = want.batches[i];
    CHECK(a.first == b.first);
    CHECK(a.count == b.count);
    CHECK(a.length == b.length);
    CHECK(a.continues == b.continues);
    CHECK(a.from == b.from);
    CHECK(a.continued_by == b.continued_by);
    CHECK(a.others == b.others);
    CHECK(a.chain_ahead == b.chain_ahead);
  }
  REQUIRE(got.others.size() == want.others.size());
  for (size_t i = 0; i < got.others.size(); ++i) CHECK(same_place(got.others[i], want.others[i]));
  CHECK(got.arena_size == want.arena_size);
  CHECK(got.staging_size == want.staging_size);
  CHECK(got.outputs == want.outputs);
  CHECK(got.output_sizes == want.output_sizes);
  CHECK(got.output_class == want.output_class);
}

tessera_status accept_any(void*, const tessera_collective_request*, tessera_error*) { return TESSERA_OK; }

// A table that only names an algorithm and accepts every request: what has_closed_form_plan reads
// of it.
tessera_collective_algorithm table_named(const char* name) {
  tessera_collective_algorithm table{};
  table.struct_size = sizeof(table);
  table.name = name;
  table.collectives = ~uint64_t{0};
  table.check = &accept_any;
  return table;
}

}  // namespace

// Counts below, at and above the length up to which the plan batches nodes by depth (longer nodes
// keep the order the run made them in): both orders have to match.
constexpr std::array<int64_t, 4> kCounts{0, 1, 5, 4097};
// Sum and product commute bitwise (the plan orders their operands), min and max do not.
constexpr std::array<int32_t, 4> kOps{TESSERA_REDUCE_SUM, TESSERA_REDUCE_PRODUCT, TESSERA_REDUCE_MIN,
                                      TESSERA_REDUCE_MAX};

TEST_CASE("the direct algorithm's closed-form plan is the plan its verified schedule gives") {
  const auto direct = comm::algorithm("direct");
  REQUIRE(direct != nullptr);
  size_t compared = 0;
  for (int32_t collective = 0; collective < TESSERA_COLL_COUNT; ++collective) {
    for (int p : {1, 2, 3, 7, 16}) {
      for (int64_t count : kCounts) {
        for (int32_t op : kOps) {
          for (int root : {0, p / 2, p - 1}) {
            const auto request = comm::make_request(collective, p, count, ts::kFloat32, op, root);
            if (!comm::direct_plan_covers(request)) continue;
            CAPTURE(comm::describe_request(request));
            REQUIRE(comm::has_closed_form_plan(*direct, request));
            check_same_plan(comm::closed_form_plan("direct", request),
                            comm::derive_plan(direct->build(request)));
            ++compared;
          }
        }
      }
    }
  }
  // Every collective but barrier, each over every case.
  CHECK(compared == 8 * 5 * kCounts.size() * kOps.size() * 3);
}

TEST_CASE("the bundled ring, rd and bruck closed-form plans are the plans their verified schedules give") {
  struct Case {
    const char* algorithm;
    int32_t collective;
  };
  size_t compared = 0;
  for (const Case c : {Case{"ring", TESSERA_COLL_ALL_GATHER}, Case{"ring", TESSERA_COLL_REDUCE_SCATTER},
                       Case{"rd", TESSERA_COLL_ALL_GATHER}, Case{"rd", TESSERA_COLL_REDUCE_SCATTER},
                       Case{"bruck", TESSERA_COLL_ALL_GATHER}, Case{"bruck", TESSERA_COLL_ALL_TO_ALL}}) {
    const auto algorithm = comm::algorithm(c.algorithm);
    REQUIRE(algorithm != nullptr);
    for (int p : {1, 2, 3, 7, 16}) {
      // A ring not in rank order (every other rank, then the rest), as the host gives on a topology.
      std::vector<int32_t> ring;
      for (int32_t r = 0; r < p; r += 2) ring.push_back(r);
      for (int32_t r = 1; r < p; r += 2) ring.push_back(r);
      for (int64_t count : kCounts) {
        for (int32_t op : kOps) {
          for (const bool reordered : {false, true}) {
            auto request = comm::make_request(c.collective, p, count, ts::kFloat32, op, 0);
            request.ring_order = reordered ? ring.data() : nullptr;
            CAPTURE(c.algorithm);
            CAPTURE(reordered);
            CAPTURE(comm::describe_request(request));
            // rd works over powers of two only; any other size has no plan, closed or derived.
            const bool applies = algorithm->check(request).empty();
            CHECK(applies == (std::string(c.algorithm) != "rd" || (p & (p - 1)) == 0));
            REQUIRE(comm::has_closed_form_plan(*algorithm, request) == applies);
            if (!applies) continue;
            check_same_plan(comm::closed_form_plan(c.algorithm, request),
                            comm::derive_plan(algorithm->build(request)));
            ++compared;
          }
        }
      }
    }
  }
  // Three sizes of rd (1, 2, 16) and five of the others, every count and op, both ring orders.
  CHECK(compared == (5 + 5 + 3 + 3 + 5 + 5) * kCounts.size() * kOps.size() * 2);
}

TEST_CASE("collectives without a closed form, and other algorithms, keep their verified schedules") {
  const auto direct = comm::algorithm("direct");
  REQUIRE(direct != nullptr);
  const auto barrier = comm::make_request(TESSERA_COLL_BARRIER, 7, 3, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  CHECK_FALSE(comm::direct_plan_covers(barrier));
  CHECK_FALSE(comm::has_closed_form_plan(*direct, barrier));
  struct Case {
    const char* algorithm;
    int32_t collective;
  };
  for (const Case c : {Case{"ring", TESSERA_COLL_ALL_REDUCE}, Case{"rd", TESSERA_COLL_ALL_REDUCE},
                       Case{"tree", TESSERA_COLL_ALL_REDUCE}, Case{"tree", TESSERA_COLL_BROADCAST},
                       Case{"rabenseifner", TESSERA_COLL_ALL_REDUCE}}) {
    const auto algorithm = comm::algorithm(c.algorithm);
    REQUIRE(algorithm != nullptr);
    const auto request = comm::make_request(c.collective, 4, 3, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
    CAPTURE(c.algorithm);
    CAPTURE(comm::describe_request(request));
    REQUIRE(algorithm->check(request).empty());
    CHECK_FALSE(comm::has_closed_form_plan(*algorithm, request));
  }
  // A malformed request has no plan of any kind.
  const auto no_ranks =
      comm::make_request(TESSERA_COLL_ALL_REDUCE, 0, 3, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  CHECK_FALSE(comm::has_closed_form_plan(*direct, no_ranks));
}

TEST_CASE("only the direct algorithm of the bundled plugin file is trusted with a closed-form plan") {
  const fs::path bundled = ts::plugin::bundled_plugin_dir() / "libtessera-coll-direct.so";
  REQUIRE(fs::exists(bundled));
  // The same file copied elsewhere: the same code, but not the file the core ships and was tested
  // with, as a third party's plugin calling itself coll-direct would be.
  // One folder per process: a file another test run has mapped is never overwritten.
  const fs::path elsewhere =
      fs::temp_directory_path() / ("tessera-closed-form-test-" + std::to_string(::getpid()));
  fs::create_directories(elsewhere);
  const fs::path copy = elsewhere / "libtessera-coll-direct.so";
  fs::copy_file(bundled, copy, fs::copy_options::overwrite_existing);
  CHECK(ts::plugin::bundled(bundled));
  CHECK_FALSE(ts::plugin::bundled(copy));

  const auto request = comm::make_request(TESSERA_COLL_ALL_REDUCE, 5, 4, ts::kFloat32, TESSERA_REDUCE_SUM, 0);
  const tessera_collective_algorithm named_direct = table_named("direct");
  const tessera_collective_algorithm named_other = table_named("direct2");
  const comm::CollectiveAlgorithm shipped(&named_direct, ts::plugin::LoadedPlugin::open(bundled));
  const comm::CollectiveAlgorithm copied(&named_direct, ts::plugin::LoadedPlugin::open(copy));
  const comm::CollectiveAlgorithm renamed(&named_other, ts::plugin::LoadedPlugin::open(bundled));
  CHECK(comm::has_closed_form_plan(shipped, request));
  CHECK_FALSE(comm::has_closed_form_plan(copied, request));
  CHECK_FALSE(comm::has_closed_form_plan(renamed, request));
  std::error_code ignored;  // the copy stays mapped until the algorithms go: removing it is safe
  fs::remove_all(elsewhere, ignored);
}

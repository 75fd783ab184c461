// The oracle `tessera plugins check` compares collective results with, against values worked out by
// hand from the inputs' formula (collective_cases.cpp): a reducing case's input at (rank r, index i)
// is (131 r + 17 i + 7) mod 1000 - 500 (for product: -2, -1, 1, 2 by (3 r + 5 i + 1) mod 4), any
// other case's is 100000 r + i + 1.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "plugin_check/collective_cases.hpp"
#include "plugin_check/rules_text.hpp"

using namespace tessera::cli::check;
using tessera::ReduceOp;

namespace {

using Values = std::vector<int64_t>;

CollectiveCase a_case(Collective collective, int p, int64_t n, ReduceOp::Kind op = ReduceOp::SUM,
                      int root = 0) {
  CollectiveCase c;
  c.collective = collective;
  c.group_size = p;
  c.count = n;
  c.dtype = tessera::kInt64;
  c.op = op;
  c.root = root;
  return c;
}

}  // namespace

TEST_CASE("inputs: small distinct integers per rank and element") {
  CHECK(input_value(a_case(Collective::all_gather, 3, 5), 2, 3) == 200004);
  CHECK(input_value(a_case(Collective::all_reduce, 3, 5), 0, 0) == -493);
  CHECK(input_value(a_case(Collective::all_reduce, 3, 5), 2, 1) == -214);
  CHECK(input_value(a_case(Collective::all_reduce, 4, 1, ReduceOp::PRODUCT), 1, 0) == -2);
  CHECK(input_length(a_case(Collective::reduce_scatter, 3, 5)) == 15);
  CHECK(input_length(a_case(Collective::all_to_all, 3, 5)) == 15);
  CHECK(input_length(a_case(Collective::scatter, 3, 5)) == 15);
  CHECK(input_length(a_case(Collective::gather, 3, 5)) == 5);
}

TEST_CASE("reducing collectives: op over every rank's element") {
  // Ranks 0, 1, 2 hold (-493, -476), (-362, -345), (-231, -214).
  for (int rank = 0; rank < 3; ++rank)
    CHECK(expected_output(a_case(Collective::all_reduce, 3, 2), rank) == Values{-1086, -1035});
  CHECK(expected_output(a_case(Collective::all_reduce, 3, 2, ReduceOp::MIN), 1) == Values{-493, -476});
  CHECK(expected_output(a_case(Collective::all_reduce, 3, 2, ReduceOp::MAX), 2) == Values{-231, -214});
  // Factors -1, -2, 2, 1.
  CHECK(expected_output(a_case(Collective::all_reduce, 4, 1, ReduceOp::PRODUCT), 0) == Values{4});
  // -493 and -362 bitwise.
  CHECK(expected_output(a_case(Collective::all_reduce, 2, 1, ReduceOp::BXOR), 0) == Values{133});
  CHECK(expected_output(a_case(Collective::all_reduce, 2, 1, ReduceOp::BAND), 1) == Values{-494});
  CHECK(expected_output(a_case(Collective::all_reduce, 2, 1, ReduceOp::BOR), 1) == Values{-361});
  // reduce: the root only.
  CHECK(expected_output(a_case(Collective::reduce, 3, 2, ReduceOp::SUM, 2), 2) == Values{-1086, -1035});
  CHECK_FALSE(expected_output(a_case(Collective::reduce, 3, 2, ReduceOp::SUM, 2), 0).has_value());
  // reduce_scatter p=2 n=1: rank 1 gets element 1 of both: -476 + -345.
  CHECK(expected_output(a_case(Collective::reduce_scatter, 2, 1), 1) == Values{-821});
}

TEST_CASE("data-moving collectives: blocks where the table puts them") {
  CHECK(expected_output(a_case(Collective::broadcast, 3, 2, ReduceOp::SUM, 1), 0) == Values{100001, 100002});
  CHECK(expected_output(a_case(Collective::all_gather, 2, 2), 1) == Values{1, 2, 100001, 100002});
  // all_to_all p=2 n=2: rank 1 gets block 1 (elements 2, 3) of rank 0, then of rank 1.
  CHECK(expected_output(a_case(Collective::all_to_all, 2, 2), 1) == Values{3, 4, 100003, 100004});
  // scatter from root 2: rank 1 gets block 1 of the root's input.
  CHECK(expected_output(a_case(Collective::scatter, 3, 1, ReduceOp::SUM, 2), 1) == Values{200002});
  CHECK(expected_output(a_case(Collective::gather, 2, 1, ReduceOp::SUM, 1), 1) == Values{1, 100001});
  CHECK_FALSE(expected_output(a_case(Collective::gather, 2, 1, ReduceOp::SUM, 1), 0).has_value());
  CHECK(expected_output(a_case(Collective::barrier, 4, 0), 3) == Values{});
  // Count 0: empty outputs, still promised.
  CHECK(expected_output(a_case(Collective::all_gather, 3, 0), 0) == Values{});
}

TEST_CASE("the cases: every count, dtype, op the dtype takes and root") {
  // 4 counts x (float32 4 + float64 4 + int32 7 + int64 7 ops).
  CHECK(cases_for(Collective::all_reduce, 4).size() == 88);
  CHECK(cases_for(Collective::reduce, 4).size() == 176);    // roots 0 and 3
  CHECK(cases_for(Collective::broadcast, 1).size() == 16);  // one root in a group of one
  CHECK(cases_for(Collective::broadcast, 3).size() == 32);
  CHECK(cases_for(Collective::all_gather, 7).size() == 16);
  CHECK(cases_for(Collective::barrier, 16).size() == 1);
  CHECK(checked_group_sizes() == std::vector<int>{1, 2, 3, 4, 7, 8, 16});
  CollectiveCase c = a_case(Collective::reduce, 7, 5, ReduceOp::BAND, 6);
  c.dtype = tessera::kInt32;
  CHECK(c.describe() == "reduce p=7 count=5 int32 band root=6");
  CHECK(c.describe_request() == "reduce p=7 count=5 band root=6");
  CHECK(a_case(Collective::barrier, 3, 0).describe() == "barrier p=3");
}

TEST_CASE("no output the oracle promises is the unwritten marker") {
  for (Collective collective : kCollectives)
    for (int p : checked_group_sizes())
      for (const CollectiveCase& c : cases_for(collective, p))
        for (int rank = 0; rank < p; ++rank)
          if (const std::optional<Values> out = expected_output(c, rank))
            for (int64_t value : *out) REQUIRE(value != kUnwritten);
}

TEST_CASE("rules without those selecting one algorithm") {
  CHECK(rules_without("all_reduce:ring;all_gather[0-64K]:ring ; *:direct", "ring") == "*:direct");
  CHECK(rules_without("all_reduce:ring;*:direct", "direct") == "all_reduce:ring");
  CHECK(rules_without("all_reduce:ring;*:direct", "tree") == "all_reduce:ring;*:direct");
  CHECK(rules_without("auto;all_reduce:ringlet", "ring") == "auto;all_reduce:ringlet");
  CHECK(rules_without("", "ring").empty());
}

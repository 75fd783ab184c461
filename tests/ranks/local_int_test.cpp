#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

TEST_CASE("rank sets and rank maps are ordered and reject duplicates") {
  ts::RankSet s{5, 0, 2};
  CHECK(s.ranks() == std::vector<int>{0, 2, 5});
  CHECK(s.to_string() == "{0, 2, 5}");
  CHECK(ts::RankSet::range(3) == ts::RankSet{0, 1, 2});
  CHECK_THROWS_WITH_AS(ts::RankSet({1, 1}), doctest::Contains("rank 1 appears twice"), ts::Error);
  ts::RankMap<int> m{{3, 30}, {1, 10}};
  CHECK(m.ranks() == ts::RankSet{1, 3});
  CHECK(m.at(3) == 30);
  m.set(2, 20);
  CHECK(m.ranks() == ts::RankSet{1, 2, 3});
  CHECK_THROWS_WITH_AS(m.at(7), doctest::Contains("no value for rank 7"), ts::Error);
  CHECK_THROWS_AS((ts::RankMap<int>{{0, 1}, {0, 2}}), ts::Error);
}

TEST_CASE("local int golden values") {
  ts::LocalInt a({{0, 10}, {1, 20}, {2, 30}});
  ts::LocalInt b({{0, 1}, {1, 2}, {2, 3}});
  CHECK((a + b).values() == std::map<int, int64_t>{{0, 11}, {1, 22}, {2, 33}});
  CHECK((a * b).values() == std::map<int, int64_t>{{0, 10}, {1, 40}, {2, 90}});
  CHECK(ts::sym_min(ts::LocalInt({{0, 10}, {1, 5}}), ts::LocalInt({{0, 7}, {1, 8}})).values() ==
        std::map<int, int64_t>{{0, 7}, {1, 5}});
  CHECK(ts::SymInt(ts::LocalInt({{0, 3}, {1, 4}})) <= ts::SymInt(ts::LocalInt({{0, 10}, {1, 10}})));
}

TEST_CASE("a local int whose ranks agree is a plain int") {
  ts::SymInt same = ts::LocalInt({{0, 4}, {1, 4}});
  CHECK_FALSE(same.is_local());
  CHECK(same.as_int() == 4);
  ts::SymInt diff = ts::LocalInt({{0, 4}, {1, 6}});
  ts::SymInt collapsed = diff - ts::LocalInt({{0, 0}, {1, 2}});
  CHECK_FALSE(collapsed.is_local());
  CHECK(collapsed == 4);
  CHECK_THROWS_WITH_AS(diff.as_int(), doctest::Contains("{0: 4, 1: 6}"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::SymInt(3).local(), doctest::Contains("plain integer"), ts::Error);
}

TEST_CASE("floor division and modulo follow Python") {
  ts::SymInt a = ts::LocalInt({{0, 7}, {1, -7}, {2, 7}, {3, -7}});
  ts::SymInt b = ts::LocalInt({{0, 2}, {1, 2}, {2, -2}, {3, -2}});
  CHECK((a / b).values() == std::map<int, int64_t>{{0, 3}, {1, -4}, {2, -4}, {3, 3}});
  CHECK((a % b).values() == std::map<int, int64_t>{{0, 1}, {1, 1}, {2, -1}, {3, -1}});
  CHECK((-a).values() == std::map<int, int64_t>{{0, -7}, {1, 7}, {2, -7}, {3, 7}});
  CHECK((a % 3).values() == std::map<int, int64_t>{{0, 1}, {1, 2}, {2, 1}, {3, 2}});
  CHECK(ts::sym_max(a, 0).values() == std::map<int, int64_t>{{0, 7}, {1, 0}, {2, 7}, {3, 0}});
  CHECK(ts::sym_sum({a, b, 1}).values() == std::map<int, int64_t>{{0, 10}, {1, -4}, {2, 6}, {3, -8}});
}

TEST_CASE("division by zero on one rank names the rank") {
  ts::SymInt a = ts::LocalInt({{0, 6}, {1, 6}, {2, 5}});
  ts::SymInt b = ts::LocalInt({{0, 3}, {1, 0}, {2, 5}});
  CHECK_THROWS_WITH_AS(a / b, doctest::Contains("division by zero on rank 1"), ts::Error);
  CHECK_THROWS_WITH_AS(a % b, doctest::Contains("on rank 1"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::SymInt(1) / 0, doctest::Contains("division by zero"), ts::Error);
}

TEST_CASE("comparisons: eq on every rank, orderings must agree") {
  ts::SymInt a = ts::LocalInt({{0, 1}, {1, 2}});
  ts::SymInt b = ts::LocalInt({{0, 1}, {1, 3}});
  CHECK_FALSE(a == b);
  CHECK(a != b);
  CHECK(a == a);
  CHECK(a < 5);
  CHECK((a < 5 && b >= 1));
  CHECK_THROWS_WITH_AS((void)(a < b), doctest::Contains("rank 0: 1 < 1 is false; rank 1: 2 < 3 is true"),
                       ts::Error);
  CHECK_THROWS_WITH_AS((void)(a > 1), doctest::Contains("differs between ranks"), ts::Error);
}

TEST_CASE("local int errors") {
  CHECK_THROWS_WITH_AS(ts::LocalInt(std::map<int, int64_t>{}), doctest::Contains("cannot be empty"),
                       ts::Error);
  ts::SymInt a = ts::LocalInt({{0, 1}, {1, 2}});
  ts::SymInt c = ts::LocalInt({{0, 1}, {2, 2}});
  CHECK_THROWS_WITH_AS(a + c, doctest::Contains("rank sets differ: {0, 1} and {0, 2}"), ts::Error);
  ts::SymInt big = ts::LocalInt({{0, INT64_MAX}, {1, 1}});
  CHECK_THROWS_WITH_AS(big + 1, doctest::Contains("overflows int64 on rank 0"), ts::Error);
}

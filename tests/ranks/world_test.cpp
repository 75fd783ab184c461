// Worlds (tessera/world.hpp): what get_rank/get_world_size see, explicit worlds shared by modes, and
// point-to-point messages that must stay inside their world.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

ts::SymInt per_rank(std::initializer_list<std::pair<int, int64_t>> values) {
  return ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>(std::vector<std::pair<int, int64_t>>(values))));
}

}  // namespace

TEST_CASE("get_rank and get_world_size outside, inside and around modes") {
  CHECK_FALSE(ts::get_rank().is_local());
  CHECK(ts::get_rank().as_int() == 0);
  CHECK(ts::get_world_size() == 1);
  {
    ts::LocalMode mode(3);
    CHECK(ts::get_world_size() == 3);
    REQUIRE(ts::get_rank().is_local());
    CHECK(ts::get_rank().local() == per_rank({{0, 0}, {1, 1}, {2, 2}}).local());
    {
      // A mode over some ranks is a new world of largest rank + 1 ranks.
      ts::LocalMode sparse(ts::RankSet{1, 6});
      CHECK(ts::get_world_size() == 7);
      CHECK(ts::get_rank().local() == per_rank({{1, 1}, {6, 6}}).local());
    }
    CHECK(ts::get_world_size() == 3);
    {
      // Disabled, the mode's world is still the thread's (ops on its tensors go there).
      auto off = mode.disable();
      CHECK(ts::get_world_size() == 3);
      CHECK(ts::current_world() == mode.world());
    }
  }
  CHECK(ts::get_world_size() == 1);
  CHECK(ts::get_rank().as_int() == 0);
}

TEST_CASE("a mode given a World joins it, and a world of one rank works") {
  const ts::World world(5);
  CHECK(world.size() == 5);
  CHECK(world.ranks() == ts::RankSet::range(5));
  {
    ts::LocalMode mode(world);
    CHECK(mode.world() == world);
    CHECK(ts::current_world() == world);
    CHECK(ts::get_world_size() == 5);
    CHECK(mode.ranks() == ts::RankSet::range(5));
  }
  CHECK_FALSE(ts::current_world() == world);
  const ts::World single(1);
  ts::LocalMode mode(single);
  ts::Tensor t = ts::full({3}, 4.0f);
  ts::dist::all_reduce(t);
  CHECK(t.shard(0).to_vector<float>() == std::vector<float>{4, 4, 4});
  CHECK_THROWS_WITH_AS(ts::World(0), doctest::Contains("at least one rank, got 0"), ts::Error);
}

TEST_CASE("two modes on one World share its messages, separate worlds do not") {
  const ts::World world(2);
  ts::Tensor sent;
  {
    ts::LocalMode sender(world);
    sent = ts::rank_map([](int r) { return ts::full({2}, static_cast<float>(10 + r)); });
    ts::dist::send(sent, per_rank({{0, 1}, {1, -1}}));
  }
  {
    ts::LocalMode receiver(world);
    ts::Tensor got = ts::zeros({2});
    ts::dist::recv(got, per_rank({{0, -1}, {1, 0}}));
    CHECK(got.shard(1).to_vector<float>() == std::vector<float>{10, 10});
    ts::dist::check_messages();
  }
  // A fresh world of the same size has its own (empty) mailbox.
  ts::LocalMode other(2);
  {
    ts::LocalMode sender(world);
    ts::dist::send(sent, per_rank({{0, 1}, {1, -1}}));
  }
  ts::Tensor got = ts::zeros({2});
  CHECK_THROWS_WITH_AS(ts::dist::recv(got, per_rank({{0, -1}, {1, 0}})),
                       doctest::Contains("no matching send"), ts::Error);
  ts::LocalMode back(world);
  CHECK_THROWS_WITH_AS(ts::dist::check_messages(), doctest::Contains("1 message(s) from rank 0 to rank 1"),
                       ts::Error);
}

TEST_CASE("send to a rank outside the world fails at the send, naming the rank and the world") {
  for (int size : {1, 3, 7}) {
    CAPTURE(size);
    ts::LocalMode mode(size);
    ts::Tensor t = ts::ones({2});
    std::vector<std::pair<int, int64_t>> to;
    for (int r = 0; r < size; ++r) to.emplace_back(r, r == 0 ? size : -1);
    const ts::SymInt dst =
        size == 1 ? ts::SymInt(int64_t{size}) : ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>(to)));
    const std::string expected = "rank 0 sends to rank " + std::to_string(size) +
                                 ", which is outside the world of " + std::to_string(size) + " rank(s) (0.." +
                                 std::to_string(size - 1) + ")";
    CHECK_THROWS_WITH_AS(ts::dist::send(t, dst), doctest::Contains(expected.c_str()), ts::Error);
    // Nothing was posted: the world is clean.
    ts::dist::check_messages();
  }
  ts::LocalMode mode(3);
  ts::Tensor t = ts::ones({2});
  CHECK_THROWS_WITH_AS(ts::dist::send(t, per_rank({{0, -1}, {1, -4}, {2, -1}})),
                       doctest::Contains("rank 1 sends to rank -4"), ts::Error);
  ts::dist::check_messages();
}

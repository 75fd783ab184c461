// Point-to-point with tags inside ts::spawn: eager sends, matching by (source, tag) in order,
// isend/irecv and batch_isend_irecv, and the errors of mismatched messages.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

TEST_CASE("spawn: a ring of sends with tags received out of order") {
  for (int n : {3, 7, 8}) {
    CAPTURE(n);
    std::vector<std::vector<float>> first(static_cast<size_t>(n)), second(static_cast<size_t>(n));
    ts::spawn(n, [&](int rank) {
      const int next = (rank + 1) % n;
      const int prev = (rank + n - 1) % n;
      // Tag 2 goes first, tag 1 second; the receiver asks for tag 1 first.
      ts::dist::send(ts::full({2}, static_cast<float>(rank * 100 + 2)), next, 2);
      ts::dist::send(ts::full({2}, static_cast<float>(rank * 100 + 1)), next, 1);
      ts::Tensor a = ts::zeros({2});
      ts::Tensor b = ts::zeros({2});
      ts::dist::recv(a, prev, 1);
      ts::dist::recv(b, prev, 2);
      first[static_cast<size_t>(rank)] = a.to_vector<float>();
      second[static_cast<size_t>(rank)] = b.to_vector<float>();
    });
    for (int r = 0; r < n; ++r) {
      const float prev = static_cast<float>((r + n - 1) % n);
      CHECK(first[static_cast<size_t>(r)] == std::vector<float>{prev * 100 + 1, prev * 100 + 1});
      CHECK(second[static_cast<size_t>(r)] == std::vector<float>{prev * 100 + 2, prev * 100 + 2});
    }
  }
}

TEST_CASE("spawn: sends are eager, copied when sent, and received oldest first") {
  std::vector<float> got;
  ts::spawn(2, [&](int rank) {
    if (rank == 0) {
      ts::Tensor t = ts::full({1}, 1.f);
      ts::dist::send(t, 1);
      t.fill_(2.f);  // after the send: the message keeps 1
      ts::dist::send(t, 1);
    } else {
      ts::Tensor t = ts::zeros({1});
      ts::dist::recv(t, 0);
      got.push_back(t.item<float>());
      ts::dist::recv(t, 0);
      got.push_back(t.item<float>());
    }
  });
  CHECK(got == std::vector<float>{1.f, 2.f});
}

TEST_CASE("spawn: two ranks that both send first proceed") {
  std::vector<float> got(2);
  ts::spawn(2, [&](int rank) {
    ts::dist::send(ts::full({1}, static_cast<float>(rank + 10)), 1 - rank);
    ts::Tensor t = ts::zeros({1});
    ts::dist::recv(t, 1 - rank);
    got[static_cast<size_t>(rank)] = t.item<float>();
  });
  CHECK(got == std::vector<float>{11.f, 10.f});
}

TEST_CASE("spawn: irecv posted before the send completes on wait, receives match in posting order") {
  std::vector<int> completed_before(2, -1);
  std::vector<float> got;
  ts::spawn(2, [&](int rank) {
    if (rank == 1) {
      ts::Tensor a = ts::zeros({1});
      ts::Tensor b = ts::zeros({1});
      ts::dist::Work wa = ts::dist::irecv(a, 0, 5);
      ts::dist::Work wb = ts::dist::irecv(b, 0, 5);
      completed_before[0] = wa.is_completed() ? 1 : 0;
      ts::dist::barrier();  // rank 0 sends after this
      wb.wait();
      wa.wait();
      completed_before[1] = wa.is_completed() && wb.is_completed() ? 1 : 0;
      got = {a.item<float>(), b.item<float>()};
    } else {
      ts::dist::barrier();
      ts::dist::Work w = ts::dist::isend(ts::full({1}, 1.f), 1, 5);
      CHECK(w.is_completed());  // eager
      ts::dist::send(ts::full({1}, 2.f), 1, 5);
    }
  });
  CHECK(completed_before[0] == 0);
  CHECK(completed_before[1] == 1);
  CHECK(got == std::vector<float>{1.f, 2.f});  // the first posted receive got the first message
}

TEST_CASE("spawn: batch_isend_irecv exchanges with both neighbours of a ring") {
  constexpr int n = 7;
  std::vector<std::vector<float>> got(n);
  ts::spawn(n, [&](int rank) {
    const int next = (rank + 1) % n;
    const int prev = (rank + n - 1) % n;
    ts::Tensor from_prev = ts::zeros({3});
    ts::Tensor from_next = ts::zeros({3});
    std::vector<ts::dist::P2POp> ops{
        ts::dist::P2POp(ts::dist::irecv, from_prev, prev, 0),
        ts::dist::P2POp(ts::dist::irecv, from_next, next, 1),
        ts::dist::P2POp(ts::dist::isend, ts::full({3}, static_cast<float>(rank)), next, 0),
        ts::dist::P2POp(ts::dist::isend, ts::full({3}, static_cast<float>(-rank)), prev, 1),
    };
    std::vector<ts::dist::Work> works = ts::dist::batch_isend_irecv(ops);
    CHECK(works.size() == 4);
    for (ts::dist::Work& w : works) w.wait();
    got[static_cast<size_t>(rank)] = {from_prev.to_vector<float>()[0], from_next.to_vector<float>()[2]};
  });
  for (int r = 0; r < n; ++r)
    CHECK(got[static_cast<size_t>(r)] ==
          std::vector<float>{static_cast<float>((r + n - 1) % n), -static_cast<float>((r + 1) % n)});
}

TEST_CASE(
    "spawn: a message whose shape or dtype differs from the receiving tensor is an error on the receiver") {
  CHECK_THROWS_WITH_AS(
      ts::spawn(2,
                [](int rank) {
                  if (rank == 0) ts::dist::send(ts::zeros({3}), 1, 4);
                  if (rank == 1) {
                    ts::Tensor t = ts::zeros({2, 2});
                    ts::dist::recv(t, 0, 4);
                  }
                }),
      doctest::Contains("recv(src=0, tag=4) on rank 1: the message from rank 0 is float32 [3] but the "
                        "receiving tensor is float32 [2, 2]"),
      ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   if (rank == 0) ts::dist::send(ts::zeros({2}, ts::kInt64), 1);
                                   if (rank == 1) {
                                     ts::Tensor t = ts::zeros({2});
                                     ts::dist::Work w = ts::dist::irecv(t, 0);
                                     w.wait();
                                   }
                                 }),
                       doctest::Contains("is int64 [2] but the receiving tensor is float32 [2]"),
                       ts::RankError);
}

TEST_CASE("spawn: bad peers, unreceived messages and unmatched receives are errors") {
  CHECK_THROWS_WITH_AS(
      ts::spawn(3,
                [](int rank) {
                  if (rank == 2) ts::dist::send(ts::zeros({1}), 3);
                }),
      doctest::Contains("send on rank 2: the destination 3 is outside the spawned world of 3 rank(s)"),
      ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   ts::Tensor t = ts::zeros({1});
                                   if (rank == 1) ts::dist::recv(t, 1);
                                 }),
                       doctest::Contains("recv on rank 1: the source is the rank itself"), ts::RankError);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   if (rank == 0) ts::dist::send(ts::zeros({1}), 1, 9);
                                 }),
                       doctest::Contains("a message from rank 0 to rank 1 with tag 9 was never received"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int rank) {
                                   ts::Tensor t = ts::zeros({1});
                                   if (rank == 0) (void)ts::dist::irecv(t, 1, 3);
                                 }),
                       doctest::Contains("irecv(src=1, tag=3) on rank 0 never got a message"), ts::Error);
}

TEST_CASE("spawn: a Work waited outside its rank's program is an error, not a hang") {
  ts::dist::Work kept;
  CHECK_THROWS_AS(ts::spawn(2,
                            [&](int rank) {
                              ts::Tensor t = ts::zeros({1});
                              if (rank == 0) kept = ts::dist::irecv(t, 1);
                            }),
                  ts::Error);  // unmatched at the end
  CHECK_FALSE(kept.is_completed());
  CHECK_THROWS_WITH_AS(kept.wait(), doctest::Contains("only rank 0's program can wait for its receive"),
                       ts::Error);
}

TEST_CASE("LocalMode: send and recv with tags") {
  ts::LocalMode mode(2);
  ts::Tensor t = ts::rank_map([](int r) { return ts::full({1}, static_cast<float>(r + 1)); });
  ts::dist::send(t, ts::SymInt(ts::LocalInt({{0, 1}, {1, -1}})), 7);
  ts::dist::send(t * 10, ts::SymInt(ts::LocalInt({{0, 1}, {1, -1}})), 3);
  ts::Tensor got = ts::rank_map([](int) { return ts::zeros({1}); });
  ts::dist::recv(got, ts::SymInt(ts::LocalInt({{0, -1}, {1, 0}})), 3);
  CHECK(got.shard(1).item<float>() == 10.f);
  ts::dist::recv(got, ts::SymInt(ts::LocalInt({{0, -1}, {1, 0}})), 7);
  CHECK(got.shard(1).item<float>() == 1.f);
  CHECK_THROWS_WITH_AS(ts::dist::recv(got, ts::SymInt(ts::LocalInt({{0, -1}, {1, 0}})), 7),
                       doctest::Contains("recv on rank 1 from rank 0 with tag 7: no matching send"),
                       ts::Error);
  ts::dist::Work w = ts::dist::isend(t, ts::SymInt(ts::LocalInt({{0, 1}, {1, -1}})), 1);
  CHECK(w.is_completed());
  ts::dist::Work r = ts::dist::irecv(got, ts::SymInt(ts::LocalInt({{0, -1}, {1, 0}})), 1);
  CHECK(r.is_completed());
  CHECK(got.shard(1).item<float>() == 1.f);
}

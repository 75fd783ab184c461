// Collectives inside ts::spawn: every rank passes its own plain tensor; results are checked against
// plain loops over the known inputs (each rank's input is a formula of its rank).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

// Rank r's input: element i is r * 10 + i + 0.5 (exact in float32 for these sizes).
std::vector<float> input_of(int rank, int count) {
  std::vector<float> v;
  for (int i = 0; i < count; ++i) v.push_back(static_cast<float>(rank * 10 + i) + 0.5f);
  return v;
}

ts::Tensor tensor_of(const std::vector<float>& values) {
  return ts::from_values(values, {static_cast<int64_t>(values.size())});
}

}  // namespace

TEST_CASE("spawn: ranks see their rank and the world size, world sizes 1, 3, 7, 8") {
  for (int n : {1, 3, 7, 8}) {
    CAPTURE(n);
    std::vector<int> ranks_seen(static_cast<size_t>(n), -1), sizes_seen(static_cast<size_t>(n), -1);
    ts::spawn(n, [&](int rank) {
      ranks_seen[static_cast<size_t>(rank)] = static_cast<int>(ts::get_rank().as_int());
      sizes_seen[static_cast<size_t>(rank)] = ts::get_world_size();
      CHECK_FALSE(ts::ones({2}).is_local());  // a rank's tensors are plain
    });
    for (int r = 0; r < n; ++r) {
      CHECK(ranks_seen[static_cast<size_t>(r)] == r);
      CHECK(sizes_seen[static_cast<size_t>(r)] == n);
    }
  }
  CHECK(ts::get_world_size() == 1);  // the caller's world is untouched
}

TEST_CASE("spawn: all_reduce, broadcast and all_gather match plain loops, world sizes 1, 3, 7, 8") {
  constexpr int count = 5;
  for (int n : {1, 3, 7, 8}) {
    CAPTURE(n);
    std::vector<float> sum(count, 0.f), maximum(count, -1e30f);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < count; ++i) {
        sum[static_cast<size_t>(i)] += input_of(r, count)[static_cast<size_t>(i)];
        maximum[static_cast<size_t>(i)] =
            std::max(maximum[static_cast<size_t>(i)], input_of(r, count)[static_cast<size_t>(i)]);
      }
    std::vector<float> gathered;
    for (int r = 0; r < n; ++r)
      for (float x : input_of(r, count)) gathered.push_back(x);
    const int root = n - 1;

    std::vector<std::vector<float>> got_sum(static_cast<size_t>(n)), got_max(static_cast<size_t>(n)),
        got_bcast(static_cast<size_t>(n)), got_gather(static_cast<size_t>(n)),
        got_list(static_cast<size_t>(n));
    ts::spawn(n, [&](int rank) {
      const size_t me = static_cast<size_t>(rank);
      ts::Tensor t = tensor_of(input_of(rank, count));
      ts::Tensor alias = t;  // another handle: the result must land in the same tensor
      ts::dist::all_reduce(t);
      got_sum[me] = alias.to_vector<float>();

      ts::Tensor m = tensor_of(input_of(rank, count));
      ts::dist::all_reduce(m, ts::ReduceOp::MAX);
      got_max[me] = m.to_vector<float>();

      ts::Tensor b = tensor_of(input_of(rank, count));
      ts::dist::broadcast(b, root);
      got_bcast[me] = b.to_vector<float>();

      ts::Tensor out = ts::zeros({n * count});
      ts::dist::all_gather_into_tensor(out, tensor_of(input_of(rank, count)));
      got_gather[me] = out.to_vector<float>();

      std::vector<ts::Tensor> list;
      for (int i = 0; i < n; ++i) list.push_back(ts::zeros({count}));
      ts::dist::all_gather(list, tensor_of(input_of(rank, count)));
      for (const ts::Tensor& piece : list)
        for (float x : piece.to_vector<float>()) got_list[me].push_back(x);
    });
    for (size_t r = 0; r < static_cast<size_t>(n); ++r) {
      CAPTURE(r);
      CHECK(got_sum[r] == sum);
      CHECK(got_max[r] == maximum);
      CHECK(got_bcast[r] == input_of(root, count));
      CHECK(got_gather[r] == gathered);
      CHECK(got_list[r] == gathered);
    }
  }
}

TEST_CASE("spawn: the result lands in the bytes of a view the rank passes") {
  std::vector<std::vector<float>> whole(3);
  ts::spawn(3, [&](int rank) {
    ts::Tensor big = ts::full({6}, 100.f);
    ts::Tensor front = big.narrow(0, 0, 3);
    front.copy_(ts::full({3}, static_cast<float>(rank + 1)));
    ts::dist::all_reduce(front);
    whole[static_cast<size_t>(rank)] = big.to_vector<float>();
  });
  for (const auto& w : whole) CHECK(w == std::vector<float>{6.f, 6.f, 6.f, 100.f, 100.f, 100.f});
}

// Rounds of all_reduce in which the ranks pass the same tensors again, some ranks a new tensor,
// every rank a view of its tensor, and tensors of another shape: each round's result must land in
// the tensors passed that round and nowhere else (the scheduler keeps what it assembled for the
// whole world's collectives only while every member passes the very same tensor).
TEST_CASE("spawn: repeated all_reduces land in the tensors each round passes, world sizes 3 and 7") {
  constexpr int count = 4;
  for (int n : {3, 7}) {
    CAPTURE(n);
    // The oracle: sums over ranks of known inputs, by plain loops.
    auto summed = [&](auto value_of) {
      std::vector<float> total(count, 0.f);
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < count; ++i) total[static_cast<size_t>(i)] += value_of(r, i);
      return total;
    };
    auto input = [](int r, int i) { return static_cast<float>(r * 10 + i) + 0.5f; };
    const std::vector<float> once = summed(input);
    std::vector<float> twice;
    for (float x : once) twice.push_back(x * static_cast<float>(n));
    // Round 3: odd ranks pass a new tensor, even ranks their summed one again.
    const std::vector<float> third = summed([&](int r, int i) {
      return r % 2 == 1 ? static_cast<float>(r * 100 + i) : twice[static_cast<size_t>(i)];
    });

    std::vector<std::vector<float>> after_two(static_cast<size_t>(n)), kept(static_cast<size_t>(n)),
        after_three(static_cast<size_t>(n)), through_view(static_cast<size_t>(n)),
        wider(static_cast<size_t>(n));
    ts::spawn(n, [&](int rank) {
      const auto me = static_cast<size_t>(rank);
      std::vector<float> mine;
      for (int i = 0; i < count; ++i) mine.push_back(input(rank, i));
      ts::Tensor a = tensor_of(mine);
      ts::dist::all_reduce(a);
      ts::dist::all_reduce(a);
      after_two[me] = a.to_vector<float>();
      ts::Tensor passed = a;
      if (rank % 2 == 1) {
        std::vector<float> fresh;
        for (int i = 0; i < count; ++i) fresh.push_back(static_cast<float>(rank * 100 + i));
        passed = tensor_of(fresh);
      }
      ts::dist::all_reduce(passed);
      kept[me] = a.to_vector<float>();
      after_three[me] = passed.to_vector<float>();
      // A view of the passed tensor, after each rank adds its rank: the result lands in the
      // tensor's own bytes.
      passed.copy_(passed + static_cast<float>(rank));
      ts::Tensor view = passed.narrow(0, 0, count);
      ts::dist::all_reduce(view, ts::ReduceOp::MAX);
      through_view[me] = passed.to_vector<float>();
      ts::Tensor longer = ts::full({count + 1}, static_cast<float>(rank + 1));
      ts::dist::all_reduce(longer);
      wider[me] = longer.to_vector<float>();
    });
    for (int r = 0; r < n; ++r) {
      CAPTURE(r);
      const auto me = static_cast<size_t>(r);
      CHECK(after_two[me] == twice);
      CHECK(kept[me] == (r % 2 == 1 ? twice : third));  // an odd rank's old tensor is left as it was
      CHECK(after_three[me] == third);
      std::vector<float> largest;  // the sum plus the largest rank
      for (float x : third) largest.push_back(x + static_cast<float>(n - 1));
      CHECK(through_view[me] == largest);
      CHECK(wider[me] == std::vector<float>(count + 1, static_cast<float>(n * (n + 1)) / 2));
    }
  }
}

TEST_CASE("spawn: reduce, reduce_scatter_tensor, scatter, gather, all_to_all_single and barrier on world 3") {
  constexpr int n = 3;
  std::vector<std::vector<float>> reduced(n), scattered(n), scattered_in(n), gathered(n), exchanged(n);
  ts::spawn(n, [&](int rank) {
    const size_t me = static_cast<size_t>(rank);
    ts::Tensor r = ts::full({2}, static_cast<float>(rank + 1));
    ts::dist::reduce(r, 1);
    reduced[me] = r.to_vector<float>();

    // Input block i of rank r holds r * 100 + i; output i = sum over r.
    ts::Tensor in = tensor_of({rank * 100.f + 0, rank * 100.f + 1, rank * 100.f + 2});
    ts::Tensor out = ts::zeros({1});
    ts::dist::reduce_scatter_tensor(out, in);
    scattered[me] = out.to_vector<float>();

    std::vector<ts::Tensor> pieces;
    if (rank == 2)
      for (int i = 0; i < n; ++i) pieces.push_back(ts::full({2}, static_cast<float>(7 * i)));
    ts::Tensor piece = ts::zeros({2});
    ts::dist::scatter(piece, pieces, 2);
    scattered_in[me] = piece.to_vector<float>();

    std::vector<ts::Tensor> collected;
    if (rank == 0)
      for (int i = 0; i < n; ++i) collected.push_back(ts::zeros({1}));
    ts::dist::gather(collected, ts::full({1}, static_cast<float>(rank * rank)), 0);
    for (const ts::Tensor& c : collected) gathered[me].push_back(c.item<float>());

    // Rank r sends r+1 elements (value r * 10 + peer) to every peer.
    std::vector<float> send;
    std::vector<ts::SymInt> input_splits, output_splits;
    for (int peer = 0; peer < n; ++peer) {
      for (int k = 0; k <= rank; ++k) send.push_back(static_cast<float>(rank * 10 + peer));
      input_splits.emplace_back(rank + 1);
      output_splits.emplace_back(peer + 1);
    }
    ts::Tensor a2a_out = ts::zeros({1 + 2 + 3});
    ts::dist::all_to_all_single(a2a_out, tensor_of(send), output_splits, input_splits);
    exchanged[me] = a2a_out.to_vector<float>();
    ts::dist::barrier();
  });
  CHECK(reduced[1] == std::vector<float>{6.f, 6.f});
  CHECK(reduced[0] == std::vector<float>{1.f, 1.f});  // non-roots keep their input
  for (int i = 0; i < n; ++i) CHECK(scattered[static_cast<size_t>(i)] == std::vector<float>{300.f + 3.f * i});
  for (int i = 0; i < n; ++i)
    CHECK(scattered_in[static_cast<size_t>(i)] == std::vector<float>{7.f * i, 7.f * i});
  CHECK(gathered[0] == std::vector<float>{0.f, 1.f, 4.f});
  for (int me = 0; me < n; ++me) {
    std::vector<float> expected;
    for (int peer = 0; peer < n; ++peer)
      for (int k = 0; k <= peer; ++k) expected.push_back(static_cast<float>(peer * 10 + me));
    CHECK(exchanged[static_cast<size_t>(me)] == expected);
  }
}

TEST_CASE("spawn: a group's fibres meet separately, and ranks outside it skip the call") {
  std::vector<std::vector<float>> got(5);
  ts::spawn(5, [&](int rank) {
    ts::Tensor t = ts::full({1}, static_cast<float>(1 << rank));
    if (rank < 4) ts::dist::all_reduce(t, ts::ReduceOp::SUM, ts::ProcessGroup::from_fibres({{0, 2}, {1, 3}}));
    got[static_cast<size_t>(rank)] = t.to_vector<float>();
  });
  CHECK(got[0] == std::vector<float>{1.f + 4.f});
  CHECK(got[2] == std::vector<float>{1.f + 4.f});
  CHECK(got[1] == std::vector<float>{2.f + 8.f});
  CHECK(got[3] == std::vector<float>{2.f + 8.f});
  CHECK(got[4] == std::vector<float>{16.f});
}

TEST_CASE("spawn: a CommCounter around spawn counts each collective once") {
  ts::CommCounter counter;
  ts::spawn(4, [](int rank) {
    ts::Tensor t = ts::full({3}, static_cast<float>(rank));
    ts::dist::all_reduce(t);
    ts::dist::all_reduce(t);
  });
  int64_t calls = 0;
  for (const auto& e : counter.entries())
    if (e.collective == "all_reduce") calls += e.calls;
  CHECK(calls == 2);
}

TEST_CASE("spawn: the user guide's example (docs/user-guide.md, per-rank programs)") {
  std::vector<std::vector<float>> t_of(4), a_of(4);
  ts::spawn(4, [&](int rank) {
    ts::Tensor t = ts::full({2}, float(rank));
    ts::dist::all_reduce(t);
    if (rank == 0) ts::dist::send(t * 2, 1, /*tag=*/7);
    if (rank == 1) ts::dist::recv(t, 0, 7);
    ts::Tensor a = ts::zeros({2}), b = ts::zeros({2});
    std::vector<ts::dist::Work> works =
        ts::dist::batch_isend_irecv({ts::dist::P2POp(ts::dist::isend, t, (rank + 1) % 4, 0),
                                     ts::dist::P2POp(ts::dist::irecv, a, (rank + 3) % 4, 0)});
    for (ts::dist::Work& w : works) w.wait();
    t_of[static_cast<size_t>(rank)] = t.to_vector<float>();
    a_of[static_cast<size_t>(rank)] = a.to_vector<float>();
  });
  // 0+1+2+3 = 6 everywhere; rank 1 then holds rank 0's 12; each rank receives its left neighbour's t.
  CHECK(t_of == std::vector<std::vector<float>>{{6, 6}, {12, 12}, {6, 6}, {6, 6}});
  CHECK(a_of == std::vector<std::vector<float>>{{6, 6}, {6, 6}, {12, 12}, {6, 6}});
}

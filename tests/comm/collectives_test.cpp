// Collective semantics on local tensors: golden values computed by hand, groups and fibres,
// point-to-point messages and every error a caller can provoke. Algorithm choice: direct (the oracle).
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "comm_plugin_support.hpp"

namespace ts = tessera;
using comm_test::per_rank;

namespace {

// Runs the test body with the direct algorithm, restoring the rules after.
struct DirectAlgorithms {
  DirectAlgorithms() : saved(ts::dist::algorithms()) { ts::dist::set_algorithms("*:direct"); }
  ~DirectAlgorithms() { ts::dist::set_algorithms(saved); }
  std::string saved;
};

}  // namespace

TEST_CASE("golden: all_reduce SUM on world 3") {
  DirectAlgorithms direct;
  ts::Tensor lt = ts::local_tensor({{0, ts::tensor({{1.f, 2.f}, {3.f, 4.f}})},
                                    {1, ts::tensor({{5.f, 6.f}, {7.f, 8.f}})},
                                    {2, ts::tensor({{9.f, 10.f}, {11.f, 12.f}})}});
  ts::dist::all_reduce(lt, ts::ReduceOp::SUM);
  CHECK(ts::equal(lt.reconcile(), ts::tensor({{15.f, 18.f}, {21.f, 24.f}})));
}

TEST_CASE("golden: broadcast from 0 on world 3") {
  DirectAlgorithms direct;
  ts::Tensor lt = ts::local_tensor({{0, ts::tensor({10.f, 20.f, 30.f})},
                                    {1, ts::tensor({40.f, 50.f, 60.f})},
                                    {2, ts::tensor({70.f, 80.f, 90.f})}});
  ts::dist::broadcast(lt, 0);
  CHECK(ts::equal(lt.reconcile(), ts::tensor({10.f, 20.f, 30.f})));
}

TEST_CASE("golden: reduce_scatter_tensor SUM on world 3") {
  DirectAlgorithms direct;
  ts::Tensor in = per_rank(3, [](int r) {
    return ts::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}) * (r + 1);
  });
  ts::Tensor out = per_rank(3, [](int) { return ts::zeros({1, 2}); });
  ts::dist::reduce_scatter_tensor(out, in, ts::ReduceOp::SUM);
  CHECK(ts::equal(out.shard(0), ts::tensor({{6.f, 12.f}})));
  CHECK(ts::equal(out.shard(1), ts::tensor({{18.f, 24.f}})));
  CHECK(ts::equal(out.shard(2), ts::tensor({{30.f, 36.f}})));
}

TEST_CASE("golden: all_to_all_single with splits [2,2,2] on world 3") {
  DirectAlgorithms direct;
  ts::Tensor in = per_rank(3, [](int r) { return ts::full({6}, r); });
  ts::Tensor out = per_rank(3, [](int) { return ts::zeros({6}, ts::kInt64); });
  ts::dist::all_to_all_single(out, in, {2, 2, 2}, {2, 2, 2});
  CHECK(ts::equal(out.reconcile(), ts::tensor({0, 0, 1, 1, 2, 2})));
}

TEST_CASE("all_to_all_single with an even split, into its own input and into a transposed output") {
  DirectAlgorithms direct;
  for (int p : {1, 3, 7}) {
    CAPTURE(p);
    // Rank r's row k (of p, two columns each) holds 100 r + 10 k and that plus one: all distinct.
    const auto value = [](int r, int k, int c) { return float(100 * r + 10 * k + c); };
    const auto rows = [&](int r) {
      std::vector<float> v;
      for (int k = 0; k < p; ++k)
        for (int c = 0; c < 2; ++c) v.push_back(value(r, k, c));
      return ts::from_values(v, {p, 2}, ts::kFloat32);
    };
    // Rank j's row i is rank i's row j, by the definition of all_to_all.
    const auto expected = [&](int j) {
      std::vector<float> v;
      for (int i = 0; i < p; ++i)
        for (int c = 0; c < 2; ++c) v.push_back(value(i, j, c));
      return ts::from_values(v, {p, 2}, ts::kFloat32);
    };
    ts::Tensor t = per_rank(p, rows);
    ts::dist::all_to_all_single(t, t);
    for (int j = 0; j < p; ++j) CHECK(ts::equal(t.shard(j), expected(j)));
    // An output that is not contiguous: the transpose of a (2, p) tensor.
    ts::Tensor in = per_rank(p, rows);
    ts::Tensor out = per_rank(p, [&](int) { return ts::zeros({2, p}).t(); });
    ts::dist::all_to_all_single(out, in);
    for (int j = 0; j < p; ++j) CHECK(ts::equal(out.shard(j), expected(j)));
  }
}

TEST_CASE("all_gather, all_gather_into_tensor, reduce, scatter, gather, all_to_all") {
  DirectAlgorithms direct;
  ts::Tensor t = per_rank(3, [](int r) { return ts::tensor({{float(r), float(10 * r)}}); });
  std::vector<ts::Tensor> gathered;
  for (int i = 0; i < 3; ++i) gathered.push_back(ts::zeros_like(t));
  ts::dist::all_gather(gathered, t);
  for (int i = 0; i < 3; ++i) CHECK(ts::equal(gathered[i].reconcile(), t.shard(i)));

  ts::Tensor stacked = per_rank(3, [](int) { return ts::zeros({3, 2}); });
  ts::dist::all_gather_into_tensor(stacked, t);
  CHECK(ts::equal(stacked.reconcile(), ts::tensor({{0.f, 0.f}, {1.f, 10.f}, {2.f, 20.f}})));

  ts::Tensor r = t.clone();
  ts::dist::reduce(r, 1, ts::ReduceOp::MAX);
  CHECK(ts::equal(r.shard(1), ts::tensor({{2.f, 20.f}})));
  CHECK(ts::equal(r.shard(0), t.shard(0)));  // others unchanged
  CHECK(ts::equal(r.shard(2), t.shard(2)));

  std::vector<ts::Tensor> pieces;
  for (int i = 0; i < 3; ++i)
    pieces.push_back(per_rank(3, [&](int rank) { return ts::full({2}, float(100 * rank + i)); }));
  ts::Tensor received = per_rank(3, [](int) { return ts::zeros({2}); });
  ts::dist::scatter(received, pieces, 2);
  for (int i = 0; i < 3; ++i) CHECK(ts::equal(received.shard(i), ts::full({2}, float(200 + i))));

  std::vector<ts::Tensor> collected;
  for (int i = 0; i < 3; ++i) collected.push_back(per_rank(3, [](int) { return ts::full({1, 2}, -1.f); }));
  ts::dist::gather(collected, t, 0);
  for (int i = 0; i < 3; ++i) {
    CHECK(ts::equal(collected[i].shard(0), t.shard(i)));
    CHECK(ts::equal(collected[i].shard(1), ts::full({1, 2}, -1.f)));  // only the root receives
  }

  std::vector<ts::Tensor> outs;
  for (int i = 0; i < 3; ++i) outs.push_back(per_rank(3, [](int) { return ts::zeros({2}); }));
  ts::dist::all_to_all(outs, pieces);
  // member j's out[i] = member i's in[j]
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) CHECK(ts::equal(outs[i].shard(j), ts::full({2}, float(100 * i + j))));

  std::vector<ts::Tensor> scatter_in;
  for (int i = 0; i < 3; ++i)
    scatter_in.push_back(per_rank(3, [&](int rank) { return ts::full({2}, float(rank + i)); }));
  ts::Tensor summed = per_rank(3, [](int) { return ts::zeros({2}); });
  ts::dist::reduce_scatter(summed, scatter_in, ts::ReduceOp::SUM);
  for (int i = 0; i < 3; ++i) CHECK(ts::equal(summed.shard(i), ts::full({2}, float(0 + 1 + 2 + 3 * i))));
}

TEST_CASE(
    "output lists take their blocks whatever their layout: dense, a view inside a larger tensor, strided") {
  DirectAlgorithms direct;
  constexpr int kWorld = 7;
  // Rank r's input: [2, 3] holding 100r + 3i + j at (i, j), distinct on every rank and element.
  const ts::Tensor t = per_rank(kWorld, [](int r) {
    return ts::arange(6, ts::TensorOptions(ts::kFloat32)).reshape({2, 3}) + 100.f * float(r);
  });
  const auto expected = [](int from) {
    const float b = 100.f * float(from);
    return ts::tensor({{b, b + 1, b + 2}, {b + 3, b + 4, b + 5}});
  };
  for (const bool gather_only : {false, true}) {
    CAPTURE(gather_only);
    // Output i: a dense tensor (i % 3 == 0), rows 1..2 of a [4, 3] tensor (i % 3 == 1; rows 0 and 3
    // keep -1), or the transpose of a [3, 2] tensor (i % 3 == 2: strided).
    std::vector<ts::Tensor> bases, outputs;
    for (int i = 0; i < kWorld; ++i) {
      if (i % 3 == 0) {
        bases.push_back(per_rank(kWorld, [](int) { return ts::zeros({2, 3}); }));
        outputs.push_back(bases.back());
      } else if (i % 3 == 1) {
        bases.push_back(per_rank(kWorld, [](int) { return ts::full({4, 3}, -1.f); }));
        outputs.push_back(bases.back().narrow(0, 1, 2));
      } else {
        bases.push_back(per_rank(kWorld, [](int) { return ts::zeros({3, 2}); }));
        outputs.push_back(bases.back().transpose(0, 1));
      }
    }
    if (gather_only)
      ts::dist::gather(outputs, t, 4);
    else
      ts::dist::all_gather(outputs, t);
    for (int i = 0; i < kWorld; ++i)
      for (int r = 0; r < kWorld; ++r) {
        CAPTURE(i);
        CAPTURE(r);
        const bool receives = !gather_only || r == 4;
        const ts::Tensor base = bases[static_cast<size_t>(i)].shard(r);
        if (i % 3 == 1) {
          CHECK(ts::equal(base.narrow(0, 0, 1), ts::full({1, 3}, -1.f)));
          CHECK(ts::equal(base.narrow(0, 3, 1), ts::full({1, 3}, -1.f)));
        }
        const ts::Tensor block = i % 3 == 0 ? base : i % 3 == 1 ? base.narrow(0, 1, 2) : base.transpose(0, 1);
        const ts::Tensor untouched = i % 3 == 1 ? ts::full({2, 3}, -1.f) : ts::zeros({2, 3});
        CHECK(ts::equal(block, receives ? expected(i) : untouched));
      }
  }
}

TEST_CASE("reduce ops: AVG, PRODUCT, MIN, BAND, BOR, BXOR, PREMUL_SUM") {
  DirectAlgorithms direct;
  auto run = [](ts::Tensor t, ts::ReduceOp op) {
    ts::dist::all_reduce(t, op);
    return t.reconcile();
  };
  ts::Tensor f = per_rank(4, [](int r) { return ts::tensor({float(r + 1), float(-r)}); });
  CHECK(ts::equal(run(f.clone(), ts::ReduceOp::AVG), ts::tensor({2.5f, -1.5f})));
  CHECK(ts::equal(run(f.clone(), ts::ReduceOp::PRODUCT), ts::tensor({24.f, 0.f})));
  CHECK(ts::equal(run(f.clone(), ts::ReduceOp::MIN), ts::tensor({1.f, -3.f})));
  CHECK(ts::equal(run(f.clone(), ts::ReduceOp::premul_sum(0.5)), ts::tensor({5.f, -3.f})));
  ts::Tensor i = per_rank(3, [](int r) {
    return ts::tensor({int64_t{6} >> r, int64_t{1} << r});
  });  // 6,3,1 / 1,2,4
  CHECK(ts::equal(run(i.clone(), ts::ReduceOp::BAND), ts::tensor({int64_t{6 & 3 & 1}, int64_t{0}})));
  CHECK(ts::equal(run(i.clone(), ts::ReduceOp::BOR), ts::tensor({int64_t{7}, int64_t{7}})));
  CHECK(ts::equal(run(i.clone(), ts::ReduceOp::BXOR), ts::tensor({int64_t{6 ^ 3 ^ 1}, int64_t{7}})));
  CHECK_THROWS_WITH_AS(run(f.clone(), ts::ReduceOp::BXOR),
                       doctest::Contains("BXOR needs an integer or bool tensor, got float32"), ts::Error);
  CHECK_THROWS_WITH_AS(run(i.clone(), ts::ReduceOp::AVG),
                       doctest::Contains("AVG needs a floating tensor, got int64"), ts::Error);
}

TEST_CASE("world size 1 and 7") {
  DirectAlgorithms direct;
  ts::Tensor one = per_rank(1, [](int) { return ts::tensor({3.f}); });
  ts::dist::all_reduce(one);
  CHECK(ts::equal(one.shard(0), ts::tensor({3.f})));
  ts::Tensor seven = per_rank(7, [](int r) { return ts::full({5}, float(r)); });
  ts::dist::all_reduce(seven);
  CHECK(ts::equal(seven.reconcile(), ts::full({5}, 21.f)));
}

TEST_CASE("sub-groups: fibres of a 2-d mesh layout run together") {
  DirectAlgorithms direct;
  ts::Tensor t = per_rank(8, [](int r) { return ts::tensor({float(r)}); });
  ts::ProcessGroup dp = ts::ProcessGroup::from_fibres({{0, 2, 4, 6}, {1, 3, 5, 7}});
  ts::dist::all_reduce(t, ts::ReduceOp::SUM, dp);
  for (int r = 0; r < 8; ++r) CHECK(t.shard(r).item<float>() == (r % 2 == 0 ? 12.f : 16.f));
  // A single fibre: the other ranks are not members and keep their values.
  ts::Tensor u = per_rank(8, [](int r) { return ts::tensor({float(r)}); });
  ts::dist::broadcast(u, 1, ts::ProcessGroup({0, 2, 4, 6}));  // group rank 1 = global rank 2
  for (int r = 0; r < 8; ++r) CHECK(u.shard(r).item<float>() == (r % 2 == 0 ? 2.f : float(r)));
}

TEST_CASE("a group only partly covered by the tensor is an error") {
  ts::Tensor t = per_rank(3, [](int) { return ts::ones({1}); });
  CHECK_THROWS_WITH_AS(ts::dist::all_reduce(t, ts::ReduceOp::SUM, ts::ProcessGroup({1, 2, 3})),
                       doctest::Contains("also needs ranks {3}"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::dist::all_reduce(t, ts::ReduceOp::SUM, ts::ProcessGroup({5, 6})),
                       doctest::Contains("cover no fibre"), ts::Error);
}

TEST_CASE("all_to_all_single on a group the tensor does not cover is an error like every collective's") {
  // Was: it did nothing and returned, leaving `out` as it was.
  ts::Tensor in = per_rank(3, [](int r) { return ts::full({3}, float(r)); });
  ts::Tensor out = per_rank(3, [](int) { return ts::zeros({3}); });
  CHECK_THROWS_WITH_AS(
      ts::dist::all_to_all_single(out, in, {}, {}, ts::ProcessGroup({5, 6})),
      doctest::Contains("all_to_all_single: the tensor's ranks {0, 1, 2} cover no fibre of group"),
      ts::Error);
  CHECK_THROWS_WITH_AS(
      ts::dist::all_to_all_single(out, in, {}, {}, ts::ProcessGroup({1, 2, 3})),
      doctest::Contains("all_to_all_single: the tensor has ranks {0, 1, 2} but group fibre {1,2,3} "
                        "also needs ranks {3}"),
      ts::Error);
}

TEST_CASE("all_to_all_single with uneven splits, local-int splits, and the mismatch error") {
  DirectAlgorithms direct;
  // rank r sends r + 1 rows to each rank; rank j expects (i + 1) rows from each rank i.
  ts::Tensor in = per_rank(3, [](int r) { return ts::full({3 * (r + 1), 2}, float(r)); });
  ts::Tensor out = per_rank(3, [](int) { return ts::zeros({6, 2}); });
  ts::SymInt send = ts::LocalInt({{0, 1}, {1, 2}, {2, 3}});
  ts::dist::all_to_all_single(out, in, {1, 2, 3}, {send, send, send});
  CHECK(ts::equal(out.reconcile(),
                  ts::tensor({{0.f, 0.f}, {1.f, 1.f}, {1.f, 1.f}, {2.f, 2.f}, {2.f, 2.f}, {2.f, 2.f}})));
  // Empty blocks too.
  ts::Tensor in0 = per_rank(2, [](int r) { return ts::full({r == 0 ? 0 : 2}, 5.f); });
  ts::Tensor out0 = per_rank(2, [](int) { return ts::zeros({1}); });
  const ts::SymInt from_rank1 = ts::LocalInt({{0, 0}, {1, 1}});
  ts::dist::all_to_all_single(out0, in0, {ts::SymInt(0), ts::SymInt(1)}, {from_rank1, from_rank1});
  CHECK(out0.shard(0).item<float>() == 5.f);
  CHECK(out0.shard(1).item<float>() == 5.f);
  ts::Tensor bad_out = per_rank(3, [](int) { return ts::zeros({6, 2}); });
  CHECK_THROWS_WITH_AS(
      ts::dist::all_to_all_single(bad_out, in, {2, 2, 2}, {send, send, send}),
      doctest::Contains("rank 0 sends 1 rows to rank 0, but rank 0 expects 2 rows from rank 0"), ts::Error);
}

TEST_CASE("collective argument errors") {
  DirectAlgorithms direct;
  ts::Tensor plain = ts::ones({2});
  CHECK_THROWS_WITH_AS(ts::dist::all_reduce(plain), doctest::Contains("must be a local tensor"), ts::Error);
  ts::Tensor uneven = ts::local_tensor({{0, ts::ones({2})}, {1, ts::ones({3})}});
  CHECK_THROWS_WITH_AS(ts::dist::all_reduce(uneven),
                       doctest::Contains("has shape [2] on rank 0 but [3] on rank 1"), ts::Error);
  ts::Tensor t = per_rank(2, [](int) { return ts::ones({2}); });
  CHECK_THROWS_WITH_AS(ts::dist::broadcast(t, 2),
                       doctest::Contains("root 2 is not a group rank; expected 0..1"), ts::Error);
  std::vector<ts::Tensor> too_few = {ts::zeros_like(t)};
  CHECK_THROWS_WITH_AS(ts::dist::all_gather(too_few, t),
                       doctest::Contains("has 1 tensors, expected one per group rank (2)"), ts::Error);
}

TEST_CASE("collectives inside run_per_rank are an error") {
  ts::Tensor t = per_rank(2, [](int) { return ts::ones({2}); });
  ts::LocalMode mode(2);
  CHECK_THROWS_WITH_AS(ts::run_per_rank(
                           [&](int64_t) {
                             ts::dist::all_reduce(t);
                             return int64_t{0};
                           },
                           ts::current_rank()),
                       doctest::Contains("cannot be issued inside run_per_rank"), ts::Error);
}

TEST_CASE("send and recv pair up, unmatched ones are errors, never hangs") {
  // A pipeline of 3 stages: stage r sends to r + 1.
  ts::Tensor x = per_rank(3, [](int r) { return ts::full({2}, float(r + 1)); });
  ts::Tensor y = per_rank(3, [](int) { return ts::zeros({2}); });
  ts::dist::send(x, ts::LocalInt({{0, 1}, {1, 2}, {2, -1}}));
  ts::dist::recv(y, ts::LocalInt({{0, -1}, {1, 0}, {2, 1}}));
  CHECK(ts::equal(y.shard(0), ts::zeros({2})));
  CHECK(ts::equal(y.shard(1), ts::full({2}, 1.f)));
  CHECK(ts::equal(y.shard(2), ts::full({2}, 2.f)));
  CHECK_NOTHROW(ts::dist::check_messages());

  CHECK_THROWS_WITH_AS(ts::dist::recv(y, ts::LocalInt({{0, 2}, {1, -1}, {2, -1}})),
                       doctest::Contains("recv on rank 0 from rank 2: no matching send"), ts::Error);
  ts::dist::send(x, ts::LocalInt({{0, 1}, {1, -1}, {2, -1}}));
  CHECK_THROWS_WITH_AS(ts::dist::all_reduce(x),
                       doctest::Contains("1 message(s) from rank 0 to rank 1 never received"), ts::Error);
  CHECK_NOTHROW(ts::dist::check_messages());  // the error dropped them
  ts::dist::send(x, ts::LocalInt({{0, 1}, {1, -1}, {2, -1}}));
  ts::Tensor wrong = per_rank(3, [](int) { return ts::zeros({5}); });
  CHECK_THROWS_WITH_AS(ts::dist::recv(wrong, ts::LocalInt({{0, -1}, {1, 0}, {2, -1}})),
                       doctest::Contains("the message has shape [2] but the receiving tensor has [5]"),
                       ts::Error);
  // A float32 message is not converted into a float64 tensor: the dtypes must agree.
  ts::dist::send(x, ts::LocalInt({{0, 1}, {1, -1}, {2, -1}}));
  ts::Tensor doubles = per_rank(3, [](int) { return ts::zeros({2}, ts::kFloat64); });
  CHECK_THROWS_WITH_AS(
      ts::dist::recv(doubles, ts::LocalInt({{0, -1}, {1, 0}, {2, -1}})),
      doctest::Contains("recv on rank 1 from rank 0: the message holds float32 but the receiving "
                        "tensor is float64"),
      ts::Error);
}

TEST_CASE("barrier completes for any group size") {
  for (int n : {1, 2, 5}) {
    ts::Tensor t = per_rank(n, [](int) { return ts::zeros({1}); });
    CHECK_NOTHROW(ts::dist::barrier(t));
  }
}

TEST_CASE("scatter over several fibres: roots holding one buffer share the results, distinct roots do not") {
  ts::LocalMode mode(6);
  const ts::ProcessGroup rows = ts::ProcessGroup::from_fibres({{0, 1, 2}, {3, 4, 5}});
  // Factories in local mode give every rank one shared buffer: roots 0 and 3 scatter the same bytes.
  std::vector<ts::Tensor> same;
  for (int i = 0; i < 3; ++i) same.push_back(ts::full({2}, float(100 + i)));
  ts::Tensor received = ts::zeros({2});
  ts::dist::scatter(received, same, 0, rows);
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(ts::equal(received.shard(i), ts::full({2}, float(100 + i))));
    CHECK(ts::equal(received.shard(3 + i), ts::full({2}, float(100 + i))));
    CHECK(received.shard(3 + i).current_address() == received.shard(i).current_address());
  }
  // Each rank's result is its own to write.
  ts::Tensor four = received.shard(4);
  four.fill_(-1.0);
  CHECK(ts::equal(received.shard(1), ts::full({2}, 101.f)));

  // Roots with their own values (the second piece differs between them): each fibre its root's.
  std::vector<ts::Tensor> distinct = same;
  distinct[1] = per_rank(6, [](int rank) {
    ts::DisabledLocalMode plain;
    return ts::full({2}, float(1000 * rank + 1));
  });
  ts::Tensor got = ts::zeros({2});
  ts::dist::scatter(got, distinct, 0, rows);
  CHECK(ts::equal(got.shard(1), ts::full({2}, 1.f)));
  CHECK(ts::equal(got.shard(4), ts::full({2}, 3001.f)));
  CHECK(ts::equal(got.shard(3), ts::full({2}, 100.f)));
  CHECK(ts::equal(got.shard(5), ts::full({2}, 102.f)));
}

#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {
// A local tensor over ranks 0..n-1 whose shard r is f(r).
template <class F>
ts::Tensor make_local(int n, F&& f) {
  std::vector<std::pair<int, ts::Tensor>> shards;
  for (int r = 0; r < n; ++r) shards.emplace_back(r, f(r));
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(shards)));
}
}  // namespace

TEST_CASE("construction, ranks, shards and uniform shape") {
  ts::Tensor s0 = ts::tensor({{1.f, 2.f}, {3.f, 4.f}});
  ts::Tensor s1 = ts::tensor({{5.f, 6.f}, {7.f, 8.f}});
  ts::Tensor lt = ts::local_tensor({{0, s0}, {1, s1}});
  CHECK(lt.is_local());
  CHECK(lt.ranks() == ts::RankSet{0, 1});
  CHECK(ts::equal(lt.shard(1), s1));
  CHECK(lt.shape() == ts::Shape{2, 2});
  CHECK_FALSE(lt.shape()[0].is_local());
  CHECK(lt.sizes() == ts::Shape{2, 2});
  CHECK(lt.dtype() == ts::kFloat32);
  CHECK(lt.numel() == 4);
  CHECK_THROWS_WITH_AS(lt.shard(2), doctest::Contains("local tensor has no shard for rank 2"), ts::Error);
  CHECK_THROWS_WITH_AS(s0.ranks(), doctest::Contains("not a local tensor"), ts::Error);
}

TEST_CASE("construction errors are checked in order") {
  CHECK_THROWS_WITH_AS(ts::local_tensor(ts::RankMap<ts::Tensor>{}),
                       doctest::Contains("local tensor cannot be empty"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::local_tensor({{0, ts::zeros({2})}, {1, ts::zeros({2}, ts::kFloat64)}}),
                       doctest::Contains("rank 0 is float32 but rank 1 is float64"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::local_tensor({{0, ts::zeros({2})}, {3, ts::Tensor()}}),
                       doctest::Contains("rank 3 is undefined"), ts::Error);
  ts::Tensor grad = ts::zeros({2});
  grad.set_requires_grad(true);
  CHECK_THROWS_WITH_AS(ts::local_tensor({{0, ts::zeros({2})}, {1, grad}}),
                       doctest::Contains("rank 1 requires grad"), ts::Error);
  ts::Tensor lt = ts::local_tensor({{0, ts::zeros({2})}});
  CHECK_THROWS_WITH_AS(ts::local_tensor({{0, lt}}), doctest::Contains("itself a local tensor"), ts::Error);
}

TEST_CASE("uneven shards give a local-int dimension") {
  ts::Tensor lt = ts::local_tensor({{0, ts::zeros({1, 4})}, {1, ts::zeros({2, 4})}, {2, ts::zeros({1, 4})}});
  ts::SymInt rows = lt.shape()[0];
  CHECK(rows.is_local());
  CHECK(rows.values() == std::map<int, int64_t>{{0, 1}, {1, 2}, {2, 1}});
  CHECK_FALSE(lt.shape()[1].is_local());
  CHECK(lt.shape()[1] == 4);
  CHECK_THROWS_WITH_AS(lt.sizes(), doctest::Contains("differ per rank"), ts::Error);
  // Ops keep working per rank and the result keeps the per-rank sizes.
  ts::Tensor doubled = lt * 2 + 1;
  CHECK(doubled.shape()[0] == rows);
  CHECK(ts::sum(doubled, {0}).shape() == ts::Shape{4});
  // A local int can size a new tensor.
  ts::Tensor made = ts::ones({rows, ts::SymInt(3)});
  CHECK(made.is_local());
  CHECK(made.shard(1).sizes() == ts::Shape{2, 3});
}

TEST_CASE("element-wise ops run per rank and mix with plain tensors and scalars") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    ts::Tensor lt = make_local(world, [](int r) {
      return ts::arange(6).to(ts::kFloat32).reshape({2, 3}) * (r + 1);
    });
    ts::Tensor plain = ts::tensor({10.f, 20.f, 30.f});
    ts::Tensor result = ts::relu(lt * 2 - plain) / 4;
    REQUIRE(result.is_local());
    CHECK(result.ranks() == ts::RankSet::range(world));
    for (int r = 0; r < world; ++r) {
      // Independently: the same arithmetic on the dense shard.
      ts::Tensor expected = ts::relu(lt.shard(r) * 2 - plain) / 4;
      CHECK(ts::equal(result.shard(r), expected));
    }
    // Plain op plain stays plain, even with local tensors around.
    CHECK_FALSE((plain + plain).is_local());
  }
}

TEST_CASE("a local int as a scalar operand contributes its per-rank value") {
  ts::Tensor lt = make_local(3, [](int) { return ts::ones({2}); });
  ts::SymInt k = ts::LocalInt({{0, 1}, {1, 2}, {2, 3}});
  ts::Tensor scaled = lt * k;
  for (int r = 0; r < 3; ++r)
    CHECK(scaled.shard(r).to_vector<float>() == std::vector<float>{float(r + 1), float(r + 1)});
  ts::Tensor narrowed = make_local(3, [](int) { return ts::arange(5); }).narrow(0, 0, k);
  CHECK(narrowed.shape()[0] == k);
}

TEST_CASE("reductions, matmul, views and joins per rank") {
  ts::Generator g(11);
  ts::Tensor lt = make_local(3, [&](int) { return ts::randn({4, 5}, g); });
  ts::Tensor w = ts::randn({5, 2}, g);
  ts::Tensor y = ts::softmax(ts::matmul(lt.t().t(), w), 1).sum({0});
  for (int r = 0; r < 3; ++r)
    CHECK(ts::allclose(y.shard(r), ts::softmax(ts::matmul(lt.shard(r), w), 1).sum({0})));
  std::vector<ts::Tensor> parts = ts::chunk(lt, 2);
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].is_local());
  CHECK(ts::equal(ts::cat(parts), lt));
  CHECK(ts::equal(ts::stack({lt, lt}).select(0, 1), lt));
  CHECK(ts::equal(ts::argmax(lt, 1).shard(2), ts::argmax(lt.shard(2), 1)));
  CHECK(ts::equal(lt.flatten(),
                  ts::local_tensor(
                      {{0, lt.shard(0).flatten()}, {1, lt.shard(1).flatten()}, {2, lt.shard(2).flatten()}})));
}

TEST_CASE("rank sets of arguments must match") {
  ts::Tensor a = ts::local_tensor({{0, ts::ones({2})}, {1, ts::ones({2})}});
  ts::Tensor b = ts::local_tensor({{0, ts::ones({2})}, {2, ts::ones({2})}});
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("local over different ranks: {0, 1} and {0, 2}"), ts::Error);
}

TEST_CASE("a failure on one rank names the op and the rank") {
  ts::Tensor lt = ts::local_tensor({{0, ts::ones({2, 3})}, {1, ts::ones({3, 3})}});
  CHECK_THROWS_WITH_AS(ts::matmul(lt, ts::ones({2, 2})),
                       doctest::Contains("matmul on rank 0: matmul: inner dimensions"), ts::Error);
}

TEST_CASE(
    "an op on replicated shards runs once, on the first rank: one shared result, failures name that rank") {
  ts::LocalMode mode(ts::RankSet({2, 5, 7}));
  const ts::Tensor lt = ts::ones({2, 3});  // one draw for every rank: replicas of one buffer
  REQUIRE(lt.shard(2).current_address() == lt.shard(7).current_address());
  const ts::Tensor sum = lt + 1.0;
  for (int r : {2, 5, 7}) {
    CHECK(sum.shard(r).to_vector<float>() == std::vector<float>(6, 2.f));
    CHECK(sum.shard(r).current_address() == sum.shard(2).current_address());
  }
  CHECK(sum.shard(2).current_address() != lt.shard(2).current_address());
  const ts::Tensor wrong = ts::ones({4});
  CHECK_THROWS_WITH_AS(lt + wrong, doctest::Contains("add on rank 2: "), ts::Error);
}

TEST_CASE("reconcile returns one tensor or says where shards differ") {
  ts::Tensor v = ts::tensor({1.f, 2.f, 3.f});
  ts::Tensor same = ts::local_tensor({{0, v.clone()}, {1, v.clone()}, {2, v.clone()}});
  ts::Tensor r = same.reconcile();
  CHECK_FALSE(r.is_local());
  CHECK(ts::equal(r, v));
  ts::Tensor differ = ts::local_tensor({{0, v.clone()}, {1, v.clone()}, {2, ts::tensor({1.f, 2.f, 9.f})}});
  CHECK_THROWS_WITH_AS(differ.reconcile(),
                       doctest::Contains("rank 2 differs from rank 0 first at index [2]: 9 vs 3"), ts::Error);
  ts::Tensor shapes = ts::local_tensor({{0, ts::zeros({2})}, {1, ts::zeros({3})}});
  CHECK_THROWS_WITH_AS(shapes.reconcile(), doctest::Contains("rank 1 has shape [3] but rank 0 has shape [2]"),
                       ts::Error);
  // Bitwise: -0.0 and 0.0 are different shards.
  ts::Tensor zeros = ts::local_tensor({{0, ts::tensor({0.f})}, {1, ts::tensor({-0.f})}});
  CHECK_THROWS_AS(zeros.reconcile(), ts::Error);
}

TEST_CASE("item: equal -> plain, differing integers -> per rank, differing floats -> error") {
  ts::Tensor ints = ts::local_tensor({{0, ts::tensor({4})}, {1, ts::tensor({5})}});
  ts::Scalar s = ts::sum(ints).item();
  CHECK(s.is_local());
  CHECK(s.local().values() == std::map<int, int64_t>{{0, 4}, {1, 5}});
  ts::Tensor same = ts::local_tensor({{0, ts::tensor({2.5f})}, {1, ts::tensor({2.5f})}});
  CHECK(same.item<float>() == 2.5f);
  ts::Tensor floats = ts::local_tensor({{0, ts::tensor({1.5f})}, {1, ts::tensor({2.5f})}});
  CHECK_THROWS_WITH_AS(floats.item(), doctest::Contains("differs between ranks (0: 1.5, 1: 2.5)"), ts::Error);
  CHECK(same.to_vector<float>() == std::vector<float>{2.5f});
  CHECK_THROWS_AS(floats.to_vector<float>(), ts::Error);
}

TEST_CASE("equal and allclose are true only when true on every rank") {
  ts::Tensor a = ts::local_tensor({{0, ts::ones({2})}, {1, ts::ones({2})}});
  ts::Tensor b = ts::local_tensor({{0, ts::ones({2})}, {1, ts::zeros({2})}});
  CHECK(ts::equal(a, a));
  CHECK_FALSE(ts::equal(a, b));
  CHECK(ts::allclose(a, ts::ones({2})));
  CHECK_FALSE(ts::allclose(b, ts::ones({2})));
}

TEST_CASE("empty shards") {
  ts::Tensor lt = ts::local_tensor({{0, ts::zeros({0, 3})}, {1, ts::ones({2, 3})}, {2, ts::zeros({0, 3})}});
  ts::Tensor s = ts::sum(lt + 1, {0});
  CHECK(ts::equal(s.shard(0), ts::zeros({3})));
  CHECK(ts::equal(s.shard(1), ts::full({3}, 4.f)));
  CHECK(lt.shape()[0].values() == std::map<int, int64_t>{{0, 0}, {1, 2}, {2, 0}});
}

TEST_CASE("in-place writes go to every shard") {
  ts::Tensor lt = ts::local_tensor({{0, ts::zeros({2})}, {1, ts::zeros({2})}});
  lt.fill_(ts::SymInt(ts::LocalInt({{0, 3}, {1, 4}})));
  CHECK(lt.shard(1).to_vector<float>() == std::vector<float>{4, 4});
  lt.narrow(0, 0, 1).copy_(ts::tensor({9.f}));
  CHECK(lt.shard(0).to_vector<float>() == std::vector<float>{9, 3});
  ts::Tensor plain = ts::zeros({2});
  CHECK_THROWS_WITH_AS(plain.copy_(lt), doctest::Contains("cannot copy a local tensor into a plain tensor"),
                       ts::Error);
}

TEST_CASE("printing shows every rank in order") {
  ts::Tensor lt = ts::local_tensor({{1, ts::tensor({3.f, 4.f})}, {0, ts::tensor({1.f, 2.f})}});
  CHECK(lt.to_string() == "LocalTensor(\n  0: tensor([1., 2.])\n  1: tensor([3., 4.]))");
}

TEST_CASE("size(d) of a local tensor is the common size of dim d even when another dim differs per rank") {
  const ts::Tensor t = ts::local_tensor({{0, ts::zeros({3, 4})}, {1, ts::zeros({5, 4})}});
  CHECK(t.size(1) == 4);
  CHECK(t.size(-1) == 4);
  CHECK_THROWS_WITH_AS(t.size(0), doctest::Contains("{0: 3, 1: 5}"), ts::Error);
}

TEST_CASE("rank maps with gaps or built out of order find every rank and only those") {
  // Dense maps find rank r at position r; these are not dense, so every lookup must search.
  const ts::RankMap<int64_t> gaps({{1, 10}, {3, 30}, {5, 50}});
  CHECK(gaps.at(1) == 10);
  CHECK(gaps.at(3) == 30);
  CHECK(gaps.at(5) == 50);
  for (int missing : {0, 2, 4, 6, -1}) {
    CAPTURE(missing);
    CHECK_FALSE(gaps.contains(missing));
  }
  // Position 1 holds rank 2 here: rank 1 is absent, not found by position.
  const ts::RankMap<int64_t> shifted({{2, 20}, {0, 0}, {7, 70}});
  CHECK(shifted.entries().front().first == 0);
  CHECK_FALSE(shifted.contains(1));
  CHECK(shifted.at(2) == 20);
  CHECK(shifted.at(7) == 70);
  CHECK_THROWS_WITH_AS(shifted.at(1), doctest::Contains("no value for rank 1"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::RankMap<int64_t>({{2, 1}, {0, 2}, {2, 3}}),
                       doctest::Contains("rank 2 appears twice"), ts::Error);
  const ts::RankSet set({5, 1, 3});
  CHECK(set.ranks() == std::vector<int>{1, 3, 5});
  // A local tensor of ranks given out of order holds each shard under its own rank.
  const ts::Tensor lt = ts::local_tensor({{4, ts::full({1}, 4.f)}, {2, ts::full({1}, 2.f)}});
  CHECK(lt.shard(2).item<float>() == 2.f);
  CHECK(lt.shard(4).item<float>() == 4.f);
  CHECK_THROWS_WITH_AS(lt.shard(0), doctest::Contains("no shard for rank 0"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::local_tensor({{0, ts::zeros({2})}, {1, ts::zeros({2, 1})}}),
                       doctest::Contains("rank 0 has 1 but rank 1 has 2"), ts::Error);
}

// Gradient checks (float64, finite differences) of the indexing ops, the losses, attention and
// dropout (with a fixed generator, so every evaluation draws the same mask).
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::local_rand;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

TEST_CASE("gather, scatter_add and index_select, repeated indices included") {
  const ts::Tensor idx = ts::tensor({{2L, 0L, 2L}, {1L, 1L, 0L}});
  gradcheck("gather dim 0", {rand_in({3, 3}, 300)}, [idx](const T& x) { return ts::gather(x[0], 0, idx); });
  gradcheck("gather dim 1", {rand_in({2, 4}, 301)}, [idx](const T& x) { return ts::gather(x[0], 1, idx); });
  gradcheck("scatter_add x and src", {rand_in({3, 3}, 302), rand_in({2, 3}, 303)},
            [idx](const T& x) { return ts::scatter_add(x[0], 0, idx, x[1]); });
  gradcheck("scatter_add src larger than index", {rand_in({3, 4}, 304), rand_in({3, 5}, 305)},
            [idx](const T& x) { return ts::scatter_add(x[0], 1, idx, x[1]); });
  gradcheck("index_select", {rand_in({4, 3}, 306)}, [](const T& x) {
    return ts::index_select(x[0], 0, ts::tensor({3L, 1L, 3L}));
  });
  gradcheck("index_select of a transposed input", {rand_in({4, 3}, 307)}, [](const T& x) {
    return ts::index_select(x[0].t(), 1, ts::tensor({0L, 0L, 2L}));
  });
}

TEST_CASE("embedding's weight gradient") {
  gradcheck("embedding", {rand_in({5, 3}, 310)}, [](const T& x) {
    return ts::embedding(ts::tensor({{4L, 0L}, {4L, 2L}}), x[0]);
  });
}

TEST_CASE("losses: cross_entropy (smoothing, ignore_index, (N, C, d)), nll_loss, mse_loss") {
  const ts::Tensor target = ts::tensor({1L, -100L, 3L, 0L});
  for (const char* reduction : {"mean", "sum", "none"}) {
    gradcheck(std::string("cross_entropy ") + reduction, {rand_in({4, 5}, 320)},
              [&](const T& x) { return ts::cross_entropy(x[0], target, {.reduction = reduction}); });
    gradcheck(std::string("cross_entropy smoothed ") + reduction, {rand_in({4, 5}, 321)}, [&](const T& x) {
      return ts::cross_entropy(x[0], target, {.reduction = reduction, .label_smoothing = 0.3});
    });
    gradcheck(std::string("nll_loss ") + reduction, {rand_in({4, 5}, 322)},
              [&](const T& x) { return ts::nll_loss(x[0], target, {.reduction = reduction}); });
    gradcheck(std::string("mse_loss ") + reduction, {rand_in({2, 3}, 323), rand_in({2, 3}, 324)},
              [&](const T& x) { return ts::mse_loss(x[0], x[1], reduction); });
  }
  gradcheck("cross_entropy (N, C, d)", {rand_in({2, 3, 2}, 325)}, [](const T& x) {
    return ts::cross_entropy(x[0], ts::tensor({{0L, 2L}, {1L, -100L}}), {.label_smoothing = 0.1});
  });
}

TEST_CASE("scaled_dot_product_attention: q, k, v, with causal, bool and float masks, and grouped heads") {
  const T in = {rand_in({2, 3, 4}, 330), rand_in({2, 5, 4}, 331), rand_in({2, 5, 2}, 332)};
  gradcheck("sdpa", in, [](const T& x) { return ts::scaled_dot_product_attention(x[0], x[1], x[2]); });
  gradcheck("sdpa causal", in,
            [](const T& x) { return ts::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); });
  const ts::Tensor mask =
      ts::from_values(std::vector<bool>{true, false, true, true, false, false, true, false, false, false,
                                        true, true, true, true, true},
                      {3, 5});
  gradcheck("sdpa bool mask", in,
            [&](const T& x) { return ts::scaled_dot_product_attention(x[0], x[1], x[2], mask); });
  gradcheck(
      "sdpa float mask and scale",
      {rand_in({2, 3, 4}, 333), rand_in({2, 5, 4}, 334), rand_in({2, 5, 2}, 335), rand_in({3, 5}, 336)},
      [](const T& x) { return ts::scaled_dot_product_attention(x[0], x[1], x[2], x[3], 0.0, false, 0.4); });
  gradcheck("sdpa gqa", {rand_in({1, 4, 3, 2}, 337), rand_in({1, 2, 3, 2}, 338), rand_in({1, 2, 3, 2}, 339)},
            [](const T& x) {
              return ts::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true, std::nullopt, true);
            });
}

TEST_CASE("dropout with a fixed generator") {
  gradcheck("dropout", {rand_in({4, 5}, 340)}, [](const T& x) {
    ts::Generator g(99);
    return ts::dropout(x[0], 0.4, true, g);
  });
}

TEST_CASE("local tensors: gather, embedding and cross_entropy per rank") {
  const ts::Tensor idx =
      ts::local_tensor({{0, ts::tensor({{1L, 0L}})}, {1, ts::tensor({{2L, 2L}, {0L, 1L}})}});
  gradcheck("local gather", {local_rand({{1, 3}, {2, 3}}, 350)},
            [idx](const T& x) { return ts::gather(x[0], 1, idx); });
  gradcheck("local cross_entropy", {local_rand({{1, 3}, {2, 3}}, 351)}, [](const T& x) {
    const ts::Tensor t = ts::local_tensor({{0, ts::tensor({2L})}, {1, ts::tensor({0L, -100L})}});
    return ts::cross_entropy(x[0], t, {.label_smoothing = 0.2});
  });
  gradcheck("local embedding of a plain weight", {rand_in({4, 2}, 352)}, [](const T& x) {
    return ts::embedding(ts::local_tensor({{0, ts::tensor({3L, 3L})}, {1, ts::tensor({0L})}}), x[0]);
  });
}

TEST_CASE("local tensors: attention and dropout per rank, uneven heads") {
  gradcheck("local sdpa causal",
            {local_rand({{2, 3, 2}, {1, 3, 2}}, 360), local_rand({{2, 4, 2}, {1, 4, 2}}, 361),
             local_rand({{2, 4, 3}, {1, 4, 3}}, 362)},
            [](const T& x) { return ts::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true); });
  gradcheck("local dropout", {local_rand({{2, 3}, {4, 3}}, 363)}, [](const T& x) {
    ts::Generator g(5);
    return ts::dropout(x[0], 0.5, true, g);
  });
}

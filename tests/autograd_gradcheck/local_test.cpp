// Gradient checks on local tensors: each rank its own values and (where the op allows) its own
// shape; a plain tensor used with local ones gets a local gradient of each rank's contribution.
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::local_nz;
using gc::local_rand;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

namespace {

// Rows per rank differ: 2, 4 and 1 rows of 3.
const std::vector<ts::Shape> kUneven = {{2, 3}, {4, 3}, {1, 3}};

}  // namespace

TEST_CASE("local: binary ops between local tensors of uneven per-rank shapes") {
  const T in = {local_rand(kUneven, 200), local_nz(kUneven, 201)};
  gradcheck("local add", in, [](const T& x) { return ts::add(x[0], x[1]); });
  gradcheck("local sub", in, [](const T& x) { return ts::sub(x[0], x[1]); });
  gradcheck("local mul", in, [](const T& x) { return ts::mul(x[0], x[1]); });
  gradcheck("local div", in, [](const T& x) { return ts::div(x[0], x[1]); });
  gradcheck("local maximum", in, [](const T& x) { return ts::maximum(x[0], x[1]); });
  gradcheck("local minimum", in, [](const T& x) { return ts::minimum(x[0], x[1]); });
  gradcheck("local pow", {local_rand(kUneven, 202, 0.3, 2.5), local_rand(kUneven, 203)},
            [](const T& x) { return ts::pow(x[0], x[1]); });
}

TEST_CASE("local: broadcasting between local tensors, per-rank row vectors") {
  const T in = {local_rand(kUneven, 204), local_nz({{1, 3}, {1, 3}, {1, 3}}, 205)};
  gradcheck("local [m_r,3] * local [1,3]", in, [](const T& x) { return x[0] * x[1]; });
  gradcheck("local [m_r,3] / local [1,3]", in, [](const T& x) { return x[0] / x[1]; });
  gradcheck("local [1,3] - local [m_r,3]", in, [](const T& x) { return x[1] - x[0]; });
  gradcheck("local [m_r,1] + local [3] (per-rank size-1 dims)",
            {local_rand({{2, 1}, {4, 1}, {1, 1}}, 206), local_rand({{3}, {3}, {3}}, 207)},
            [](const T& x) { return x[0] + x[1]; });
}

TEST_CASE("local: a plain tensor used with a local one gets a local gradient") {
  const ts::Tensor lx = local_rand(kUneven, 208);
  gradcheck("local * plain [3]", {lx, rand_in({3}, 209)}, [](const T& x) { return x[0] * x[1]; });
  gradcheck("plain [3] - local", {lx, rand_in({3}, 210)}, [](const T& x) { return x[1] - x[0]; });
  gradcheck("local / plain 0-d", {lx, gc::dense({1.75}, {})}, [](const T& x) { return x[0] / x[1]; });
  gradcheck("pow(plain, local)", {lx, rand_in({3}, 211, 0.5, 2)},
            [](const T& x) { return ts::pow(x[1], x[0]); });
  gradcheck("maximum(local, plain)", {lx, rand_in({3}, 212)},
            [](const T& x) { return ts::maximum(x[0], x[1]); });
  // The plain tensor goes through plain ops first.
  gradcheck("local * exp(plain)", {lx, rand_in({1, 3}, 213)},
            [](const T& x) { return x[0] * ts::exp(x[1] * 2.0); });
  // Only the plain tensor requires grad here: the output is still local, per rank.
  const ts::Tensor fixed = local_rand(kUneven, 214);
  gradcheck("only the plain input", {rand_in({3}, 215)},
            [fixed](const T& x) { return ts::tanh(fixed * x[0]); });
}

TEST_CASE("local: plain gradient by hand is each rank's contribution") {
  // sum(x_r * p) for x shards [[1,2],[3,4]] / [[5,6]] / [[-1,0.5]]: shard r of dp is x_r summed over rows.
  const ts::Tensor lx =
      gc::local({gc::dense({1, 2, 3, 4}, {2, 2}), gc::dense({5, 6}, {1, 2}), gc::dense({-1, 0.5}, {1, 2})});
  ts::Tensor p = gc::dense({0.25, -3}, {2}).set_requires_grad(true);
  const ts::Tensor loss = ts::sum(lx * p);
  loss.backward();
  gc::check_local_grad(p.grad(), {{2}, {2}, {2}}, {{4, 6}, {5, 6}, {-1, 0.5}}, "p.grad()");
  CHECK(p.grad().ranks() == lx.ranks());
}

TEST_CASE("local: unary ops and scalar operands") {
  const T any = {local_rand(kUneven, 220, -3, 3)};
  const T nonzero = {local_nz(kUneven, 221)};
  const T positive = {local_rand(kUneven, 222, 0.2, 3)};
  gradcheck("local neg", any, [](const T& x) { return ts::neg(x[0]); });
  gradcheck("local abs", nonzero, [](const T& x) { return ts::abs(x[0]); });
  gradcheck("local exp", any, [](const T& x) { return ts::exp(x[0]); });
  gradcheck("local log", positive, [](const T& x) { return ts::log(x[0]); });
  gradcheck("local sqrt", positive, [](const T& x) { return ts::sqrt(x[0]); });
  gradcheck("local relu", nonzero, [](const T& x) { return ts::relu(x[0]); });
  gradcheck("local gelu", any, [](const T& x) { return ts::gelu(x[0]); });
  gradcheck("local tanh", any, [](const T& x) { return ts::tanh(x[0]); });
  gradcheck("local sigmoid", any, [](const T& x) { return ts::sigmoid(x[0]); });
  gradcheck("local 2.5 - x", any, [](const T& x) { return 2.5 - x[0]; });
  gradcheck("local x * -1.5 + 2", any, [](const T& x) { return x[0] * -1.5 + 2; });
  gradcheck("local 3 / x", nonzero, [](const T& x) { return 3.0 / x[0]; });
  gradcheck("local x ^ 3", any, [](const T& x) { return ts::pow(x[0], 3); });
  gradcheck("local 1.5 ^ x", any, [](const T& x) { return ts::pow(1.5, x[0]); });
  gradcheck("local maximum(x, 0.2)", any, [](const T& x) { return ts::maximum(x[0], 0.2); });
  gradcheck("local minimum(0.2, x)", any, [](const T& x) { return ts::minimum(0.2, x[0]); });
}

TEST_CASE("local: reductions over the uneven dim, the even dim and everything") {
  const T in = {local_nz({{2, 3}, {4, 3}, {1, 3}}, 230)};
  using Reduce = ts::Tensor (*)(const ts::Tensor&, const std::vector<int64_t>&, bool);
  const std::pair<const char*, Reduce> reductions[] = {
      {"sum", ts::sum}, {"mean", ts::mean}, {"prod", ts::prod}, {"max", ts::max}, {"min", ts::min}};
  for (const auto& [name, op] : reductions) {
    const Reduce f = op;
    const std::string n = std::string("local ") + name;
    gradcheck(n + " all", in, [f](const T& x) { return f(x[0], {}, false); });
    gradcheck(n + " dim 0 (uneven)", in, [f](const T& x) { return f(x[0], {0}, false); });
    gradcheck(n + " dim 0 keepdim", in, [f](const T& x) { return f(x[0], {0}, true); });
    gradcheck(n + " dim -1", in, [f](const T& x) { return f(x[0], {-1}, false); });
    gradcheck(n + " dim 1 keepdim", in, [f](const T& x) { return f(x[0], {1}, true); });
  }
}

TEST_CASE("local: mean over the uneven dim divides by each rank's own count (by hand)") {
  const ts::Tensor x = gc::local({gc::dense({1, 2, 3, 4}, {4}), gc::dense({5}, {1}), gc::dense({6, 7}, {2})})
                           .set_requires_grad(true);
  ts::mean(x).backward();
  gc::check_local_grad(x.grad(), {{4}, {1}, {2}}, {{0.25, 0.25, 0.25, 0.25}, {1}, {0.5, 0.5}}, "mean");
}

TEST_CASE("local: max with ties differs per rank (by hand)") {
  // Rank 0: max 3 twice; rank 1: one element; rank 2: max 2 three times.
  const ts::Tensor x =
      gc::local({gc::dense({3, 1, 3}, {3}), gc::dense({-4}, {1}), gc::dense({2, 2, 2, 1}, {4})})
          .set_requires_grad(true);
  ts::max(x).backward();
  gc::check_local_grad(x.grad(), {{3}, {1}, {4}}, {{0.5, 0, 0.5}, {1}, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0}},
                       "max ties");
}

TEST_CASE("local: prod with zeros on some ranks") {
  // Rank 0: one zero; rank 1: two zeros; rank 2: none.
  const T in = {
      gc::local({gc::dense({2, 0, -1.5}, {3}), gc::dense({0, 3, 0, 0.5}, {4}), gc::dense({1.25, -2}, {2})})};
  gradcheck("local prod with zeros", in, [](const T& x) { return ts::prod(x[0]); });
}

TEST_CASE("local: softmax and log_softmax along the uneven and the even dim") {
  const T in = {local_rand(kUneven, 240, -3, 3)};
  for (int64_t dim : {0, 1, -1}) {
    gradcheck("local softmax dim " + std::to_string(dim), in,
              [dim](const T& x) { return ts::softmax(x[0], dim); });
    gradcheck("local log_softmax dim " + std::to_string(dim), in,
              [dim](const T& x) { return ts::log_softmax(x[0], dim); });
  }
}

TEST_CASE("local: matmul with per-rank rows and batches") {
  gradcheck("local [m_r,4] x plain [4,2]", {local_rand({{2, 4}, {3, 4}, {1, 4}}, 250), rand_in({4, 2}, 251)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
  gradcheck("local [m_r,4] x local [4,2]",
            {local_rand({{2, 4}, {3, 4}, {1, 4}}, 252), local_rand({{4, 2}, {4, 2}, {4, 2}}, 253)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
  gradcheck("local [m_r,4] x local [4,n_r]",
            {local_rand({{2, 4}, {3, 4}, {1, 4}}, 254), local_rand({{4, 1}, {4, 3}, {4, 2}}, 255)},
            [](const T& x) { return ts::mm(x[0], x[1]); });
  gradcheck("local bmm with per-rank batch",
            {local_rand({{1, 2, 3}, {3, 2, 3}, {2, 2, 3}}, 256),
             local_rand({{1, 3, 2}, {3, 3, 2}, {2, 3, 2}}, 257)},
            [](const T& x) { return ts::bmm(x[0], x[1]); });
  gradcheck("local batched [b_r,2,3] x plain [3,2]",
            {local_rand({{1, 2, 3}, {3, 2, 3}, {2, 2, 3}}, 258), rand_in({3, 2}, 259)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
  gradcheck("plain [2,3] x local [b_r,3,2]",
            {local_rand({{1, 3, 2}, {3, 3, 2}, {2, 3, 2}}, 260), rand_in({2, 3}, 261)},
            [](const T& x) { return ts::matmul(x[1], x[0]); });
  gradcheck("local dot with per-rank lengths",
            {local_rand({{2}, {5}, {3}}, 262), local_rand({{2}, {5}, {3}}, 263)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
  gradcheck("local [m_r,4] x plain [4] (matrix-vector)",
            {local_rand({{2, 4}, {3, 4}, {1, 4}}, 264), rand_in({4}, 265)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
}

TEST_CASE("local: cat along the uneven dim, stack, split and chunk") {
  gradcheck("local cat dim 0 (uneven)", {local_rand(kUneven, 270), local_rand({{3, 3}, {1, 3}, {2, 3}}, 271)},
            [](const T& x) {
              return ts::cat({x[0], x[1]}, 0);
            });
  gradcheck("local cat dim 1 (uneven rows)",
            {local_rand(kUneven, 272), local_rand({{2, 1}, {4, 1}, {1, 1}}, 273)}, [](const T& x) {
              return ts::cat({x[0], x[1]}, 1);
            });
  gradcheck("local cat with a plain tensor", {local_rand(kUneven, 274), rand_in({2, 3}, 275)},
            [](const T& x) {
              return ts::cat({x[0], x[1]}, 0);
            });
  gradcheck("local stack", {local_rand(kUneven, 276), local_rand(kUneven, 277)}, [](const T& x) {
    return ts::stack({x[0], x[1]}, 1);
  });
  gradcheck("local split along the even dim, one part used", {local_rand(kUneven, 278)},
            [](const T& x) { return ts::split(x[0], 2, 1)[1]; });
  gradcheck("local chunk along the even dim", {local_rand(kUneven, 279)}, [](const T& x) {
    const auto parts = ts::chunk(x[0], 3, 1);
    return parts[0] * parts[2];
  });
  // Even shards: split along dim 0 works the same on every rank.
  gradcheck("local split along dim 0 (even shards)", {local_rand({{2, 3}, {2, 3}, {2, 3}}, 280)},
            [](const T& x) {
              const auto parts = ts::split(x[0], 1, 0);
              return parts[1] - parts[0];
            });
}

TEST_CASE("local: views on uneven shards") {
  const T in = {local_rand(kUneven, 290)};
  gradcheck("local transpose", in, [](const T& x) { return x[0].t(); });
  gradcheck("local reshape {-1}", in, [](const T& x) { return x[0].reshape({-1}); });
  gradcheck("local flatten", in, [](const T& x) { return ts::exp(x[0].flatten()); });
  gradcheck("local unsqueeze/squeeze", in, [](const T& x) { return x[0].unsqueeze(1).squeeze(1) * x[0]; });
  gradcheck("local permute", in, [](const T& x) { return x[0].unsqueeze(0).permute({2, 0, 1}); });
  gradcheck("local narrow (even dim)", in, [](const T& x) { return x[0].narrow(1, 1, 2); });
  gradcheck("local select (even dim)", in, [](const T& x) { return x[0].select(1, -1); });
  gradcheck("local slice with step (even dim)", in, [](const T& x) { return x[0].slice(1, 0, 3, 2); });
  gradcheck("local select row 0", in, [](const T& x) { return x[0].select(0, 0); });
  gradcheck("local slice rows to each rank's end", in,
            [](const T& x) { return x[0].slice(0, 0, x[0].sym_size(0), 2); });
  gradcheck("local flip", in, [](const T& x) { return x[0].flip({0, 1}) * x[0]; });
  gradcheck("local expand", in, [](const T& x) { return x[0].unsqueeze(0).expand({2, -1, -1}); });
  gradcheck("local contiguous/clone", in,
            [](const T& x) { return x[0].t().contiguous() * x[0].clone().t(); });
  gradcheck(
      "local cast", in, [](const T& x) { return ts::exp(x[0].to(ts::kFloat32)).to(ts::kFloat64); },
      gc::float32_options());
}

TEST_CASE("local: one rank, seven ranks, and an empty shard") {
  gradcheck("local 1 rank", {local_rand({{3, 4}}, 300), rand_in({4, 2}, 301)},
            [](const T& x) { return ts::softmax(ts::matmul(x[0], x[1]), 1); });
  std::vector<ts::Shape> seven;
  for (int64_t r = 0; r < 7; ++r) seven.push_back({r % 3 + 1, 2});
  gradcheck("local 7 ranks", {local_rand(seven, 302), rand_in({2}, 303)},
            [](const T& x) { return ts::sum(ts::tanh(x[0] * x[1]), {0}); });
  const std::vector<ts::Shape> with_empty = {{2, 3}, {0, 3}, {1, 3}};
  gradcheck("local sum with an empty shard", {local_rand(with_empty, 304)},
            [](const T& x) { return ts::sum(x[0], {0}); });
  gradcheck("local matmul with an empty shard", {local_rand(with_empty, 305), rand_in({3, 2}, 306)},
            [](const T& x) { return ts::matmul(x[0], x[1]); });
  gradcheck("local mean over dim 1 with an empty shard", {local_rand(with_empty, 307)},
            [](const T& x) { return ts::mean(x[0], {1}); });
}

TEST_CASE("local: more shapes with plain tensors, negative dims, per-rank positions") {
  // A local [n_r] broadcast against a plain [2,1]: the local gradient sums over the new leading dim.
  gradcheck("local [n_r] * plain [2,1]", {local_rand({{3}, {1}, {2}}, 310), rand_in({2, 1}, 311)},
            [](const T& x) { return x[0] * x[1]; });
  gradcheck("local matmul plain^T", {local_rand(kUneven, 312), rand_in({2, 3}, 313)},
            [](const T& x) { return ts::matmul(x[0], x[1].t()); });
  gradcheck("local stack with a plain tensor",
            {local_rand({{2, 3}, {2, 3}, {2, 3}}, 314), rand_in({2, 3}, 315)}, [](const T& x) {
              return ts::stack({x[1], x[0]}, -1);
            });
  gradcheck("local cat dim -2 (uneven)",
            {local_rand(kUneven, 316), local_rand({{1, 3}, {0, 3}, {2, 3}}, 317)}, [](const T& x) {
              return ts::cat({x[1], x[0]}, -2);
            });
  gradcheck("local mean over {0,-1} keepdim", {local_rand(kUneven, 318)}, [](const T& x) {
    return ts::mean(x[0], {0, -1}, true);
  });
  gradcheck("local softmax of 3-d over the uneven middle dim",
            {local_rand({{2, 1, 3}, {2, 4, 3}, {2, 2, 3}}, 319)},
            [](const T& x) { return ts::softmax(x[0], 1); });
  gradcheck("local log_softmax of 3-d over the last dim",
            {local_rand({{2, 1, 3}, {2, 4, 3}, {2, 2, 3}}, 320)},
            [](const T& x) { return ts::log_softmax(x[0], -1); });
  // Each rank's last row: a per-rank index.
  gradcheck("local select of each rank's last row", {local_rand(kUneven, 321)},
            [](const T& x) { return x[0].select(0, x[0].sym_size(0) - 1); });
  gradcheck("local narrow of each rank's last row", {local_rand(kUneven, 322)},
            [](const T& x) { return x[0].narrow(0, x[0].sym_size(0) - 1, 1) * 2.0; });
  gradcheck("local view to per-rank shape", {local_rand(kUneven, 323)}, [](const T& x) {
    return x[0].view({3, -1});
  });
  gradcheck("local expand of [1,3] to per-rank rows",
            {local_rand({{1, 3}, {1, 3}, {1, 3}}, 324), local_rand(kUneven, 325)}, [](const T& x) {
              return x[0].expand({x[1].sym_size(0), 3}) * x[1];
            });
  gradcheck("plain [1,3] expanded to local per-rank rows", {rand_in({1, 3}, 326), local_rand(kUneven, 327)},
            [](const T& x) {
              return x[0].expand({x[1].sym_size(0), 3}) * x[1];
            });
}

TEST_CASE("local: a plain tensor on both a plain and a local path, and other rank sets") {
  gradcheck("plain on plain and local paths", {local_rand(kUneven, 330), rand_in({3}, 331)},
            [](const T& x) { return ts::sum(x[0] * x[1]) + ts::sum(x[1] * x[1]); });
  // Ranks 2 and 5 only.
  ts::RankMap<ts::Tensor> shards;
  shards.set(2, rand_in({2, 3}, 332));
  shards.set(5, rand_in({4, 3}, 333));
  gradcheck("local over ranks {2,5} with a plain tensor", {ts::local_tensor(shards), rand_in({3}, 334)},
            [](const T& x) { return ts::exp(x[0]) * x[1]; });
  gradcheck("local view with a per-rank size", {local_rand(kUneven, 335)},
            [](const T& x) { return x[0].view({x[0].sym_size(0) * 3}); });
}

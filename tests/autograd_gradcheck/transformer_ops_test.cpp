// Gradient checks (float64, central differences) of silu, gelu(tanh), sin, cos, rsqrt, clamp, where,
// masked_fill, tril/triu, cumsum, layer_norm and rms_norm, on dense and local tensors; and clamp's
// gradient at its bounds, where finite differences are not valid, against PyTorch's rule.
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::local_rand;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

TEST_CASE("element-wise: silu, gelu tanh, sin, cos, rsqrt, clamp") {
  const T x = {rand_in({3, 4}, 1)};
  gradcheck("silu", x, [](const T& v) { return ts::silu(v[0]); });
  gradcheck("gelu tanh", x, [](const T& v) { return ts::gelu(v[0], "tanh"); });
  gradcheck("gelu none", x, [](const T& v) { return ts::gelu(v[0], "none"); });
  gradcheck("sin", x, [](const T& v) { return ts::sin(v[0]); });
  gradcheck("cos", x, [](const T& v) { return ts::cos(v[0]); });
  gradcheck("sin of a transposed view", x, [](const T& v) { return ts::sin(v[0].t()); });
  gradcheck("rsqrt", {rand_in({3, 4}, 2, 0.3, 3)}, [](const T& v) { return ts::rsqrt(v[0]); });
  // Random values in (-2, 2) are never exactly at the bounds.
  gradcheck("clamp both", x, [](const T& v) { return ts::clamp(v[0], -0.7, 0.9); });
  gradcheck("clamp lo", x, [](const T& v) { return ts::clamp(v[0], 0.1, std::nullopt); });
  gradcheck("clamp hi", x, [](const T& v) { return ts::clamp(v[0], std::nullopt, -0.2); });
}

TEST_CASE("clamp's gradient at the bounds is 1 (bounds included), as PyTorch's") {
  ts::Tensor x = gc::dense({-1.0, -0.5, 0.0, 0.5, 1.0}, {5});
  x.set_requires_grad(true);
  ts::sum(ts::clamp(x, -0.5, 0.5)).backward();
  gc::check_grad(x.grad(), {5}, {0, 1, 1, 1, 0}, "clamp(x, -0.5, 0.5) at and beyond its bounds");
}

TEST_CASE("where and masked_fill: the gradient goes to the chosen side, summed over broadcasting") {
  const ts::Tensor cond = ts::tensor({{true, false, true}, {false, false, true}});  // [2,3]
  gradcheck("where [2,3] [2,3]", {rand_in({2, 3}, 3), rand_in({2, 3}, 4)},
            [&](const T& v) { return ts::where(cond, v[0], v[1]); });
  gradcheck("where [3] [2,1]", {rand_in({3}, 5), rand_in({2, 1}, 6)},
            [&](const T& v) { return ts::where(cond, v[0], v[1]); });
  gradcheck("where tensor, scalar", {rand_in({2, 3}, 7)},
            [&](const T& v) { return ts::where(cond, v[0], 0.5); });
  gradcheck("where scalar, tensor", {rand_in({1, 3}, 8)},
            [&](const T& v) { return ts::where(cond, -2.0, v[0]); });
  gradcheck("masked_fill scalar", {rand_in({2, 3}, 9)},
            [&](const T& v) { return ts::masked_fill(v[0], cond, -3.0); });
  gradcheck("masked_fill 0-d tensor value", {rand_in({2, 3}, 10), rand_in({}, 11)},
            [&](const T& v) { return ts::masked_fill(v[0], cond, v[1]); });
}

TEST_CASE("tril, triu, cumsum") {
  const T x = {rand_in({2, 3, 4}, 12)};
  for (int64_t d : {-1, 0, 2}) {
    gradcheck("tril " + std::to_string(d), x, [d](const T& v) { return ts::tril(v[0], d); });
    gradcheck("triu " + std::to_string(d), x, [d](const T& v) { return ts::triu(v[0], d); });
  }
  for (int64_t d : {0, 1, 2, -1})
    gradcheck("cumsum " + std::to_string(d), x, [d](const T& v) { return ts::cumsum(v[0], d); });
  gradcheck("cumsum of a transposed view", x, [](const T& v) { return ts::cumsum(v[0].transpose(0, 2), 1); });
  gradcheck("cumsum 0-d", {rand_in({}, 13)}, [](const T& v) { return ts::cumsum(v[0], 0); });
}

TEST_CASE("layer_norm and rms_norm: input, weight and bias") {
  const T in = {rand_in({2, 3, 4}, 14), rand_in({4}, 15), rand_in({4}, 16)};
  gradcheck("layer_norm [4] weight bias", in,
            [](const T& v) { return ts::layer_norm(v[0], {4}, v[1], v[2]); });
  gradcheck("layer_norm [4] none", {in[0]}, [](const T& v) { return ts::layer_norm(v[0], {4}); });
  gradcheck("layer_norm [3,4] weight", {in[0], rand_in({3, 4}, 17)}, [](const T& v) {
    return ts::layer_norm(v[0], {3, 4}, v[1], ts::Tensor(), 1e-3);
  });
  gradcheck("rms_norm [4] weight", {in[0], in[1]},
            [](const T& v) { return ts::rms_norm(v[0], {4}, v[1], 1e-6); });
  gradcheck("rms_norm [3,4] default eps", {in[0]}, [](const T& v) { return ts::rms_norm(v[0], {3, 4}); });
}

TEST_CASE("local tensors of uneven per-rank shapes") {
  const std::vector<ts::Shape> shapes = {{2, 4}, {3, 4}, {1, 4}};
  const ts::Tensor lx = local_rand(shapes, 18);
  gradcheck("local silu", {lx}, [](const T& v) { return ts::silu(v[0]); });
  gradcheck("local sin", {lx}, [](const T& v) { return ts::sin(v[0]); });
  gradcheck("local cumsum", {lx}, [](const T& v) { return ts::cumsum(v[0], 0); });
  gradcheck("local tril", {lx}, [](const T& v) { return ts::tril(v[0], 1); });
  gradcheck("local layer_norm, plain weight and bias", {lx, rand_in({4}, 19), rand_in({4}, 20)},
            [](const T& v) { return ts::layer_norm(v[0], {4}, v[1], v[2]); });
  gradcheck("local rms_norm", {lx, rand_in({4}, 21)},
            [](const T& v) { return ts::rms_norm(v[0], {4}, v[1]); });
  gradcheck("local where", {lx, rand_in({4}, 22)},
            [](const T& v) { return ts::where(ts::gt(v[0], 0.0), v[0], v[1]); });
}

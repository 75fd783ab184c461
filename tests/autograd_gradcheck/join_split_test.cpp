// Gradient checks of cat, stack, split and chunk, including outputs of a split left unused.
#include "gradcheck.hpp"

namespace ts = tessera;
using gc::gradcheck;
using gc::rand_in;
using T = std::vector<ts::Tensor>;

TEST_CASE("cat along each dim, negative dims, inputs of different lengths") {
  gradcheck("cat dim 0", {rand_in({1, 3}, 90), rand_in({2, 3}, 91), rand_in({3, 3}, 92)}, [](const T& x) {
    return ts::cat({x[0], x[1], x[2]}, 0);
  });
  gradcheck("cat dim 1", {rand_in({2, 3, 2}, 93), rand_in({2, 1, 2}, 94)}, [](const T& x) {
    return ts::cat({x[0], x[1]}, 1);
  });
  gradcheck("cat dim -1", {rand_in({2, 3, 2}, 95), rand_in({2, 3, 4}, 96)}, [](const T& x) {
    return ts::cat({x[0], x[1]}, -1);
  });
  gradcheck("cat with an empty input", {rand_in({2, 3}, 97), gc::dense({}, {0, 3})}, [](const T& x) {
    return ts::cat({x[0], x[1]}, 0);
  });
  gradcheck("cat of one input", {rand_in({2, 3}, 98)}, [](const T& x) { return ts::cat({x[0]}, 0) * 2.0; });
  gradcheck("cat of the same input twice, then exp", {rand_in({2, 2}, 99), rand_in({2, 1}, 100)},
            [](const T& x) {
              return ts::exp(ts::cat({x[0], x[1], x[0]}, 1));
            });
  gradcheck("cat of views", {rand_in({3, 3}, 101)}, [](const T& x) {
    return ts::cat({x[0].t(), x[0].flip({0}).narrow(1, 0, 2)}, 1);
  });
}

TEST_CASE("stack along each dim") {
  const T in = {rand_in({2, 3}, 102), rand_in({2, 3}, 103), rand_in({2, 3}, 104)};
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    gradcheck("stack dim " + std::to_string(dim), in, [dim](const T& x) {
      return ts::stack({x[0], x[1], x[2]}, dim);
    });
  }
  gradcheck("stack of the same input twice", {in[0], in[1]}, [](const T& x) {
    return ts::stack({x[0], x[1], x[0]}, 1) * x[0].unsqueeze(1);
  });
  gradcheck("stack of 0-d", {gc::dense({0.5}, {}), gc::dense({-1.5}, {})}, [](const T& x) {
    return ts::stack({x[0], x[1]});
  });
}

TEST_CASE("split and chunk, every output used") {
  const T in = {rand_in({5, 4}, 105)};
  // Weight each part differently and join them back in another order so each output's gradient is
  // distinct.
  gradcheck("split(2) reversed", in, [](const T& x) {
    const auto parts = ts::split(x[0], 2);
    REQUIRE(parts.size() == 3);
    return ts::cat({parts[2] * 3.0, ts::exp(parts[0]), parts[1]}, 0);
  });
  gradcheck("split({1,3}, dim 1)", in, [](const T& x) {
    const auto parts = ts::split(x[0], std::vector<int64_t>{1, 3}, 1);
    return ts::cat({parts[1], ts::sigmoid(parts[0])}, 1);
  });
  gradcheck("split(4, dim -1) (one part)", in, [](const T& x) { return ts::split(x[0], 4, -1)[0] * 2.0; });
  gradcheck("chunk(3)", in, [](const T& x) {
    const auto parts = ts::chunk(x[0], 3);
    REQUIRE(parts.size() == 3);
    return ts::cat({parts[1] * parts[0], parts[2].sum({0}, true)}, 0);
  });
  gradcheck("chunk(2, dim 1)", in, [](const T& x) {
    const auto parts = ts::chunk(x[0], 2, 1);
    return parts[0] * parts[1];
  });
}

TEST_CASE("split and chunk with only some outputs used") {
  const T in = {rand_in({6, 3}, 106)};
  gradcheck("split(2)[1] only", in, [](const T& x) { return ts::split(x[0], 2)[1]; });
  gradcheck("split(4)[1] only (the short last part)", in,
            [](const T& x) { return ts::tanh(ts::split(x[0], 4)[1]); });
  gradcheck("split({1,2,3})[0] and [2]", in, [](const T& x) {
    const auto parts = ts::split(x[0], std::vector<int64_t>{1, 2, 3});
    return parts[2] * parts[0];
  });
  gradcheck("chunk(3, dim 1)[2] only", in, [](const T& x) { return ts::chunk(x[0], 3, 1)[2]; });
  gradcheck("split parts used twice", in, [](const T& x) {
    const auto parts = ts::split(x[0], 3);
    return parts[0] * parts[0] + parts[0];
  });
  // By hand: only rows 2..3 of the input receive the weights.
  const ts::Tensor x = rand_in({6, 3}, 107).set_requires_grad(true);
  const ts::Tensor w = gc::dense({1, 2, 3, 4, 5, 6}, {2, 3});
  const ts::Tensor g = ts::autograd::grad({ts::sum(ts::split(x, 2)[1] * w)}, {x})[0];
  gc::check_grad(g, {6, 3}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0}, "split(2)[1] by hand");
}

TEST_CASE("cat and stack with inputs that do not require grad") {
  const ts::Tensor constant = rand_in({2, 3}, 108);
  gradcheck("cat with a constant", {rand_in({1, 3}, 109)}, [constant](const T& x) {
    return ts::cat({constant, x[0], constant}, 0);
  });
  gradcheck("stack with a constant", {rand_in({2, 3}, 110)}, [constant](const T& x) {
    return ts::stack({x[0], constant}, 2);
  });
}

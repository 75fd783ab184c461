// The transformer ops (indexing, embedding, one_hot, losses, attention, dropout) on meta tensors
// give the cpu results' shapes, dtypes and strides, with autograd: the cpu backend, which
// computes, is the oracle. Index values are data that meta does not hold: its tensors carry only
// the shapes of the cpu indices.
#include <functional>
#include <string>
#include <vector>

#include "meta_test_support.hpp"

using namespace meta_test;

namespace {

using T = std::vector<ts::Tensor>;

// The same program on one backend: values only matter on cpu.
T program(const std::string& b) {
  const ts::Tensor x = ts::randn({3, 5}, on(b, ts::kFloat64)).set_requires_grad(true);
  const ts::Tensor idx = ts::tensor({{2L, 0L, 4L}, {1L, 1L, 3L}}, ts::TensorOptions().backend(b));
  const ts::Tensor rows = ts::tensor({4L, 0L, 2L, 2L}, ts::TensorOptions().backend(b));
  const ts::Tensor target = ts::tensor({4L, -100L, 1L}, ts::TensorOptions().backend(b));
  const ts::Tensor q = ts::randn({2, 4, 3, 2}, on(b)), k = ts::randn({2, 2, 5, 2}, on(b));
  const ts::Tensor v = ts::randn({2, 2, 5, 3}, on(b));
  T out = {ts::gather(x, 1, idx),
           ts::scatter_add(x, 1, idx, x.narrow(0, 0, 2).narrow(1, 0, 3).contiguous()),
           ts::index_select(x, 1, rows),
           ts::index_select(x.t(), 0, rows),
           ts::embedding(idx, x.t().contiguous()),
           ts::one_hot(rows, 6),
           ts::cross_entropy(x, target),
           ts::cross_entropy(x, target, {.reduction = "none", .label_smoothing = 0.1}),
           ts::nll_loss(x, target, {.reduction = "sum"}),
           ts::mse_loss(x, x * 2.0),
           ts::scaled_dot_product_attention(q, k, v, {}, 0.0, true, std::nullopt, true),
           ts::scaled_dot_product_attention(q.narrow(1, 0, 2), k, v, ts::ones({3, 5}, on(b, ts::kBool))),
           ts::dropout(x, 0.3, true)};
  ts::sum(out[0]).backward();
  ts::cross_entropy(x, target, {.label_smoothing = 0.2}).backward();
  out.push_back(x.grad());
  return out;
}

}  // namespace

TEST_CASE("transformer ops on meta give the cpu results' layouts, gradients included") {
  const T cpu = program("cpu");
  const T meta = program("meta");
  REQUIRE(meta.size() == cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CAPTURE(i);
    check_same_layout(cpu[i], meta[i]);
  }
}

TEST_CASE("transformer ops: shape errors are refused on meta as on cpu") {
  for (const std::string b : {"cpu", "meta"}) {
    CAPTURE(b);
    const ts::Tensor x = ts::zeros({3, 5}, on(b));
    CHECK_THROWS_AS(ts::gather(x, 1, ts::zeros({3}, on(b, ts::kInt64))), ts::Error);
    CHECK_THROWS_AS(ts::gather(x, 1, ts::zeros({4, 1}, on(b, ts::kInt64))), ts::Error);
    CHECK_THROWS_AS(ts::embedding(ts::zeros({2}, on(b, ts::kInt64)), ts::zeros({5}, on(b))), ts::Error);
    CHECK_THROWS_AS(ts::cross_entropy(x, ts::zeros({2}, on(b, ts::kInt64))), ts::Error);
    CHECK_THROWS_AS(ts::scaled_dot_product_attention(x, ts::zeros({4, 4}, on(b)), ts::zeros({4, 4}, on(b))),
                    ts::Error);
  }
  CHECK_THROWS_WITH_AS(ts::one_hot(ts::zeros({2}, on("meta", ts::kInt64))),
                       doctest::Contains("pass num_classes"), ts::Error);
}

// The transformer building blocks on meta tensors: the same shapes, dtypes and strides as on cpu
// (the computing backend is the oracle), the same refusals, and on local tensors of uneven
// per-rank shapes.
#include <functional>
#include <string>
#include <vector>

#include "meta_test_support.hpp"

using namespace meta_test;

namespace transformer_meta {

std::vector<ts::Tensor> run_all(const std::string& b) {
  const ts::Tensor x = ts::randn({2, 3, 4}, on(b));
  const ts::Tensor d = ts::randn({3, 4}, on(b, ts::kFloat64));
  const ts::Tensor i = ts::arange(12, on(b, ts::kInt32)).reshape({3, 4});
  const ts::Tensor w = ts::ones({4}, on(b));
  const ts::Tensor mask = ts::gt(ts::randn({3, 4}, on(b)), 0.0);
  const ts::Tensor t = ts::randn({4, 3}, on(b)).t();
  return {ts::silu(x),
          ts::gelu(x, "tanh"),
          ts::sin(i),
          ts::cos(t),
          ts::rsqrt(d),
          ts::clamp(i, -1.5, 2.5),
          ts::clamp(i, 1, std::nullopt),
          ts::where(mask, x, d),
          ts::where(mask, i, 0.5),
          ts::where(mask, 1, 0),
          ts::masked_fill(x, mask, -1e9),
          ts::masked_fill(i, mask, 2.5),
          ts::tril(x, 1),
          ts::triu(t, -1),
          ts::tril(ts::ones({3, 3}, on(b, ts::kBool))),
          ts::cumsum(x, 1),
          ts::cumsum(i, 0),
          ts::cumsum(t, -1),
          ts::layer_norm(x, {4}, w, w),
          ts::layer_norm(x, {3, 4}),
          ts::rms_norm(x, {4}, w),
          ts::rms_norm(d, {3, 4}),
          ts::transpose(x, 0, 2),
          ts::permute(x, {2, 0, 1}),
          ts::arange(1, 10, 3, ts::TensorOptions().backend(b)),
          ts::arange(0.0, 1.0, 0.3, ts::TensorOptions().backend(b))};
}

}  // namespace transformer_meta

TEST_CASE("transformer ops give the cpu result's shape, dtype and strides on meta") {
  const std::vector<ts::Tensor> cpu = transformer_meta::run_all("cpu");
  const std::vector<ts::Tensor> meta = transformer_meta::run_all("meta");
  REQUIRE(cpu.size() == meta.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CAPTURE(i);
    check_same_layout(cpu[i], meta[i]);
  }
  CHECK(meta[24].sizes() == ts::Shape{3});  // ceil((10 - 1) / 3)
  CHECK(meta[25].sizes() == ts::Shape{4});  // ceil(1 / 0.3)
  CHECK(meta[25].dtype() == ts::kFloat32);
}

TEST_CASE("transformer ops: what cpu refuses, meta refuses") {
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> refusals = {
      {"tril of 1-d", [](const std::string& b) { ts::tril(ts::ones({3}, on(b))); }},
      {"cumsum dim out of range", [](const std::string& b) { ts::cumsum(ts::ones({3}, on(b)), 1); }},
      {"layer_norm shape mismatch",
       [](const std::string& b) {
         ts::layer_norm(ts::ones({2, 3}, on(b)), {2});
       }},
      {"where with a float condition",
       [](const std::string& b) { ts::where(ts::ones({2}, on(b)), ts::ones({2}, on(b)), 0); }},
      {"masked_fill growing the tensor",
       [](const std::string& b) {
         ts::masked_fill(ts::ones({2}, on(b)), ts::ones({3, 2}, on(b, ts::kBool)), 1);
       }},
      {"gelu approximate 'fast'", [](const std::string& b) { ts::gelu(ts::ones({2}, on(b)), "fast"); }},
  };
  for (const auto& [name_bound, run] : refusals) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    CHECK_THROWS_AS(run("cpu"), ts::Error);
    CHECK_THROWS_AS(run("meta"), ts::Error);
  }
}

TEST_CASE("transformer ops on local tensors of uneven per-rank shapes match cpu on 1, 3 and 7 ranks") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    auto run = [](const std::string& b) {
      const ts::Tensor x = ts::rank_map([&](int r) { return ts::randn({r + 1, 2, 4}, on(b)); });
      ts::Tensor w;
      {
        ts::DisabledLocalMode plain;
        w = ts::ones({4}, on(b));
      }
      return std::vector<ts::Tensor>{ts::rms_norm(x, {4}, w),
                                     ts::layer_norm(x, {2, 4}),
                                     ts::silu(x),
                                     ts::cumsum(x, 0),
                                     ts::tril(x),
                                     ts::where(ts::gt(x, 0.0), x, 0.0)};
    };
    const std::vector<ts::Tensor> cpu = run("cpu");
    const std::vector<ts::Tensor> meta = run("meta");
    REQUIRE(cpu.size() == meta.size());
    for (size_t i = 0; i < cpu.size(); ++i) {
      CAPTURE(i);
      check_same_layout(cpu[i], meta[i]);
    }
  }
}

// Every public op on tensors, run once on cpu tensors and once on meta tensors of the same shapes
// and dtypes: the meta results must have exactly the cpu results' shapes, dtypes and strides (the
// cpu backend, which computes, is the independent oracle), and an op the cpu backend refuses must
// be refused on meta too. Plain tensors, then local tensors of world sizes 1, 3 and 7 with uneven
// per-rank shapes.
#include <functional>
#include <string>
#include <vector>

#include "meta_test_support.hpp"

using namespace meta_test;

namespace {

// The operands every case draws from, all made on one backend.
struct Inputs {
  explicit Inputs(const std::string& b)
      : backend(b),
        f34(ts::randn({3, 4}, on(b))),
        f45(ts::rand({4, 5}, on(b))),
        f234(ts::randn({2, 3, 4}, on(b))),
        f254(ts::randn({2, 5, 4}, on(b))),
        f4(ts::ones({4}, on(b))),
        f3(ts::ones({3}, on(b))),
        empty04(ts::zeros({0, 4}, on(b))),
        scalar(ts::scalar_tensor(2.5, on(b))),
        d34(ts::randn({3, 4}, on(b, ts::kFloat64))),
        i34(ts::arange(12, on(b, ts::kInt64)).reshape({3, 4})),
        n34(ts::full({3, 4}, 7, on(b, ts::kInt32))),
        b34(ts::full({3, 4}, true, on(b, ts::kBool))),
        transposed(ts::randn({4, 3}, on(b)).t()) {}
  std::string backend;
  ts::Tensor f34, f45, f234, f254, f4, f3, empty04, scalar, d34, i34, n34, b34, transposed;
};

using OpOnInputs = std::function<std::vector<ts::Tensor>(const Inputs&)>;
struct Case {
  std::string name;
  OpOnInputs run;
};

std::vector<Case> cases() {
  using T = std::vector<ts::Tensor>;
  std::vector<Case> all;
  auto add = [&](std::string name, OpOnInputs run) { all.push_back({std::move(name), std::move(run)}); };

  // Element-wise binary: tensor op tensor with broadcasting and promotion, scalar on either side.
  add("add", [](const Inputs& x) {
    return T{ts::add(x.f34, x.f4), x.f34 + x.f34, x.i34 + x.f34, x.b34 + x.b34};
  });
  add("sub", [](const Inputs& x) { return T{ts::sub(x.f34, x.f4), x.f34 - x.d34, x.i34 - x.n34}; });
  add("mul", [](const Inputs& x) { return T{ts::mul(x.f234, x.f4), x.b34 * x.b34, x.n34 * x.n34}; });
  add("div", [](const Inputs& x) { return T{ts::div(x.f34, x.f4), x.i34 / x.i34, x.n34 / x.d34}; });
  add("pow", [](const Inputs& x) { return T{ts::pow(x.f34, x.f4), ts::pow(x.i34, x.i34)}; });
  add("maximum minimum", [](const Inputs& x) {
    return T{ts::maximum(x.f34, x.f4), ts::minimum(x.i34, x.f34), ts::maximum(x.b34, x.b34)};
  });
  add("comparisons", [](const Inputs& x) {
    return T{ts::eq(x.f34, x.f4),  ts::ne(x.i34, x.f34), ts::lt(x.f34, x.f34),
             ts::le(x.b34, x.b34), ts::gt(x.n34, x.i34), ts::ge(x.f234, x.f4),
             x.f34 == x.f34,       x.f34 != x.f4,        x.f34<x.f34, x.f34 <= x.f34, x.f34> x.f34,
             x.f34 >= x.f34};
  });
  add("scalar operands", [](const Inputs& x) {
    return T{x.f34 + 1,
             2.5 - x.i34,
             x.i34 * 3,
             1 / x.n34,
             ts::pow(x.f34, 2),
             ts::pow(2, x.i34),
             ts::maximum(x.i34, 1.5),
             ts::minimum(0, x.b34),
             ts::eq(x.f34, 1),
             ts::ne(1, x.i34),
             ts::lt(x.i34, 2.5),
             ts::le(x.f34, 0),
             ts::gt(x.b34, 0),
             ts::ge(1, x.f34),
             x.f34 + x.scalar,
             x.scalar * x.i34};
  });
  add("broadcast with empty", [](const Inputs& x) { return T{x.empty04 + x.f4, x.empty04 * 2}; });

  // Element-wise unary (integer inputs of the float functions give float32).
  add("unary", [](const Inputs& x) {
    return T{ts::neg(x.f34),     -x.i34,           ts::abs(x.n34),
             ts::relu(x.f34),    ts::exp(x.f34),   ts::exp(x.i34),
             ts::log(x.d34),     ts::sqrt(x.n34),  ts::tanh(x.f34),
             ts::sigmoid(x.f34), ts::gelu(x.f234), ts::abs(x.transposed)};
  });

  // Reductions.
  add("sum mean prod", [](const Inputs& x) {
    return T{ts::sum(x.f34),
             ts::sum(x.f234, {0, 2}),
             ts::sum(x.i34, {1}, true),
             ts::sum(x.b34),
             ts::mean(x.f34, {0}),
             ts::mean(x.d34, {-1}, true),
             ts::prod(x.n34, {1}),
             ts::prod(x.b34),
             ts::sum(x.empty04, {0}),
             ts::mean(x.empty04, {1}),
             x.f34.sum(),
             x.f34.sum({1}, true),
             x.f34.mean(),
             x.f234.mean({1})};
  });
  add("max min all any", [](const Inputs& x) {
    return T{ts::max(x.f34), ts::max(x.i34, {0}),    ts::min(x.f234, {1, 2}, true), ts::min(x.b34),
             ts::all(x.b34), ts::any(x.b34, {1}),    ts::all(x.b34, {0}, true),     x.f34.max(),
             x.f34.min(),    ts::max(x.empty04, {1})};
  });
  add("argmax argmin", [](const Inputs& x) {
    return T{ts::argmax(x.f34), ts::argmax(x.i34, 1), ts::argmin(x.f234, 0, true), ts::argmin(x.n34)};
  });

  // Linear algebra and softmax.
  add("matmul", [](const Inputs& x) {
    return T{ts::matmul(x.f34, x.f45),
             ts::matmul(x.f4, x.f4),
             ts::matmul(x.f34, x.f4),
             ts::matmul(x.f3, x.f34),
             ts::matmul(x.f234, x.f45),
             ts::matmul(x.f234.unsqueeze(1), x.f254.transpose(1, 2).unsqueeze(0)),
             x.f34.matmul(x.f45),
             ts::matmul(x.i34, x.i34.t()),
             ts::matmul(x.transposed, x.f45)};
  });
  add("mm bmm", [](const Inputs& x) {
    return T{ts::mm(x.f34, x.f45), ts::mm(x.d34.t(), x.d34), ts::bmm(x.f234, x.f254.transpose(1, 2)),
             ts::mm(x.empty04, x.f45)};
  });
  add("softmax", [](const Inputs& x) {
    return T{ts::softmax(x.f34, 1), ts::softmax(x.f234, 0), ts::log_softmax(x.d34, -1), x.f34.softmax(0),
             ts::softmax(x.i34, 1)};
  });

  // Joining and splitting.
  add("cat stack", [](const Inputs& x) {
    return T{ts::cat({x.f34, x.f34, x.empty04}, 0), ts::cat({x.f234, x.f234}, -1),
             ts::stack({x.f34, x.f34}, 1), ts::stack({x.f4, x.f4, x.f4}), ts::cat({x.i34, x.f34})};
  });
  add("split chunk", [](const Inputs& x) {
    T out = ts::split(x.f234, 2, 2);
    for (const ts::Tensor& t : ts::split(x.f34, std::vector<int64_t>{1, 0, 2}, 0)) out.push_back(t);
    for (const ts::Tensor& t : ts::chunk(x.f45, 3, 1)) out.push_back(t);
    return out;
  });

  // Views and copies.
  add("views", [](const Inputs& x) {
    return T{x.f234.view({6, 4}),
             x.f234.view({-1}),
             x.f234.reshape({4, 6}),
             x.transposed.reshape({12}),
             x.f234.transpose(0, 2),
             x.f34.t(),
             x.f4.t(),
             x.f234.permute({2, 0, 1}),
             x.f234.flatten(),
             x.f234.flatten(1),
             x.f34.unsqueeze(0).squeeze(),
             x.f34.unsqueeze(2).squeeze(2),
             x.f34.unsqueeze(-1),
             x.f34.narrow(1, 1, 2),
             x.f34.slice(1, 0, 4, 2),
             x.f34.select(0, 1),
             x.f234[1],
             x.f234.flip({0, 2}),
             x.f4.expand({3, 4}),
             x.f34.unsqueeze(0).expand({2, -1, -1}),
             x.scalar.view({1})};
  });
  add("contiguous clone to", [](const Inputs& x) {
    return T{x.transposed.contiguous(),    x.f34.contiguous(),  x.transposed.clone(),
             x.f34.to(ts::kFloat64),       x.i34.to(ts::kBool), x.f34.to(ts::kFloat32),
             x.f234.flip({1}).contiguous()};
  });
  add("copy_ fill_", [](const Inputs& x) {
    ts::Tensor a = ts::zeros({3, 4}, on(x.backend));
    a.narrow(1, 1, 2).fill_(3);
    a.copy_(x.f4);
    ts::Tensor b = ts::empty({3, 4}, on(x.backend, ts::kInt64));
    b.copy_(x.transposed);
    b.t().fill_(1);
    return T{a, b};
  });

  // Factories.
  add("factories", [](const Inputs& x) {
    ts::Generator generator(7);
    const std::string& b = x.backend;
    return T{ts::empty({2, 3}, on(b)),
             ts::zeros({0}, on(b, ts::kInt32)),
             ts::ones({2, 1, 2}, on(b, ts::kFloat64)),
             ts::full({2}, true, ts::TensorOptions().backend(b)),
             ts::full({2, 2}, 3, ts::TensorOptions().backend(b)),
             ts::arange(5, ts::TensorOptions().backend(b)),
             ts::arange(0.5, 3, 0.5, ts::TensorOptions().backend(b)),
             ts::eye(3, on(b)),
             ts::eye(2, 4, on(b, ts::kBool)),
             ts::rand({3, 2}, on(b)),
             ts::randn({4}, generator, on(b, ts::kFloat64)),
             ts::rand({2}, generator, on(b)),
             ts::empty_like(x.f234),
             ts::zeros_like(x.transposed),
             ts::ones_like(x.i34, ts::kFloat32),
             ts::full_like(x.b34, false),
             ts::tensor({1.f, 2.f}, on(b)),
             ts::tensor({{1, 2}, {3, 4}}, ts::TensorOptions().backend(b)),
             ts::tensor({{{true}}}, ts::TensorOptions().backend(b)),
             ts::scalar_tensor(3, ts::TensorOptions().backend(b))};
  });
  return all;
}

// What the cpu backend refuses, meta refuses: shapes, dtypes without a kernel, empty reductions.
std::vector<std::pair<std::string, std::function<void(const Inputs&)>>> refusals() {
  return {
      {"add of unbroadcastable shapes", [](const Inputs& x) { ts::add(x.f34, x.f3); }},
      {"mm with mismatched inner dims", [](const Inputs& x) { ts::mm(x.f34, x.f34); }},
      {"bmm of 2-d operands", [](const Inputs& x) { ts::bmm(x.f34, x.f45); }},
      {"matmul of bool (no kernel)", [](const Inputs& x) { ts::matmul(x.b34, x.b34.t()); }},
      {"neg of bool (no kernel)", [](const Inputs& x) { ts::neg(x.b34); }},
      {"sub of bool (no kernel)", [](const Inputs& x) { ts::sub(x.b34, x.b34); }},
      {"max over an empty dim (no identity)", [](const Inputs& x) { ts::max(x.empty04, {0}); }},
      {"argmin of an empty tensor", [](const Inputs& x) { ts::argmin(x.empty04); }},
      {"min of all of an empty tensor", [](const Inputs& x) { ts::min(x.empty04); }},
      {"view of a non-contiguous tensor", [](const Inputs& x) { x.transposed.view({12}); }},
      {"reshape to a wrong element count",
       [](const Inputs& x) {
         x.f34.reshape({5, 3});
       }},
      {"narrow out of range", [](const Inputs& x) { x.f34.narrow(1, 3, 2); }},
      {"cat of mismatched shapes",
       [](const Inputs& x) {
         ts::cat({x.f34, x.f45});
       }},
      {"sum over a dim out of range", [](const Inputs& x) { ts::sum(x.f34, {2}); }},
      {"rand of int64", [](const Inputs& x) { ts::rand({2}, on(x.backend, ts::kInt64)); }},
      {"softmax dim out of range", [](const Inputs& x) { ts::softmax(x.f34, 2); }},
  };
}

void check_case(const Case& c, const Inputs& cpu_inputs, const Inputs& meta_inputs) {
  CAPTURE(c.name);
  const std::vector<ts::Tensor> cpu = c.run(cpu_inputs);
  const std::vector<ts::Tensor> meta = c.run(meta_inputs);
  REQUIRE(meta.size() == cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    CAPTURE(i);
    check_same_layout(cpu[i], meta[i]);
  }
}

}  // namespace

TEST_CASE("every tensor op gives the cpu result's shape, dtype and strides on meta") {
  const Inputs cpu("cpu"), meta("meta");
  // The inputs themselves (factories and a transposed view) already match.
  check_same_layout(cpu.f34, meta.f34);
  check_same_layout(cpu.i34, meta.i34);
  check_same_layout(cpu.b34, meta.b34);
  check_same_layout(cpu.scalar, meta.scalar);
  check_same_layout(cpu.transposed, meta.transposed);
  for (const Case& c : cases()) check_case(c, cpu, meta);
}

TEST_CASE("what the cpu backend refuses, the meta backend refuses") {
  const Inputs cpu("cpu"), meta("meta");
  for (const auto& [refusal, run] : refusals()) {
    const auto& name = refusal;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    CHECK_THROWS_AS(run(cpu), ts::Error);
    CHECK_THROWS_AS(run(meta), ts::Error);
  }
}

TEST_CASE("a meta reduction without identity over an empty range says so, as the cpu kernel does") {
  const std::string cpu = error_of([] { ts::max(ts::zeros({2, 0}), {1}); });
  const std::string meta = error_of([] { ts::max(ts::zeros({2, 0}, on("meta")), {1}); });
  CHECK(contains(cpu, "max: the reduced dims [0] of input 0 (shape [2, 0]) are empty"));
  CHECK(contains(meta, "max: the reduced dims [0] of input 0 (shape [2, 0]) are empty"));
  CHECK(contains(meta, "backend 'meta'"));
}

TEST_CASE("ops on local tensors of uneven per-rank shapes match cpu on 1, 3 and 7 ranks") {
  for (int world : {1, 3, 7}) {
    CAPTURE(world);
    ts::LocalMode mode(world);
    auto run = [](const std::string& b) {
      // Rank r holds [r + 1, 4] (uneven); w is one plain [4, 2] for every rank.
      const ts::Tensor x = ts::rank_map([&](int r) { return ts::randn({r + 1, 4}, on(b)); });
      ts::Tensor w;
      {
        ts::DisabledLocalMode plain;
        w = ts::randn({4, 2}, on(b));
      }
      const ts::Tensor y = ts::relu(ts::matmul(x, w) + 1);
      return std::vector<ts::Tensor>{x,
                                     y,
                                     ts::sum(x, {1}),
                                     ts::softmax(x, 1),
                                     x.t(),
                                     ts::cat({x, x}, 0),
                                     x.reshape({-1}),
                                     ts::zeros({3}, on(b)),
                                     ts::randn({2, 2}, on(b)),
                                     x.narrow(1, 0, 2).contiguous(),
                                     ts::mean(y)};
    };
    const std::vector<ts::Tensor> cpu = run("cpu");
    const std::vector<ts::Tensor> meta = run("meta");
    REQUIRE(cpu.size() == meta.size());
    for (size_t i = 0; i < cpu.size(); ++i) {
      CAPTURE(i);
      check_same_layout(cpu[i], meta[i]);
    }
    // The per-rank shapes are the ones made: rank r has r + 1 rows.
    for (int r = 0; r < world; ++r) CHECK(meta[0].shard(r).sizes() == ts::Shape{r + 1, 4});
  }
}

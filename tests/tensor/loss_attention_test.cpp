// cross_entropy, nll_loss, mse_loss, scaled_dot_product_attention and dropout: values pinned from
// PyTorch 2 (float64, computed once, never imported here) or hand-written loops, and their errors.
#include <doctest/doctest.h>

#include <cmath>
#include <tessera/tessera.hpp>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

// The inputs the pinned PyTorch numbers were computed from: a * ((i * 7 + 3) % 11) / 10 - b.
ts::Tensor pattern(const ts::Shape& shape, double a, double b) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(a * static_cast<double>((i * 7 + 3) % 11) / 10.0 - b);
  return ts::from_values(v, shape);
}

double scalar(const ts::Tensor& t) { return t.item<double>(); }

}  // namespace

TEST_CASE("cross_entropy matches PyTorch: reductions, ignore_index, label smoothing") {
  const ts::Tensor logits = pattern({3, 4}, 1.0, 0.4);
  const ts::Tensor target = ts::tensor({1L, -100L, 3L});
  CHECK(scalar(ts::cross_entropy(logits, target)) == doctest::Approx(1.2145532480014407).epsilon(1e-12));
  CHECK(scalar(ts::cross_entropy(logits, target, {.label_smoothing = 0.2})) ==
        doctest::Approx(1.2570532480014407).epsilon(1e-12));
  CHECK(scalar(ts::cross_entropy(logits, target, {.reduction = "sum"})) ==
        doctest::Approx(2.4291064960028814).epsilon(1e-12));
  CHECK(scalar(ts::cross_entropy(logits, target, {.reduction = "sum", .label_smoothing = 0.2})) ==
        doctest::Approx(2.5141064960028814).epsilon(1e-12));
  test::check_values(ts::cross_entropy(logits, target, {.reduction = "none"}), {3},
                     std::vector<double>{0.9617359991344016, 0.0, 1.4673704968684798});
  test::check_values(
      ts::cross_entropy(logits, target, {.ignore_index = -100, .reduction = "none", .label_smoothing = 0.2}),
      {3}, std::vector<double>{1.0567359991344016, 0.0, 1.4573704968684797});
}

TEST_CASE("cross_entropy of (N, C, d) logits matches PyTorch") {
  const ts::Tensor logits = pattern({2, 3, 2}, 1.3, 0.5);
  const ts::Tensor target = ts::tensor({{0L, 2L}, {1L, -100L}});
  CHECK(scalar(ts::cross_entropy(logits, target, {.label_smoothing = 0.1})) ==
        doctest::Approx(1.3061919104994013).epsilon(1e-12));
  test::check_values(ts::cross_entropy(logits, target, {.reduction = "none"}), {2, 2},
                     std::vector<double>{1.5386834315198803, 1.2788755351251102, 1.14868343151988, 0.0});
}

TEST_CASE("cross_entropy of one unbatched sample equals a loop, and a fully ignored mean is NaN") {
  const ts::Tensor logits = ts::tensor({0.5, -1.0, 2.0});
  const double lse = std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0));
  CHECK(scalar(ts::cross_entropy(logits, ts::tensor(1L))) == doctest::Approx(lse + 1.0));
  CHECK(std::isnan(scalar(ts::cross_entropy(ts::zeros({2, 3}), ts::tensor({-100L, -100L})))));
}

TEST_CASE("nll_loss matches PyTorch, an ignore_index inside the class range is skipped") {
  const ts::Tensor logp = pattern({3, 4}, 1.0, 0.4);
  CHECK(scalar(ts::nll_loss(logp, ts::tensor({1L, -100L, 3L}))) == doctest::Approx(-0.25).epsilon(1e-12));
  CHECK(scalar(ts::nll_loss(logp, ts::tensor({0L, 1L, 2L}), {.ignore_index = 1, .reduction = "sum"})) ==
        doctest::Approx(-0.2).epsilon(1e-12));
}

TEST_CASE("loss errors name the value and what was expected") {
  const ts::Tensor logits = ts::zeros({2, 3});
  CHECK_THROWS_WITH_AS(ts::cross_entropy(logits, ts::tensor({0L, 3L})),
                       doctest::Contains("target 3 is out of bounds for 3 classes"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::cross_entropy(logits, ts::tensor({0L})), doctest::Contains("target has shape [1]"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::cross_entropy(logits, ts::tensor({0.f, 1.f})),
                       doctest::Contains("int64 or int32 class"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::cross_entropy(logits, ts::tensor({0L, 1L}), {.reduction = "avg"}),
                       doctest::Contains("reduction is 'avg'"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::cross_entropy(logits, ts::tensor({0L, 1L}), {.label_smoothing = 1.5}),
                       doctest::Contains("label_smoothing is 1.5"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::mse_loss(logits, logits, "max"), doctest::Contains("reduction is 'max'"),
                       ts::Error);
}

TEST_CASE("mse_loss equals a loop for each reduction") {
  const ts::Tensor a = pattern({2, 3}, 1.0, 0.3), b = pattern({2, 3}, 0.5, -0.2);
  const std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  std::vector<double> sq;
  double total = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    sq.push_back((va[i] - vb[i]) * (va[i] - vb[i]));
    total += sq.back();
  }
  test::check_values(ts::mse_loss(a, b, "none"), {2, 3}, sq);
  CHECK(scalar(ts::mse_loss(a, b, "sum")) == doctest::Approx(total));
  CHECK(scalar(ts::mse_loss(a, b)) == doctest::Approx(total / 6));
}

namespace {

// softmax(q k^T * scale + bias) v for one (L, E) x (S, E) x (S, Ev) head, in double loops; bias
// -inf where allowed(i, j) is false.
std::vector<double> attention_loop(const std::vector<double>& q, const std::vector<double>& k,
                                   const std::vector<double>& v, int64_t L, int64_t S, int64_t E, int64_t Ev,
                                   double scale, const std::function<double(int64_t, int64_t)>& bias) {
  std::vector<double> out;
  for (int64_t i = 0; i < L; ++i) {
    std::vector<double> s(static_cast<size_t>(S));
    double top = -INFINITY;
    for (int64_t j = 0; j < S; ++j) {
      double dot = 0;
      for (int64_t e = 0; e < E; ++e)
        dot += q[static_cast<size_t>(i * E + e)] * k[static_cast<size_t>(j * E + e)];
      s[static_cast<size_t>(j)] = dot * scale + bias(i, j);
      top = std::max(top, s[static_cast<size_t>(j)]);
    }
    double z = 0;
    for (double& x : s) z += (x = std::exp(x - top));
    for (int64_t c = 0; c < Ev; ++c) {
      double acc = 0;
      for (int64_t j = 0; j < S; ++j)
        acc += s[static_cast<size_t>(j)] / z * v[static_cast<size_t>(j * Ev + c)];
      out.push_back(acc);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("scaled_dot_product_attention equals a loop: default and given scale, bool and float masks") {
  const int64_t L = 3, S = 4, E = 2, Ev = 3;
  const ts::Tensor q = pattern({L, E}, 0.9, 0.3), k = pattern({S, E}, 0.7, 0.2),
                   v = pattern({S, Ev}, 1.1, 0.5);
  const auto vq = q.to_vector<double>(), vk = k.to_vector<double>(), vv = v.to_vector<double>();
  const auto none = [](int64_t, int64_t) { return 0.0; };
  test::check_values(ts::scaled_dot_product_attention(q, k, v), {L, Ev},
                     attention_loop(vq, vk, vv, L, S, E, Ev, 1 / std::sqrt(2.0), none));
  test::check_values(ts::scaled_dot_product_attention(q, k, v, {}, 0.0, false, 0.3), {L, Ev},
                     attention_loop(vq, vk, vv, L, S, E, Ev, 0.3, none));
  const ts::Tensor allowed =
      ts::tensor({{true, false, true, true}, {false, true, true, false}, {true, true, true, true}});
  test::check_values(ts::scaled_dot_product_attention(q, k, v, allowed), {L, Ev},
                     attention_loop(vq, vk, vv, L, S, E, Ev, 1 / std::sqrt(2.0), [&](int64_t i, int64_t j) {
                       return allowed[i][j].item<bool>() ? 0.0 : -INFINITY;
                     }));
  const ts::Tensor bias = pattern({L, S}, 2.0, 1.0);
  test::check_values(ts::scaled_dot_product_attention(q, k, v, bias), {L, Ev},
                     attention_loop(vq, vk, vv, L, S, E, Ev, 1 / std::sqrt(2.0),
                                    [&](int64_t i, int64_t j) { return bias[i][j].item<double>(); }));
  // A batch of heads: each (b, h) is its own loop.
  const ts::Tensor qb = pattern({2, L, E}, 0.9, 0.3), kb = pattern({2, S, E}, 0.7, 0.2),
                   vb = pattern({2, S, Ev}, 1.1, 0.5);
  const ts::Tensor ob = ts::scaled_dot_product_attention(qb, kb, vb, {}, 0.0, true);
  for (int64_t h = 0; h < 2; ++h)
    test::check_values(
        ob[h], {L, Ev},
        attention_loop(qb[h].contiguous().to_vector<double>(), kb[h].contiguous().to_vector<double>(),
                       vb[h].contiguous().to_vector<double>(), L, S, E, Ev, 1 / std::sqrt(2.0),
                       [](int64_t i, int64_t j) { return j <= i ? 0.0 : -INFINITY; }));
}

TEST_CASE("scaled_dot_product_attention: causal with L < S and grouped-query heads match PyTorch") {
  const ts::Tensor q = pattern({1, 4, 3, 2}, 0.9, 0.3);
  const ts::Tensor k = pattern({1, 2, 5, 2}, 0.7, 0.2);
  const ts::Tensor v = pattern({1, 2, 5, 3}, 1.1, 0.5);
  const std::vector<double> expected = {-0.16999999999999998,
                                        0.6000000000000001,
                                        0.16000000000000003,
                                        -0.22728546650489254,
                                        0.5427145334951076,
                                        0.10271453349510754,
                                        -0.28424673368702824,
                                        0.48575326631297194,
                                        0.045753266312971885,
                                        -0.16999999999999998,
                                        0.6000000000000001,
                                        0.16000000000000003,
                                        -0.2285070809481063,
                                        0.5414929190518938,
                                        0.10149291905189371,
                                        -0.28385343979849864,
                                        0.4861465602015015,
                                        0.04614656020150143,
                                        0.49,
                                        0.050000000000000044,
                                        -0.39,
                                        0.4334078637034246,
                                        -0.006592136296575412,
                                        -0.44659213629657546,
                                        0.3835965327578804,
                                        -0.056403467242119594,
                                        -0.1182095466264875,
                                        0.49,
                                        0.050000000000000044,
                                        -0.39,
                                        0.4348774939527539,
                                        -0.005122506047246206,
                                        -0.44512250604724635,
                                        0.3731854259781179,
                                        -0.06681457402188218,
                                        -0.06432838737075738};
  test::check_values(ts::scaled_dot_product_attention(q, k, v, {}, 0.0, true, std::nullopt, true),
                     {1, 4, 3, 3}, expected);
}

TEST_CASE("scaled_dot_product_attention errors") {
  const ts::Tensor q = ts::zeros({1, 4, 3, 2}), k = ts::zeros({1, 3, 5, 2}), v = ts::zeros({1, 3, 5, 2});
  CHECK_THROWS_WITH_AS(ts::scaled_dot_product_attention(q, k, v, {}, 0.0, false, std::nullopt, true),
                       doctest::Contains("multiple of the key's (3)"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::scaled_dot_product_attention(q, k, v), doctest::Contains("enable_gqa"), ts::Error);
  const ts::Tensor q3 = ts::zeros({3, 2});
  CHECK_THROWS_WITH_AS(ts::scaled_dot_product_attention(q3, ts::zeros({4, 3}), ts::zeros({4, 2})),
                       doctest::Contains("same last dim"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::scaled_dot_product_attention(q3, ts::zeros({4, 2}), ts::zeros({4, 2}),
                                                        ts::zeros({3, 4}), 0.0, true),
                       doctest::Contains("one of them"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::scaled_dot_product_attention(q3, ts::zeros({4, 2}), ts::zeros({4, 2}), {}, 1.5),
                       doctest::Contains("dropout_p is 1.5"), ts::Error);
}

TEST_CASE("dropout keeps element i when the generator's number at offset + i is below 1 - p") {
  const ts::Tensor x = pattern({4, 5}, 1.0, 0.5);
  ts::Generator g(1234), reference(1234);
  g.advance(7);
  reference.advance(7);
  const ts::Tensor out = ts::dropout(x, 0.3, true, g);
  CHECK(g.offset() == 27);  // advanced by numel
  const std::vector<double> u = ts::rand({20}, reference, ts::kFloat64).to_vector<double>();
  const std::vector<double> vx = x.to_vector<double>();
  std::vector<double> expected;
  int kept = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    expected.push_back(u[i] < 0.7 ? vx[i] / 0.7 : 0.0);
    kept += u[i] < 0.7;
  }
  CHECK(kept > 0);
  CHECK(kept < 20);
  test::check_values(out, {4, 5}, expected);
}

TEST_CASE("dropout edge cases: eval, p = 0, p = 1, the kept fraction, errors") {
  const ts::Tensor x = ts::ones({1000}, ts::kFloat64);
  CHECK(ts::dropout(x, 0.5, false).data_ptr() == x.data_ptr());
  CHECK(ts::dropout(x, 0.0, true).data_ptr() == x.data_ptr());
  CHECK(ts::equal(ts::dropout(x, 1.0, true), ts::zeros({1000}, ts::kFloat64)));
  const double kept = (ts::dropout(x, 0.25, true) != 0.0).to(ts::kFloat64).sum().item<double>();
  CHECK(kept > 700);
  CHECK(kept < 800);
  CHECK_THROWS_WITH_AS(ts::dropout(x, -0.1, true), doctest::Contains("p is -0.1"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::dropout(x, 1.5, true), doctest::Contains("expected a probability in [0, 1]"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::dropout(ts::ones({2}, ts::kInt64), 0.5, true), doctest::Contains("dtype int64"),
                       ts::Error);
}

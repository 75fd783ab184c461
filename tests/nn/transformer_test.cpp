// models::Transformer: torchtitan's parameter names, and a forward equal to a float64 loop
// written here from the Llama equations (RMSNorm, rotary embeddings on pairs, grouped-query
// causal attention, SwiGLU), with gradients reaching every parameter.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace ts = tessera;
namespace nn = tessera::nn;

namespace {

using Matrix = std::vector<std::vector<double>>;  // rows

std::map<std::string, std::vector<double>> weights_of(const nn::Module& model) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, p] : model.named_parameters()) {
    const std::vector<float> v = p.tensor().contiguous().to_vector<float>();
    out[name] = std::vector<double>(v.begin(), v.end());
  }
  return out;
}

// y = x W^T for W [out, in] stored row-major.
std::vector<double> project(const std::vector<double>& x, const std::vector<double>& w, size_t out) {
  const size_t in = x.size();
  std::vector<double> y(out, 0.0);
  for (size_t o = 0; o < out; ++o)
    for (size_t i = 0; i < in; ++i) y[o] += x[i] * w[o * in + i];
  return y;
}

std::vector<double> rms(const std::vector<double>& x, const std::vector<double>& w, double eps) {
  double sq = 0;
  for (double v : x) sq += v * v;
  const double scale = 1.0 / std::sqrt(sq / static_cast<double>(x.size()) + eps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * w[i];
  return y;
}

// Rotates each head's pairs (2i, 2i+1) by position * theta^(-2i/hd).
void rope(std::vector<double>& x, size_t heads, size_t hd, size_t position, double theta) {
  for (size_t h = 0; h < heads; ++h)
    for (size_t i = 0; i < hd / 2; ++i) {
      const double angle =
          static_cast<double>(position) * std::pow(theta, -2.0 * static_cast<double>(i) / hd);
      double& a = x[h * hd + 2 * i];
      double& b = x[h * hd + 2 * i + 1];
      const double ra = a * std::cos(angle) - b * std::sin(angle);
      const double rb = a * std::sin(angle) + b * std::cos(angle);
      a = ra;
      b = rb;
    }
}

// The logits [seq][vocab] of one sequence.
Matrix reference_logits(const ts::models::TransformerArgs& a, std::map<std::string, std::vector<double>>& w,
                        const std::vector<int64_t>& tokens) {
  const size_t D = a.dim, H = a.n_heads, KV = a.n_kv_heads ? a.n_kv_heads : a.n_heads, hd = D / H,
               S = tokens.size(), F = a.ffn_hidden;
  Matrix h(S);
  for (size_t s = 0; s < S; ++s)
    h[s] = std::vector<double>(w["tok_embeddings.weight"].begin() + tokens[s] * D,
                               w["tok_embeddings.weight"].begin() + (tokens[s] + 1) * D);
  for (int64_t layer = 0; layer < a.n_layers; ++layer) {
    const std::string p = "layers." + std::to_string(layer) + ".";
    Matrix q(S), k(S), v(S);
    for (size_t s = 0; s < S; ++s) {
      const auto xn = rms(h[s], w[p + "attention_norm.weight"], a.norm_eps);
      q[s] = project(xn, w[p + "attention.wq.weight"], H * hd);
      k[s] = project(xn, w[p + "attention.wk.weight"], KV * hd);
      v[s] = project(xn, w[p + "attention.wv.weight"], KV * hd);
      rope(q[s], H, hd, s, a.rope_theta);
      rope(k[s], KV, hd, s, a.rope_theta);
    }
    for (size_t s = 0; s < S; ++s) {
      std::vector<double> heads(H * hd, 0.0);
      for (size_t hq = 0; hq < H; ++hq) {
        const size_t hk = hq / (H / KV);
        std::vector<double> score(s + 1);
        double top = -1e300;
        for (size_t t = 0; t <= s; ++t) {
          score[t] = 0;
          for (size_t i = 0; i < hd; ++i) score[t] += q[s][hq * hd + i] * k[t][hk * hd + i];
          score[t] /= std::sqrt(static_cast<double>(hd));
          top = std::max(top, score[t]);
        }
        double total = 0;
        for (double& e : score) total += (e = std::exp(e - top));
        for (size_t t = 0; t <= s; ++t)
          for (size_t i = 0; i < hd; ++i) heads[hq * hd + i] += score[t] / total * v[t][hk * hd + i];
      }
      const auto out = project(heads, w[p + "attention.wo.weight"], D);
      for (size_t i = 0; i < D; ++i) h[s][i] += out[i];
      const auto xn = rms(h[s], w[p + "ffn_norm.weight"], a.norm_eps);
      auto gate = project(xn, w[p + "feed_forward.w1.weight"], F);
      const auto up = project(xn, w[p + "feed_forward.w3.weight"], F);
      for (size_t i = 0; i < F; ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
      const auto down = project(gate, w[p + "feed_forward.w2.weight"], D);
      for (size_t i = 0; i < D; ++i) h[s][i] += down[i];
    }
  }
  Matrix logits(S);
  for (size_t s = 0; s < S; ++s)
    logits[s] = project(rms(h[s], w["norm.weight"], a.norm_eps), w["output.weight"], a.vocab_size);
  return logits;
}

ts::models::TransformerArgs small_args(int64_t n_kv_heads) {
  ts::models::TransformerArgs args;
  args.dim = 16;
  args.n_layers = 2;
  args.n_heads = 4;
  args.n_kv_heads = n_kv_heads;
  args.vocab_size = 11;
  args.ffn_hidden = 24;
  args.max_seq_len = 8;
  args.rope_theta = 100.0;  // a small theta turns every pair noticeably within a few positions
  return args;
}

}  // namespace

TEST_CASE("the Transformer names its parameters as torchtitan's Llama") {
  ts::models::Transformer model(small_args(2));
  std::vector<std::string> names;
  for (const auto& [name, p] : model->named_parameters()) names.push_back(name);
  std::vector<std::string> expected = {"tok_embeddings.weight"};
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "layers." + std::to_string(layer) + ".";
    for (const char* n : {"attention.wq.weight", "attention.wk.weight", "attention.wv.weight",
                          "attention.wo.weight", "feed_forward.w1.weight", "feed_forward.w2.weight",
                          "feed_forward.w3.weight", "attention_norm.weight", "ffn_norm.weight"})
      expected.push_back(p + n);
  }
  expected.emplace_back("norm.weight");
  expected.emplace_back("output.weight");
  CHECK(names == expected);
  CHECK(model->get_parameter("layers.1.attention.wk.weight").shape() == ts::Shape{8, 16});  // 2 kv heads of 4
  CHECK(model->state_dict().size() == expected.size());  // the rotary tables are not persistent
}

TEST_CASE("the Transformer's logits equal a float64 loop over the Llama equations") {
  for (int64_t kv : {0, 2, 1}) {
    CAPTURE(kv);
    ts::manual_seed(11);
    const auto args = small_args(kv);
    ts::models::Transformer model(args);
    auto w = weights_of(*model);
    const std::vector<int64_t> tokens = {3, 7, 0, 10, 3, 5, 1, 9, 2, 4, 6, 8};  // 2 sequences of 6
    const ts::Tensor logits = model(ts::from_values(tokens, {2, 6})).tensor();
    REQUIRE(logits.sizes() == ts::Shape{2, 6, 11});
    const std::vector<float> got = logits.contiguous().to_vector<float>();
    for (size_t b = 0; b < 2; ++b) {
      const auto expected =
          reference_logits(args, w, std::vector<int64_t>(tokens.begin() + b * 6, tokens.begin() + b * 6 + 6));
      for (size_t s = 0; s < 6; ++s)
        for (size_t o = 0; o < 11; ++o)
          CHECK(got[(b * 6 + s) * 11 + o] == doctest::Approx(expected[s][o]).epsilon(1e-4));
    }
  }
}

TEST_CASE("a later token never changes an earlier position's logits, and backward reaches every parameter") {
  ts::manual_seed(5);
  ts::models::Transformer model(small_args(2));
  const ts::Tensor a = model(ts::from_values(std::vector<int64_t>{1, 2, 3, 4}, {1, 4})).tensor();
  const ts::Tensor b = model(ts::from_values(std::vector<int64_t>{1, 2, 3, 9}, {1, 4})).tensor();
  const auto va = a.contiguous().to_vector<float>();
  const auto vb = b.contiguous().to_vector<float>();
  for (size_t i = 0; i < 3 * 11; ++i) CHECK(va[i] == vb[i]);
  bool last_differs = false;
  for (size_t i = 3 * 11; i < 4 * 11; ++i) last_differs = last_differs || va[i] != vb[i];
  CHECK(last_differs);

  const ts::Tensor loss = ts::cross_entropy(a.view({-1, 11}), ts::tensor({2, 3, 4, 0}));
  loss.backward();
  for (const auto& [key, p] : model->named_parameters()) {
    const std::string& name = key;  // named again: clang 14 cannot capture a structured binding
    CHECK_MESSAGE(p.has_grad(), name);
  }
}

TEST_CASE("the Transformer refuses inconsistent shapes with the values named") {
  auto args = small_args(3);
  CHECK_THROWS_WITH_AS(ts::models::Transformer{args},
                       doctest::Contains("n_heads=4 must be a multiple of n_kv_heads=3"), ts::Error);
  args = small_args(0);
  args.dim = 12;  // head_dim 3 is odd
  CHECK_THROWS_WITH_AS(ts::models::Transformer{args},
                       doctest::Contains("dim=12 must be n_heads=4 times an even head_dim"), ts::Error);
  ts::models::Transformer model(small_args(0));
  CHECK_THROWS_WITH_AS(model(ts::zeros({1, 9}, ts::kInt64)),
                       doctest::Contains("the sequence has 9 positions but the rotary tables cover 8"),
                       ts::Error);
}

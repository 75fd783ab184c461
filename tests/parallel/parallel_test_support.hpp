// Helpers for the parallel-style tests: distinct inputs, value comparison, collective counts.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace pt {

namespace ts = tessera;

// n values, all different (no two blocks alike), in roughly [-1, 1].
inline std::vector<float> distinct(int64_t n, double salt) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.37 * i + salt) * 0.9 + 0.01 * salt);
  return out;
}

inline ts::Tensor distinct_tensor(const ts::Shape& shape, double salt) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return ts::from_values(distinct(n, salt), shape);
}

inline std::vector<float> values_of(const ts::Tensor& t) {
  return t.contiguous().to(ts::kFloat32).to_vector<float>();
}

// The full value of a module output or gradient: a DTensor's full tensor, a local tensor's
// reconciled value (it must be equal on every rank), or a plain tensor.
inline ts::Tensor full_of(const ts::nn::Value& v) {
  const ts::NoGradGuard off;
  if (v.is_dtensor()) return v.dtensor().full_tensor().reconcile();
  return v.tensor().is_local() ? v.tensor().reconcile() : v.tensor();
}

inline void check_close(const ts::Tensor& got, const ts::Tensor& want, const std::string& what,
                        double tol = 2e-5) {
  REQUIRE_MESSAGE(got.sizes() == want.sizes(), what);
  const auto g = values_of(got);
  const auto w = values_of(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::abs(g[i] - w[i]) > tol * (1.0 + std::abs(w[i]))) {
      FAIL_CHECK(what << ": index " << i << " is " << g[i] << ", expected " << w[i]);
      return;
    }
  }
}

// The gradient of a parameter as a full tensor.
inline ts::Tensor full_grad(const ts::nn::Parameter& p) {
  const ts::NoGradGuard off;
  if (p.is_dtensor()) return p.dtensor_grad().full_tensor().reconcile();
  return p.grad();
}

inline std::map<std::string, int64_t> by_collective(const ts::CommCounter& counter) {
  std::map<std::string, int64_t> out;
  for (const ts::CommCounter::Entry& e : counter.entries()) out[e.collective] += e.calls;
  return out;
}

inline std::string text(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [name, calls] : counts) out += name + "=" + std::to_string(calls) + " ";
  return out.empty() ? "none" : out;
}

// Two linear layers with a ReLU between, in -> hidden -> in ("up", "down"), on the default
// backend or the one named ("meta": shapes only).
class UpDownImpl : public ts::nn::Module {
 public:
  UpDownImpl(int64_t in, int64_t hidden, const std::string& backend = "") : Module("UpDown") {
    up = register_module("up", ts::nn::Linear(ts::nn::LinearOptions(in, hidden).backend(backend)));
    down = register_module("down", ts::nn::Linear(ts::nn::LinearOptions(hidden, in).backend(backend)));
  }
  ts::nn::Value forward(const ts::nn::Value& x) {
    return run_forward({x}, [this](const std::vector<ts::nn::Value>& in) {
      return down(ts::nn::functional::relu(up(in[0])));
    });
  }
  ts::nn::Linear up{nullptr}, down{nullptr};
};
TESSERA_MODULE(UpDown);

inline ts::models::TransformerArgs small_llama_args() {
  ts::models::TransformerArgs args;
  args.dim = 16;
  args.n_layers = 2;
  args.n_heads = 4;
  args.n_kv_heads = 4;
  args.vocab_size = 12;
  args.ffn_hidden = 24;
  args.max_seq_len = 8;
  args.rope_theta = 100.0;
  return args;
}

}  // namespace pt

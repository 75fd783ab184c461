// The problem, the dense reference run, and comparing two runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common.hpp"

namespace training {

Problem make_problem(int64_t in, int64_t hidden, int64_t out, int64_t rows, int steps, uint64_t seed) {
  auto off = ts::maybe_disable_local_mode();  // plain tensors, whatever mode the caller is in
  ts::Generator generator(seed);
  Problem p;
  p.w1 = ts::randn({in, hidden}, generator) * (1.0 / std::sqrt(static_cast<double>(in)));
  p.w2 = ts::randn({hidden, out}, generator) * (1.0 / std::sqrt(static_cast<double>(hidden)));
  const ts::Tensor teacher = ts::randn({in, out}, generator) * (1.0 / std::sqrt(static_cast<double>(in)));
  for (int s = 0; s < steps; ++s) {
    p.x.push_back(ts::randn({rows, in}, generator));
    p.target.push_back(ts::tanh(ts::matmul(p.x.back(), teacher)));
  }
  return p;
}

std::string describe(const OptimizerOptions& options) {
  char text[160];
  if (const auto* sgd = std::get_if<ts::optim::SGDOptions>(&options))
    std::snprintf(text, sizeof(text), "SGD(lr %g, momentum %g, weight_decay %g)", sgd->lr, sgd->momentum,
                  sgd->weight_decay);
  else {
    const auto& adamw = std::get<ts::optim::AdamWOptions>(options);
    std::snprintf(text, sizeof(text), "AdamW(lr %g, betas (%g, %g), weight_decay %g)", adamw.lr,
                  adamw.betas.first, adamw.betas.second, adamw.weight_decay);
  }
  return text;
}

std::vector<Step> dense_run(const Problem& problem, const OptimizerOptions& options, bool input_grad) {
  auto off = ts::maybe_disable_local_mode();  // the optimizer's state must be plain too
  ts::Tensor w1 = problem.w1.clone().set_requires_grad(true);
  ts::Tensor w2 = problem.w2.clone().set_requires_grad(true);
  const auto optimizer = detail::make_optimizer(std::vector<ts::Tensor>{w1, w2}, options);
  std::vector<Step> steps;
  for (size_t s = 0; s < problem.x.size(); ++s) {
    ts::Tensor x = problem.x[s].clone().set_requires_grad(input_grad);
    const ts::Tensor y = ts::matmul(ts::relu(ts::matmul(x, w1)), w2);
    const ts::Tensor loss = detail::mse(y, problem.target[s], y.numel());
    loss.backward();
    Step step;
    step.loss = loss.item<double>();
    step.grads = {w1.grad().clone(), w2.grad().clone()};
    if (input_grad) step.grads.push_back(x.grad().clone());
    optimizer->step();
    optimizer->zero_grad();
    step.params = {w1.detach().clone(), w2.detach().clone()};
    steps.push_back(std::move(step));
  }
  return steps;
}

namespace {

void accumulate(Difference& d, double got, double expected) {
  const double diff = std::abs(got - expected);
  d.max_abs = std::max(d.max_abs, diff);
  d.bitwise = d.bitwise && std::memcmp(&got, &expected, sizeof(double)) == 0;
  d.close = d.close && diff <= kAtol + kRtol * std::abs(expected);
}

void accumulate(Difference& d, const ts::Tensor& got, const ts::Tensor& expected) {
  if (got.sizes() != expected.sizes() || got.dtype() != expected.dtype()) {
    d.close = d.bitwise = false;
    d.max_abs = INFINITY;
    return;
  }
  const std::vector<float> a = got.to_vector<float>(), b = expected.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) accumulate(d, static_cast<double>(a[i]), static_cast<double>(b[i]));
}

}  // namespace

void compare_runs(Comparison& c) {
  c.grads = c.params = c.loss = Difference{};
  if (c.distributed.size() != c.dense.size()) {
    c.grads.close = c.params.close = c.loss.close = false;
    return;
  }
  for (size_t s = 0; s < c.dense.size(); ++s) {
    const Step &got = c.distributed[s], &expected = c.dense[s];
    accumulate(c.loss, got.loss, expected.loss);
    if (got.grads.size() != expected.grads.size() || got.params.size() != expected.params.size()) {
      c.grads.close = c.params.close = false;
      continue;
    }
    for (size_t i = 0; i < got.grads.size(); ++i) accumulate(c.grads, got.grads[i], expected.grads[i]);
    for (size_t i = 0; i < got.params.size(); ++i) accumulate(c.params, got.params[i], expected.params[i]);
  }
}

int64_t calls(const std::vector<ts::CommCounter::Entry>& entries, const std::string& collective,
              const std::string& mesh_dim) {
  int64_t total = 0;
  for (const ts::CommCounter::Entry& e : entries)
    if ((collective.empty() || e.collective == collective) && (mesh_dim.empty() || e.mesh_dim == mesh_dim))
      total += e.calls;
  return total;
}

std::string describe(const std::vector<ts::CommCounter::Entry>& entries) {
  // One item per (collective, mesh dim), whatever algorithms ran.
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> items;
  for (const ts::CommCounter::Entry& e : entries) {
    auto key = std::make_pair(e.collective, e.mesh_dim);
    auto it = std::find_if(items.begin(), items.end(), [&](const auto& item) { return item.first == key; });
    if (it == items.end())
      items.emplace_back(key, e.calls);
    else
      it->second += e.calls;
  }
  if (items.empty()) return "none";
  std::string text;
  for (const auto& [key, calls] : items) {
    if (!text.empty()) text += ", ";
    text += key.first + " x" + std::to_string(calls);
    if (!key.second.empty()) text += " over " + key.second;
  }
  return text;
}

std::vector<Comparison> all_scenarios() {
  return {data_parallel(), megatron_tp(), dp_tp(), fsdp(), adamw_training()};
}

namespace detail {

ts::Tensor on_every_rank(const ts::Tensor& t, const ts::RankSet& ranks) {
  ts::RankMap<ts::Tensor> shards;
  for (int r : ranks) shards.set(r, t.clone());
  return ts::local_tensor(std::move(shards));
}

ts::Tensor split_rows(const ts::Tensor& t, const std::vector<int64_t>& rows_per_rank) {
  ts::RankMap<ts::Tensor> shards;
  int64_t start = 0;
  for (size_t r = 0; r < rows_per_rank.size(); ++r) {
    shards.set(static_cast<int>(r), t.slice(0, start, start + rows_per_rank[r]).clone());
    start += rows_per_rank[r];
  }
  if (start != t.size(0))
    throw ts::Error("split_rows: the ranks' rows add up to " + std::to_string(start) +
                    ", expected the tensor's " + std::to_string(t.size(0)));
  return ts::local_tensor(std::move(shards));
}

std::vector<int64_t> chunk_rows(int64_t rows, int64_t parts) {
  const int64_t chunk = (rows + parts - 1) / parts;
  std::vector<int64_t> sizes;
  for (int64_t p = 0, left = rows; p < parts; ++p, left -= std::min(left, chunk))
    sizes.push_back(std::min(left, chunk));
  return sizes;
}

ts::Tensor global(const ts::DTensor& t) {
  ts::NoGradGuard no_grad;
  return t.full_tensor().reconcile();
}

ts::Tensor same_on_every_rank(const ts::Tensor& t) {
  ts::NoGradGuard no_grad;
  return t.detach().reconcile();
}

}  // namespace detail
}  // namespace training

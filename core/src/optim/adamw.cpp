// AdamW: Adam with decoupled weight decay (PyTorch: torch.optim.AdamW).
//
// The update is PyTorch's single-tensor implementation op for op, in the same order, so that each
// tensor intermediate is rounded to the parameter's dtype where PyTorch rounds it. The scalar
// coefficients (bias corrections, step size) are computed in double, as PyTorch computes them in
// Python, and cast to the parameter's dtype where they meet a tensor.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "dispatch/memory_context.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"
#include "tessera/optim.hpp"

namespace tessera::optim {
namespace {

// PyTorch's lerp kernel: start + w*(end-start) for a small weight, else end - (end-start)*(1-w),
// which is exact at w == 1. Its 1-w is computed in the tensor's dtype, from w cast to it.
Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  if (std::abs(weight) < 0.5) return start + weight * (end - start);
  const double one_minus =
      start.dtype() == kFloat32 ? static_cast<double>(1.0f - static_cast<float>(weight)) : 1.0 - weight;
  return end - (end - start) * one_minus;
}

}  // namespace

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions options)
    : Optimizer(std::move(params), "AdamW"), options_(options), state_(this->params().size()) {
  check_options();
}

AdamW::AdamW(const std::vector<DTensor>& params, AdamWOptions options)
    : Optimizer(params, "AdamW"), options_(options), state_(this->params().size()) {
  check_options();
}

AdamW::AdamW(const std::vector<nn::Parameter>& params, AdamWOptions options)
    : Optimizer(params, "AdamW"), options_(options), state_(this->params().size()) {
  check_options();
}

void AdamW::check_options() const {
  require_non_negative("lr", options_.lr);
  require_non_negative("eps", options_.eps);
  const double betas[] = {options_.betas.first, options_.betas.second};
  for (int i = 0; i < 2; ++i)
    if (!(betas[i] >= 0.0 && betas[i] < 1.0))
      throw Error(fmt::format("AdamW: invalid beta at index {} (betas.{}): {}; expected 0 <= beta < 1", i,
                              i == 0 ? "first" : "second", betas[i]));
  require_non_negative("weight_decay", options_.weight_decay);
}

void AdamW::step() {
  // The update is not part of any model's computation: nothing is recorded, and writing into
  // parameters that require grad is allowed.
  NoGradGuard no_grad;
  // What the step allocates (its state, and the temporaries of the update) is the optimizer's
  // memory, as a memory counter reports it.
  const dispatch::MemoryCategoryBinding category(&optimizer_state_category());
  const AdamWOptions& o = options_;
  const auto [beta1, beta2] = o.betas;
  const std::vector<Tensor> grads = grads_for_step();
  for (size_t i = 0; i < params().size(); ++i) {
    const Tensor& grad = grads[i];
    if (!grad.defined()) continue;  // not used by the last backward: no step is counted (PyTorch)
    Tensor param = params()[i];
    State& s = state_[i];
    if (!s.exp_avg.defined()) {
      // Moments start at zero with the parameter's layout (per rank for a local parameter).
      s.exp_avg = zeros_like(param);
      s.exp_avg_sq = zeros_like(param);
      if (o.amsgrad) s.max_exp_avg_sq = zeros_like(param);
    }
    const Tensor g = o.maximize ? -grad : grad;
    s.step += 1;
    // Decoupled weight decay: shrinks the parameter directly instead of adding wd*p to the gradient.
    if (o.weight_decay != 0) param.copy_(param * (1 - o.lr * o.weight_decay));
    s.exp_avg = lerp(s.exp_avg, g, 1 - beta1);
    s.exp_avg_sq = s.exp_avg_sq * beta2 + (1 - beta2) * g * g;

    const double step = static_cast<double>(s.step);
    const double bias_correction1 = 1 - std::pow(beta1, step);
    const double bias_correction2 = 1 - std::pow(beta2, step);
    const double step_size = o.lr / bias_correction1;
    const double bias_correction2_sqrt = std::pow(bias_correction2, 0.5);  // Python's ** 0.5
    // amsgrad divides by the largest second moment seen so far (the raw one, before bias
    // correction, as PyTorch's implementation does).
    if (o.amsgrad) s.max_exp_avg_sq = maximum(s.max_exp_avg_sq, s.exp_avg_sq);
    const Tensor& second_moment = o.amsgrad ? s.max_exp_avg_sq : s.exp_avg_sq;
    const Tensor denom = sqrt(second_moment) / bias_correction2_sqrt + o.eps;
    // copy_ writes the parameter's own storage, so every handle to it sees the new values.
    param.copy_(param - step_size * s.exp_avg / denom);
  }
}

Optimizer::ParamState AdamW::param_state(size_t i) const {
  const State& s = state_.at(i);
  ParamState state;
  if (!s.exp_avg.defined()) return state;
  state["step"] = s.step;
  state["exp_avg"] = s.exp_avg;
  state["exp_avg_sq"] = s.exp_avg_sq;
  if (s.max_exp_avg_sq.defined()) state["max_exp_avg_sq"] = s.max_exp_avg_sq;
  return state;
}

void AdamW::set_param_state(size_t i, const ParamState& state) {
  std::vector<std::string> known = {"step", "exp_avg", "exp_avg_sq"};
  if (options_.amsgrad) known.emplace_back("max_exp_avg_sq");
  check_state_fields(i, state, known);
  // A step needs every field at once: checked before any is replaced.
  State updated = state_[i];
  for (const auto& [field, value] : state) {
    if (field == "step")
      updated.step = checked_state_count(i, field, value);
    else if (field == "exp_avg")
      updated.exp_avg = checked_state_tensor(i, field, value);
    else if (field == "exp_avg_sq")
      updated.exp_avg_sq = checked_state_tensor(i, field, value);
    else
      updated.max_exp_avg_sq = checked_state_tensor(i, field, value);
  }
  if (updated.exp_avg.defined() != updated.exp_avg_sq.defined() ||
      (options_.amsgrad && updated.exp_avg.defined() != updated.max_exp_avg_sq.defined()))
    throw Error(fmt::format("AdamW: parameter {} would have only part of its state ({}); give {} together", i,
                            fmt::join(
                                [&] {
                                  std::vector<std::string> names;
                                  for (const auto& entry : state) names.push_back(entry.first);
                                  return names;
                                }(),
                                ", "),
                            fmt::join(known, ", ")));
  state_[i] = std::move(updated);
}

void AdamW::init_state() {
  NoGradGuard no_grad;
  const dispatch::MemoryCategoryBinding category(&optimizer_state_category());
  for (size_t i = 0; i < params().size(); ++i) {
    State& s = state_[i];
    if (s.exp_avg.defined()) continue;
    s.exp_avg = zeros_like(params()[i]);
    s.exp_avg_sq = zeros_like(params()[i]);
    if (options_.amsgrad) s.max_exp_avg_sq = zeros_like(params()[i]);
  }
}

}  // namespace tessera::optim

// Optimizer: the parameter list every optimizer shares, its checks, zero_grad and the learning rate.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/optim.hpp"

namespace tessera::optim {

const std::string& Optimizer::optimizer_state_category() {
  static const std::string category = "optimizer_state";  // immutable: read by every thread
  return category;
}
namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.is_local() ? a.local_impl() == b.local_impl() : a.impl() == b.impl();
}

// Checked once, at construction, so that step() can assume every parameter is a float tensor.
void check_params(const std::vector<Tensor>& params, const char* name) {
  if (params.empty())
    throw Error(
        fmt::format("{}: optimizer got an empty parameter list; pass at least one tensor to optimize", name));
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    if (!p.defined())
      throw Error(fmt::format(
          "{}: parameter {} is undefined (a default-constructed Tensor); pass defined tensors", name, i));
    if (!is_floating(p.dtype()))
      throw Error(
          fmt::format("{}: parameter {} has dtype {}, but only floating-point tensors (float32, float64) "
                      "can be optimized",
                      name, i, dtype_name(p.dtype())));
    // An op's output (non-leaf) is a temporary: the step would write into it and never reach the
    // tensor it was computed from, so training would silently do nothing (PyTorch refuses it too).
    if (!p.is_leaf())
      throw Error(fmt::format(
          "{}: can't optimize a non-leaf tensor: parameter {} was computed by {} from other tensors, so "
          "updating it would never change them; pass the leaf tensor you called set_requires_grad on "
          "(or x.detach().requires_grad_() to make a new leaf)",
          name, i, p.grad_fn_name()));
    // A parameter listed twice would be updated twice per step (PyTorch warns; here it is an error).
    for (size_t j = 0; j < i; ++j)
      if (same_tensor(params[j], p))
        throw Error(fmt::format(
            "{}: parameter {} is the same tensor as parameter {}; list each parameter once", name, i, j));
  }
}

// A gradient the update can use as it is: anything else would be promoted, broadcast or split
// per rank by the tensor ops, and rounded back into the parameter without a word.
void check_grad(const Tensor& p, const Tensor& grad, size_t i, const char* name) {
  if (grad.dtype() != p.dtype())
    throw Error(fmt::format("{}: parameter {} is {} but its gradient is {}; they must have the same dtype",
                            name, i, dtype_name(p.dtype()), dtype_name(grad.dtype())));
  if (!(grad.shape() == p.shape()))
    throw Error(fmt::format("{}: parameter {} has shape {} but its gradient has shape {}", name, i,
                            p.shape().to_string(), grad.shape().to_string()));
  // Per-rank gradients cannot update one plain tensor: which rank's value would it take?
  if (grad.is_local() && !p.is_local())
    throw Error(
        fmt::format("{}: parameter {} is a plain tensor but its gradient is a local tensor over ranks {} "
                    "(one value per rank); make the parameter a local tensor, or reduce the gradient "
                    "to one value first",
                    name, i, grad.ranks().to_string()));
  if (grad.is_local() && !(grad.ranks() == p.ranks()))
    throw Error(
        fmt::format("{}: parameter {} is a local tensor over ranks {} but its gradient is over ranks {}",
                    name, i, p.ranks().to_string(), grad.ranks().to_string()));
}

std::vector<Tensor> locals_of(const std::vector<DTensor>& params) {
  std::vector<Tensor> locals;
  locals.reserve(params.size());
  for (const DTensor& dt : params) locals.push_back(dt.to_local());
  return locals;
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, const char* name)
    : params_(std::move(params)), dtensor_params_(params_.size()), name_(name) {
  check_params(params_, name_);
}

// A DTensor parameter is updated through its local tensor: every rank's shard is written in place,
// so the DTensor (which holds the same local tensor) sees the new values.
Optimizer::Optimizer(const std::vector<DTensor>& params, const char* name)
    : params_(locals_of(params)), name_(name) {
  check_params(params_, name_);
  dtensor_params_.reserve(params.size());
  for (const DTensor& param : params) dtensor_params_.push_back(std::make_shared<const DTensor>(param));
  check_dtensor_params();
}

// Index by index, a Tensor parameter as the Tensor constructor takes it and a DTensor one as the
// DTensor constructor does, so one list may mix them (a module with some parallelized layers).
Optimizer::Optimizer(const std::vector<nn::Parameter>& params, const char* name) : name_(name) {
  params_.reserve(params.size());
  dtensor_params_.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const nn::Parameter& p = params[i];
    // Checked here, with the index: p.local() would only say that some parameter is undefined.
    if (!p.defined())
      throw Error(
          fmt::format("{}: parameter {} is an undefined nn::Parameter (default-constructed, no value); "
                      "pass parameters that hold a Tensor or a DTensor",
                      name_, i));
    params_.push_back(p.local());
    dtensor_params_.push_back(p.is_dtensor() ? std::make_shared<const DTensor>(p.dtensor()) : nullptr);
  }
  check_params(params_, name_);
  check_dtensor_params();
}

void Optimizer::check_dtensor_params() const {
  for (size_t i = 0; i < dtensor_params_.size(); ++i) {
    if (dtensor_params_[i] == nullptr) continue;
    const Placements& placements = dtensor_params_[i]->placements();
    for (const Placement& p : placements)
      if (p.is_partial())
        throw Error(fmt::format(
            "{}: parameter {} is placed {}: a pending reduction cannot be optimized (its gradient "
            "is Replicate where it is Partial); redistribute it to Shard or Replicate first",
            name_, i, placements_text(placements)));
  }
}

Optimizer::~Optimizer() = default;

void Optimizer::zero_grad(bool set_to_none) {
  for (Tensor& p : params_) p.zero_grad(set_to_none);
}

// A DTensor parameter's gradient is laid out like the parameter, except where per-rank
// contributions are still pending (Partial): those are reduced first, as PyTorch's optimizers do
// when a Partial gradient meets a Replicate parameter. Then each rank's gradient shard updates
// its parameter shard.
Tensor Optimizer::grad_of(size_t i) const {
  const DTensor* dtensor = dtensor_params_[i].get();
  if (dtensor == nullptr) return params_[i].grad();
  if (!dtensor->has_grad()) return Tensor();
  DTensor grad = dtensor->grad();
  if (grad.placements() != dtensor->placements()) {
    NoGradGuard off;
    grad = grad.redistribute(dtensor->placements());
  }
  return grad.to_local();
}

std::vector<Tensor> Optimizer::grads_for_step() const {
  std::vector<Tensor> grads;
  grads.reserve(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    grads.push_back(grad_of(i));
    if (grads.back().defined()) check_grad(params_[i], grads.back(), i, name_);
  }
  return grads;
}

double Optimizer::lr() const { return lr_option(); }

void Optimizer::set_lr(double lr) {
  require_non_negative("lr", lr);
  set_lr_option(lr);
}

void Optimizer::require_non_negative(const char* option, double value) const {
  if (!(value >= 0.0))
    throw Error(fmt::format("{}: invalid {} value {}; expected {} >= 0", name_, option, value, option));
}

const Tensor& Optimizer::checked_state_tensor(size_t i, const std::string& field,
                                              const StateField& value) const {
  const Tensor* t = std::get_if<Tensor>(&value);
  if (t == nullptr || !t->defined())
    throw Error(fmt::format("{}: state field '{}' of parameter {} must be a defined tensor, got {}", name_,
                            field, i, t == nullptr ? "an integer" : "an undefined tensor"));
  const Tensor& p = params_.at(i);
  if (t->dtype() != p.dtype() || !(t->shape() == p.shape()) || t->is_local() != p.is_local() ||
      (p.is_local() && !(t->ranks() == p.ranks())))
    throw Error(fmt::format(
        "{}: state field '{}' of parameter {} is a {}{} tensor of shape {}; expected one like the parameter: "
        "{}{} of "
        "shape {}",
        name_, field, i, t->is_local() ? "local " + t->ranks().to_string() + " " : "", dtype_name(t->dtype()),
        t->shape().to_string(), p.is_local() ? "local " + p.ranks().to_string() + " " : "",
        dtype_name(p.dtype()), p.shape().to_string()));
  return *t;
}

int64_t Optimizer::checked_state_count(size_t i, const std::string& field, const StateField& value) const {
  const int64_t* n = std::get_if<int64_t>(&value);
  if (n == nullptr || *n < 0)
    throw Error(fmt::format("{}: state field '{}' of parameter {} must be an integer >= 0, got {}", name_,
                            field, i, n == nullptr ? "a tensor" : std::to_string(*n)));
  return *n;
}

void Optimizer::check_state_fields(size_t i, const ParamState& state,
                                   const std::vector<std::string>& known) const {
  if (i >= params_.size())
    throw Error(fmt::format("{}: no parameter {}; the optimizer has {}", name_, i, params_.size()));
  for (const auto& [field, value] : state)
    if (std::find(known.begin(), known.end(), field) == known.end())
      throw Error(fmt::format("{}: parameter {} has no state field '{}'; with these options it keeps: {}",
                              name_, i, field,
                              known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
}

}  // namespace tessera::optim

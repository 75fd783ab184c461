// SGD with momentum, dampening, Nesterov momentum and L2 weight decay (PyTorch: torch.optim.SGD).
//
// The update is PyTorch's single-tensor implementation op for op, in the same order, so that each
// intermediate is rounded to the parameter's dtype where PyTorch rounds it: g + wd*p, then
// buf*momentum + (1-dampening)*g, then p - lr*g. Scalars are cast to that dtype, as PyTorch's are.
#include <fmt/format.h>

#include "dispatch/memory_context.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"
#include "tessera/optim.hpp"

namespace tessera::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options)
    : Optimizer(std::move(params), "SGD"), options_(options), momentum_buffers_(this->params().size()) {
  check_options();
}

SGD::SGD(const std::vector<DTensor>& params, SGDOptions options)
    : Optimizer(params, "SGD"), options_(options), momentum_buffers_(this->params().size()) {
  check_options();
}

SGD::SGD(const std::vector<nn::Parameter>& params, SGDOptions options)
    : Optimizer(params, "SGD"), options_(options), momentum_buffers_(this->params().size()) {
  check_options();
}

void SGD::check_options() const {
  require_non_negative("lr", options_.lr);
  require_non_negative("momentum", options_.momentum);
  require_non_negative("weight_decay", options_.weight_decay);
  // Nesterov looks ahead along the momentum buffer: without one (or with a damped one) the
  // formula is not Nesterov's, so PyTorch refuses it.
  if (options_.nesterov && (options_.momentum <= 0 || options_.dampening != 0))
    throw Error(
        fmt::format("SGD: nesterov momentum requires momentum > 0 and dampening == 0, but momentum is {} and "
                    "dampening is {}",
                    options_.momentum, options_.dampening));
}

void SGD::step() {
  // The update is not part of any model's computation: nothing is recorded, and writing into
  // parameters that require grad is allowed.
  NoGradGuard no_grad;
  // What the step allocates (its state, and the temporaries of the update) is the optimizer's
  // memory, as a memory counter reports it.
  const dispatch::MemoryCategoryBinding category(&optimizer_state_category());
  const SGDOptions& o = options_;
  const std::vector<Tensor> grads = grads_for_step();
  for (size_t i = 0; i < params().size(); ++i) {
    const Tensor& grad = grads[i];
    if (!grad.defined()) continue;  // not used by the last backward: left as it is (PyTorch)
    Tensor param = params()[i];
    Tensor g = o.maximize ? -grad : grad;
    if (o.weight_decay != 0) g = g + o.weight_decay * param;
    if (o.momentum != 0) {
      Tensor& buf = momentum_buffers_[i];
      // The first step starts the buffer at the (undamped) gradient; a copy, since the gradient
      // may be accumulated into in place later.
      buf = buf.defined() ? buf * o.momentum + (1 - o.dampening) * g : g.clone();
      g = o.nesterov ? g + o.momentum * buf : buf;
    }
    // copy_ writes the parameter's own storage, so every handle to it sees the new values.
    param.copy_(param - o.lr * g);
  }
}

Optimizer::ParamState SGD::param_state(size_t i) const {
  ParamState state;
  if (momentum_buffers_.at(i).defined()) state["momentum_buffer"] = momentum_buffers_[i];
  return state;
}

void SGD::set_param_state(size_t i, const ParamState& state) {
  check_state_fields(
      i, state,
      options_.momentum != 0 ? std::vector<std::string>{"momentum_buffer"} : std::vector<std::string>{});
  if (auto it = state.find("momentum_buffer"); it != state.end())
    momentum_buffers_[i] = checked_state_tensor(i, it->first, it->second);
}

void SGD::init_state() {
  if (options_.momentum == 0) return;  // no buffer is kept
  NoGradGuard no_grad;
  const dispatch::MemoryCategoryBinding category(&optimizer_state_category());
  for (size_t i = 0; i < params().size(); ++i)
    if (!momentum_buffers_[i].defined()) momentum_buffers_[i] = zeros_like(params()[i]);
}

}  // namespace tessera::optim

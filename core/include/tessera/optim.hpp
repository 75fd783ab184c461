// Optimizers (PyTorch: torch.optim): SGD and AdamW with PyTorch's defaults and update formulas,
// over dense tensors, local tensors, DTensors and module parameters (nn::Parameter, which holds
// either). A step reads each parameter's grad() and updates
// the parameter in place (not recorded by autograd); a parameter without a gradient is skipped, as
// in PyTorch. State (momentum buffers, moments) has the parameter's layout: per rank for a local
// tensor, sharded like the parameter for a DTensor.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/nn/parameter.hpp"
#include "tessera/tensor.hpp"

namespace tessera::optim {

namespace lr_scheduler {
class LRScheduler;
}

class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual void step() = 0;
  // Clears every parameter's gradient (PyTorch's default drops it; set_to_none=false zeroes it).
  void zero_grad(bool set_to_none = true);
  // The parameters as tensors: a DTensor parameter appears as its local tensor.
  const std::vector<Tensor>& params() const { return params_; }
  // "SGD", "AdamW": what error messages call this optimizer.
  const char* name() const { return name_; }

  // The learning rate of the one parameter group (PyTorch: param_groups[0]["lr"]). step() reads
  // it each time, so set_lr (what a learning-rate scheduler calls) takes effect at the next step.
  // set_lr refuses a negative or NaN value, as the constructor does.
  double lr() const;
  void set_lr(double lr);
  // The learning rate schedulers start from (PyTorch: param_groups[0]["initial_lr"]): the first
  // scheduler constructed on this optimizer records the lr of that moment and later ones keep it,
  // as PyTorch's setdefault does. Before any scheduler it is the current lr, which is the lr the
  // optimizer was constructed with unless set_lr changed it.
  double initial_lr() const { return initial_lr_.has_value() ? *initial_lr_ : lr(); }

  // Parameter i's state (PyTorch: optimizer.state[p]) by field name: tensors laid out like
  // params()[i] (a DTensor parameter's local tensor), and integer counters. Empty until the
  // parameter's first step (or init_state).
  using StateField = std::variant<Tensor, int64_t>;
  using ParamState = std::map<std::string, StateField>;
  virtual ParamState param_state(size_t i) const = 0;
  // Replaces the fields of parameter i's state that `state` names (what checkpoints load). Each
  // must be a field this optimizer keeps, of its kind; a tensor must match params()[i] in dtype,
  // shape and ranks. An Error names the optimizer, the parameter index and the field.
  virtual void set_param_state(size_t i, const ParamState& state) = 0;
  // Gives every parameter without state the state its first step would make, as zeros (PyTorch's
  // checkpointing does the same before it reads a fresh optimizer's state).
  virtual void init_state() = 0;
  // The DTensor parameter i was given as; null for a Tensor parameter.
  const DTensor* dtensor_param(size_t i) const { return dtensor_params_.at(i).get(); }

 protected:
  Optimizer(std::vector<Tensor> params, const char* name);
  Optimizer(const std::vector<DTensor>& params, const char* name);
  // A module's parameters (module->parameters()): each is optimized as the Tensor or DTensor its
  // slot holds now. A parallel style that later puts a new value in the slot is not followed (as
  // in PyTorch, where the optimizer keeps the tensor objects it was given): build the optimizer
  // after parallelizing.
  Optimizer(const std::vector<nn::Parameter>& params, const char* name);
  // The subclass keeps the lr in its options (options().lr): the one value lr() reads and
  // set_lr writes, so the two never disagree.
  virtual double lr_option() const = 0;
  virtual void set_lr_option(double lr) = 0;
  // The gradient to use for parameter i, with the parameter's layout; undefined when it has none.
  Tensor grad_of(size_t i) const;
  // grad_of(i) for every parameter, each checked against its parameter (dtype, shape, plain or
  // local, ranks): what step() uses. All are checked before a step changes anything.
  std::vector<Tensor> grads_for_step() const;
  // The memory category of optimizer state ("optimizer_state").
  static const std::string& optimizer_state_category();
  // An Error naming this optimizer, the option and its value unless value >= 0 (NaN fails too).
  void require_non_negative(const char* option, double value) const;
  // For set_param_state: the tensor of field `field` for parameter i, checked against the
  // parameter (an Error naming both when it is not a tensor or does not match).
  const Tensor& checked_state_tensor(size_t i, const std::string& field, const StateField& value) const;
  // The same for an integer counter that must be >= 0.
  int64_t checked_state_count(size_t i, const std::string& field, const StateField& value) const;
  // An Error naming the unknown fields of `state` and the fields `known` this optimizer keeps.
  void check_state_fields(size_t i, const ParamState& state, const std::vector<std::string>& known) const;

 private:
  void check_dtensor_params() const;
  friend class lr_scheduler::LRScheduler;  // records initial_lr_ when it is first attached

  std::vector<Tensor> params_;
  std::vector<std::shared_ptr<const DTensor>> dtensor_params_;  // null for a plain parameter
  const char* name_;                  // "SGD", "AdamW": the prefix of every error message
  std::optional<double> initial_lr_;  // set by the first scheduler attached
};

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
};

class SGD final : public Optimizer {
 public:
  explicit SGD(std::vector<Tensor> params, SGDOptions options = {});
  explicit SGD(const std::vector<DTensor>& params, SGDOptions options = {});
  explicit SGD(const std::vector<nn::Parameter>& params, SGDOptions options = {});
  // Braced lists: {w, b} of Tensors takes the Tensor list, {dt} the DTensor list, and a list
  // mixing them the parameter list (without these, {w} would match every vector above).
  explicit SGD(std::initializer_list<Tensor> params, SGDOptions options = {})
      : SGD(std::vector<Tensor>(params), options) {}
  explicit SGD(std::initializer_list<DTensor> params, SGDOptions options = {})
      : SGD(std::vector<DTensor>(params), options) {}
  explicit SGD(std::initializer_list<nn::Parameter> params, SGDOptions options = {})
      : SGD(std::vector<nn::Parameter>(params), options) {}
  void step() override;
  // options().lr is the current lr (set_lr writes it).
  const SGDOptions& options() const { return options_; }
  // "momentum_buffer" (when momentum != 0).
  ParamState param_state(size_t i) const override;
  void set_param_state(size_t i, const ParamState& state) override;
  void init_state() override;

 private:
  void check_options() const;
  double lr_option() const override { return options_.lr; }
  void set_lr_option(double lr) override { options_.lr = lr; }

  SGDOptions options_;
  std::vector<Tensor> momentum_buffers_;  // undefined until a parameter's first step
};

struct AdamWOptions {
  double lr = 1e-3;
  std::pair<double, double> betas{0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
  bool maximize = false;
};

class AdamW final : public Optimizer {
 public:
  explicit AdamW(std::vector<Tensor> params, AdamWOptions options = {});
  explicit AdamW(const std::vector<DTensor>& params, AdamWOptions options = {});
  explicit AdamW(const std::vector<nn::Parameter>& params, AdamWOptions options = {});
  // Braced lists: {w, b} of Tensors takes the Tensor list, {dt} the DTensor list, and a list
  // mixing them the parameter list (without these, {w} would match every vector above).
  explicit AdamW(std::initializer_list<Tensor> params, AdamWOptions options = {})
      : AdamW(std::vector<Tensor>(params), options) {}
  explicit AdamW(std::initializer_list<DTensor> params, AdamWOptions options = {})
      : AdamW(std::vector<DTensor>(params), options) {}
  explicit AdamW(std::initializer_list<nn::Parameter> params, AdamWOptions options = {})
      : AdamW(std::vector<nn::Parameter>(params), options) {}
  void step() override;
  // options().lr is the current lr (set_lr writes it).
  const AdamWOptions& options() const { return options_; }
  // "step" (int64), "exp_avg", "exp_avg_sq" and, with amsgrad, "max_exp_avg_sq".
  ParamState param_state(size_t i) const override;
  void set_param_state(size_t i, const ParamState& state) override;
  void init_state() override;

 private:
  void check_options() const;
  double lr_option() const override { return options_.lr; }
  void set_lr_option(double lr) override { options_.lr = lr; }

  struct State {
    int64_t step = 0;
    Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  AdamWOptions options_;
  std::vector<State> state_;
};

}  // namespace tessera::optim

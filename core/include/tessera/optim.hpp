// Optimizers (PyTorch: torch.optim): SGD and AdamW with PyTorch's defaults and update formulas,
// over dense tensors, local tensors and DTensors. A step reads each parameter's grad() and updates
// the parameter in place (not recorded by autograd); a parameter without a gradient is skipped, as
// in PyTorch. State (momentum buffers, moments) has the parameter's layout: per rank for a local
// tensor, sharded like the parameter for a DTensor.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "tessera/dtensor.hpp"
#include "tessera/tensor.hpp"

namespace tessera::optim {

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

 protected:
  Optimizer(std::vector<Tensor> params, const char* name);
  Optimizer(const std::vector<DTensor>& params, const char* name);
  // The gradient to use for parameter i, with the parameter's layout; undefined when it has none.
  Tensor grad_of(size_t i) const;
  // grad_of(i) for every parameter, each checked against its parameter (dtype, shape, plain or
  // local, ranks): what step() uses. All are checked before a step changes anything.
  std::vector<Tensor> grads_for_step() const;
  // An Error naming this optimizer, the option and its value unless value >= 0 (NaN fails too).
  void require_non_negative(const char* option, double value) const;

 private:
  std::vector<Tensor> params_;
  std::vector<std::shared_ptr<const DTensor>> dtensor_params_;  // null for a plain parameter
  const char* name_;  // "SGD", "AdamW": the prefix of every error message
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
  void step() override;
  const SGDOptions& options() const { return options_; }

 private:
  void check_options() const;

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
  void step() override;
  const AdamWOptions& options() const { return options_; }

 private:
  void check_options() const;

  struct State {
    int64_t step = 0;
    Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  AdamWOptions options_;
  std::vector<State> state_;
};

}  // namespace tessera::optim

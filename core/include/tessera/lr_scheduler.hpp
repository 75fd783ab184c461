// Learning-rate schedulers (PyTorch: torch.optim.lr_scheduler) over an optimizer's one parameter
// group, with PyTorch's semantics step for step:
//  - constructing a scheduler records the optimizer's initial_lr (the first scheduler on an
//    optimizer does; later ones keep it), sets last_epoch() to 0 and writes the epoch-0 lr into the
//    optimizer;
//  - step() advances last_epoch() by one and writes the next lr (call it after optimizer.step());
//  - get_last_lr() is the lr the last construction or step wrote, one entry per parameter group.
// LinearLR and CosineAnnealingLR compute each lr from the optimizer's current lr (PyTorch's
// chainable form), so schedulers stepped one after the other on one optimizer compose, and the
// values are PyTorch's to the last bit (its closed forms round differently). A scheduler holds a
// reference to its optimizer, which must outlive it. A schedule that gives a negative or NaN lr
// is an error naming the scheduler, the epoch and the value.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tessera/optim.hpp"

namespace tessera::optim::lr_scheduler {

class LRScheduler {
 public:
  virtual ~LRScheduler();
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances one epoch and writes that epoch's lr into the optimizer.
  virtual void step();
  // The lr written last, one entry per parameter group (here always one).
  std::vector<double> get_last_lr() const { return {last_lr_}; }
  int64_t last_epoch() const { return last_epoch_; }
  // The optimizer's initial_lr when this scheduler was made: what the schedules scale.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() const { return *optimizer_; }
  // "LinearLR", ...: what error messages call this scheduler.
  const char* name() const { return name_; }

 protected:
  // Binds the optimizer and records its initial_lr (PyTorch's setdefault). The subclass calls
  // initial_step() once its own options are set, as the last thing its constructor does.
  LRScheduler(Optimizer& optimizer, const char* name);
  // SequentialLR's: binds the optimizer only (PyTorch's SequentialLR does not run the base
  // constructor either).
  struct BindOnly {};
  LRScheduler(Optimizer& optimizer, const char* name, BindOnly);

  // PyTorch's _initial_step: step() with initial() true.
  void initial_step();
  // The lr for last_epoch() in the chainable form (from the optimizer's current lr where the
  // schedule is recursive); called by step() after last_epoch() advanced.
  virtual double get_lr() const = 0;
  // The lr for last_epoch() from base_lrs() alone, for schedules that have one; SequentialLR uses
  // it to restart a scheduler at epoch 0 when its milestone is reached (PyTorch's step(0)).
  virtual std::optional<double> closed_form_lr() const { return std::nullopt; }
  // PyTorch's _update_lr(0): last_epoch() to 0, then the closed form where there is one.
  void restart_at_epoch_zero();
  // Whether the step in progress is the one made at construction.
  bool initial() const { return initial_; }
  double base_lr() const { return base_lrs_.front(); }
  // Writes lr into the optimizer (an error if it is negative or NaN) and remembers it.
  void write_lr(double lr);

 private:
  friend class SequentialLR;  // undoes its schedulers' initial steps and restarts them

  Optimizer* optimizer_;
  const char* name_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  double last_lr_ = 0.0;
  bool initial_ = false;
};

// lr = base_lr * lr_lambda(last_epoch).
class LambdaLR final : public LRScheduler {
 public:
  LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda);

 private:
  double get_lr() const override;
  std::function<double(int64_t)> lr_lambda_;
};

struct LinearLROptions {
  double start_factor = 1.0 / 3;  // in (0, 1]
  double end_factor = 1.0;        // in [0, 1]
  int64_t total_iters = 5;        // >= 1: epochs from start_factor to end_factor
};

// Scales the initial lr by a factor going linearly from start_factor at epoch 0 to end_factor at
// epoch total_iters, then constant.
class LinearLR final : public LRScheduler {
 public:
  explicit LinearLR(Optimizer& optimizer, LinearLROptions options = {});
  const LinearLROptions& options() const { return options_; }

 private:
  double get_lr() const override;
  std::optional<double> closed_form_lr() const override;
  LinearLROptions options_;
};

// eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, continuing past T_max as a
// cosine (back up to base_lr at 2 T_max), as PyTorch's recursive form does.
class CosineAnnealingLR final : public LRScheduler {
 public:
  // T_max >= 1, eta_min >= 0.
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);
  int64_t T_max() const { return T_max_; }
  double eta_min() const { return eta_min_; }

 private:
  double get_lr() const override;
  std::optional<double> closed_form_lr() const override;
  int64_t T_max_;
  double eta_min_;
};

// Runs schedulers[0] until milestones[0], then schedulers[1] (restarted at its epoch 0) until
// milestones[1], and so on. The schedulers must be bound to `optimizer` and constructed before
// (their construction steps are undone: the optimizer's lr goes back to its initial_lr and the
// scheduler running at epoch 0 makes its initial step again). Milestones: one fewer than the
// schedulers, strictly increasing, >= 0. A SequentialLR cannot be one of the schedulers.
class SequentialLR final : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  void step() override;
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }
  const std::vector<int64_t>& milestones() const { return milestones_; }

 private:
  double get_lr() const override;  // never called: step() delegates
  // The scheduler that runs at `epoch`: the number of milestones <= epoch (bisect_right).
  size_t scheduler_at(int64_t epoch) const;

  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace tessera::optim::lr_scheduler

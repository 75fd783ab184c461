// SequentialLR: schedulers one after another, switching at milestones (PyTorch:
// lr_scheduler.SequentialLR), with PyTorch's construction: the lr goes back to the optimizer's
// initial_lr, the construction steps of the schedulers are undone, and the scheduler that runs at
// epoch 0 makes its initial step again.
#include <fmt/format.h>

#include <algorithm>

#include "tessera/errors.hpp"
#include "tessera/lr_scheduler.hpp"

namespace tessera::optim::lr_scheduler {
namespace {

void check_schedulers(const Optimizer& optimizer,
                      const std::vector<std::shared_ptr<LRScheduler>>& schedulers) {
  if (schedulers.empty()) throw Error("SequentialLR: got no schedulers; expected at least one");
  for (size_t i = 0; i < schedulers.size(); ++i) {
    const LRScheduler* scheduler = schedulers[i].get();
    if (scheduler == nullptr) throw Error(fmt::format("SequentialLR: scheduler {} is null", i));
    if (&scheduler->optimizer() != &optimizer)
      throw Error(
          fmt::format("SequentialLR: scheduler {} ({}) is bound to another optimizer (a {}) than the {} "
                      "given to SequentialLR; every scheduler must drive the same optimizer",
                      i, scheduler->name(), scheduler->optimizer().name(), optimizer.name()));
    // PyTorch fails when it restarts one at its milestone (a SequentialLR has no lr of its own).
    if (dynamic_cast<const SequentialLR*>(scheduler) != nullptr)
      throw Error(
          fmt::format("SequentialLR: scheduler {} is a SequentialLR; nesting them is not supported: list "
                      "its schedulers and milestones in this one instead",
                      i));
    for (size_t j = 0; j < i; ++j)
      if (schedulers[j] == schedulers[i])
        throw Error(
            fmt::format("SequentialLR: scheduler {} is the same object as scheduler {}; it would run in "
                        "two phases with one epoch counter",
                        i, j));
  }
}

void check_milestones(const std::vector<int64_t>& milestones, size_t scheduler_count) {
  if (milestones.size() != scheduler_count - 1)
    throw Error(
        fmt::format("SequentialLR: got {} schedulers and {} milestones; expected one milestone fewer than "
                    "schedulers (each milestone is the epoch where the next scheduler starts)",
                    scheduler_count, milestones.size()));
  for (size_t i = 0; i < milestones.size(); ++i) {
    if (milestones[i] < 0)
      throw Error(fmt::format("SequentialLR: milestone {} is {}; expected epochs >= 0", i, milestones[i]));
    // An equal or earlier milestone would leave the scheduler between them never running.
    if (i > 0 && milestones[i] <= milestones[i - 1])
      throw Error(
          fmt::format("SequentialLR: milestones must be strictly increasing, but milestone {} is {} after "
                      "milestone {} = {}",
                      i, milestones[i], i - 1, milestones[i - 1]));
  }
}

}  // namespace

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer, "SequentialLR", BindOnly{}),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  check_schedulers(optimizer, schedulers_);
  check_milestones(milestones_, schedulers_.size());
  last_epoch_ = 0;
  // The schedulers were made (each wrote its epoch-0 lr) before this one: start over from the lr
  // they all scale, with every scheduler one epoch back, and only the first to run steps again.
  optimizer.set_lr(optimizer.initial_lr());
  for (const auto& scheduler : schedulers_) --scheduler->last_epoch_;
  LRScheduler& first = *schedulers_[scheduler_at(0)];
  first.initial_step();
  last_lr_ = first.last_lr_;
}

size_t SequentialLR::scheduler_at(int64_t epoch) const {
  return static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), epoch) -
                             milestones_.begin());
}

void SequentialLR::step() {
  ++last_epoch_;
  const size_t index = scheduler_at(last_epoch_);
  LRScheduler& scheduler = *schedulers_[index];
  // At its milestone a scheduler starts over at its epoch 0 from the initial lr (its closed form);
  // after that it steps as it would alone.
  if (index > 0 && milestones_[index - 1] == last_epoch_) {
    scheduler.restart_at_epoch_zero();
  } else {
    scheduler.step();
  }
  last_lr_ = scheduler.last_lr_;
}

double SequentialLR::get_lr() const {
  throw Error("SequentialLR: has no schedule of its own; its step() runs the scheduler of the current phase");
}

}  // namespace tessera::optim::lr_scheduler

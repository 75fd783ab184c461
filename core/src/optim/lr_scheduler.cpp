// LRScheduler: what every learning-rate scheduler shares (PyTorch's LRScheduler base class): the
// optimizer's initial_lr, last_epoch, the step that writes the next lr, and get_last_lr.
#include "tessera/lr_scheduler.hpp"

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera::optim::lr_scheduler {

LRScheduler::LRScheduler(Optimizer& optimizer, const char* name) : optimizer_(&optimizer), name_(name) {
  // The first scheduler on an optimizer records the lr it starts from; later ones (the parts of a
  // SequentialLR, made one after the other) scale that same lr, not what an earlier one wrote.
  if (!optimizer.initial_lr_.has_value()) optimizer.initial_lr_ = optimizer.lr();
  base_lrs_ = {*optimizer.initial_lr_};
}

LRScheduler::LRScheduler(Optimizer& optimizer, const char* name, BindOnly)
    : optimizer_(&optimizer), name_(name) {}

LRScheduler::~LRScheduler() = default;

void LRScheduler::initial_step() {
  initial_ = true;
  try {
    step();
  } catch (...) {
    initial_ = false;
    throw;
  }
  initial_ = false;
}

void LRScheduler::step() {
  ++last_epoch_;
  write_lr(get_lr());
}

void LRScheduler::restart_at_epoch_zero() {
  last_epoch_ = 0;
  const std::optional<double> closed = closed_form_lr();
  write_lr(closed.has_value() ? *closed : get_lr());
}

void LRScheduler::write_lr(double lr) {
  if (!(lr >= 0.0))
    throw Error(fmt::format("{}: the schedule gives lr {} at epoch {} (optimizer {}); expected lr >= 0",
                            name_, lr, last_epoch_, optimizer_->name()));
  optimizer_->set_lr(lr);
  last_lr_ = optimizer_->lr();
}

}  // namespace tessera::optim::lr_scheduler

// LinearLR: a factor of the initial lr going linearly from start_factor to end_factor over
// total_iters epochs (PyTorch: lr_scheduler.LinearLR). The arithmetic is PyTorch's, operation for
// operation, so the doubles match its Python floats exactly.
#include <fmt/format.h>

#include <algorithm>

#include "tessera/errors.hpp"
#include "tessera/lr_scheduler.hpp"

namespace tessera::optim::lr_scheduler {

LinearLR::LinearLR(Optimizer& optimizer, LinearLROptions options)
    : LRScheduler(optimizer, "LinearLR"), options_(options) {
  const LinearLROptions& o = options_;
  if (!(o.start_factor > 0.0 && o.start_factor <= 1.0))
    throw Error(fmt::format("LinearLR: start_factor is {}; expected 0 < start_factor <= 1", o.start_factor));
  if (!(o.end_factor >= 0.0 && o.end_factor <= 1.0))
    throw Error(fmt::format("LinearLR: end_factor is {}; expected 0 <= end_factor <= 1", o.end_factor));
  // PyTorch takes any total_iters, but 0 divides by zero when a SequentialLR restarts this
  // scheduler, and a negative count means nothing.
  if (o.total_iters < 1)
    throw Error(
        fmt::format("LinearLR: total_iters is {}; expected total_iters >= 1 (the epochs from start_factor "
                    "to end_factor)",
                    o.total_iters));
  initial_step();
}

// Each epoch multiplies the current lr by the ratio of this epoch's factor to the last one's.
double LinearLR::get_lr() const {
  const LinearLROptions& o = options_;
  const double lr = optimizer().lr();
  const int64_t epoch = last_epoch();
  if (epoch == 0) return lr * o.start_factor;
  if (initial() || epoch > o.total_iters) return lr;
  return lr * (1.0 + (o.end_factor - o.start_factor) /
                         (static_cast<double>(o.total_iters) * o.start_factor +
                          static_cast<double>(epoch - 1) * (o.end_factor - o.start_factor)));
}

std::optional<double> LinearLR::closed_form_lr() const {
  const LinearLROptions& o = options_;
  return base_lr() * (o.start_factor + (o.end_factor - o.start_factor) *
                                           static_cast<double>(std::min(o.total_iters, last_epoch())) /
                                           static_cast<double>(o.total_iters));
}

}  // namespace tessera::optim::lr_scheduler

// CosineAnnealingLR (PyTorch: lr_scheduler.CosineAnnealingLR): the recursive form PyTorch's step()
// uses, operation for operation, so the doubles match its Python floats exactly. It differs from
// the closed form by a few ulps after some epochs, and more past T_max.
#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "tessera/errors.hpp"
#include "tessera/lr_scheduler.hpp"

namespace tessera::optim::lr_scheduler {

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer, "CosineAnnealingLR"), T_max_(T_max), eta_min_(eta_min) {
  // T_max = 0 divides by zero (PyTorch fails at the first step); a negative period means nothing.
  if (T_max < 1)
    throw Error(fmt::format(
        "CosineAnnealingLR: T_max is {}; expected T_max >= 1 (the epochs of half a period)", T_max));
  if (!(eta_min >= 0.0))
    throw Error(
        fmt::format("CosineAnnealingLR: eta_min is {}; expected eta_min >= 0 (the lowest lr)", eta_min));
  initial_step();
}

double CosineAnnealingLR::get_lr() const {
  constexpr double pi = std::numbers::pi;
  const double lr = optimizer().lr();
  const int64_t epoch = last_epoch();
  const auto t_max = static_cast<double>(T_max_);
  if (initial()) return lr;
  // At the epoch after each minimum the ratio below would be 0/0: PyTorch adds the step instead.
  // (Python's % and C++'s differ in sign for negative operands, never in whether the result is 0.)
  if ((epoch - 1 - T_max_) % (2 * T_max_) == 0)
    return lr + (base_lr() - eta_min_) * (1 - std::cos(pi / t_max)) / 2;
  return (1 + std::cos(pi * static_cast<double>(epoch) / t_max)) /
             (1 + std::cos(pi * static_cast<double>(epoch - 1) / t_max)) * (lr - eta_min_) +
         eta_min_;
}

std::optional<double> CosineAnnealingLR::closed_form_lr() const {
  constexpr double pi = std::numbers::pi;
  return eta_min_ + (base_lr() - eta_min_) *
                        (1 + std::cos(pi * static_cast<double>(last_epoch()) / static_cast<double>(T_max_))) /
                        2;
}

}  // namespace tessera::optim::lr_scheduler

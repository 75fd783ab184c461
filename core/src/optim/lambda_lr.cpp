// LambdaLR: the initial lr times a function of the epoch (PyTorch: lr_scheduler.LambdaLR).
#include "tessera/errors.hpp"
#include "tessera/lr_scheduler.hpp"

namespace tessera::optim::lr_scheduler {

LambdaLR::LambdaLR(Optimizer& optimizer, std::function<double(int64_t)> lr_lambda)
    : LRScheduler(optimizer, "LambdaLR"), lr_lambda_(std::move(lr_lambda)) {
  if (!lr_lambda_)
    throw Error("LambdaLR: lr_lambda is empty; pass a function from the epoch to a factor of the lr");
  initial_step();
}

// Not recursive: every epoch's lr comes from the initial lr, so restarting at epoch 0 needs no
// closed form of its own.
double LambdaLR::get_lr() const { return base_lr() * lr_lambda_(last_epoch()); }

}  // namespace tessera::optim::lr_scheduler

// nn::Dropout: random zeroing in training mode, the identity in eval mode.
#include <fmt/format.h>

#include "tessera/errors.hpp"
#include "tessera/nn/functional.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options_in) : Module("Dropout"), options(options_in) {
  if (!(options.p() >= 0.0 && options.p() <= 1.0))
    throw Error(fmt::format("nn::Dropout: p={} must be in [0, 1]", options.p()));
}

Value DropoutImpl::forward(const Value& x) {
  return run_forward({x}, [this](const std::vector<Value>& in) {
    return functional::dropout(in.at(0), options.p(), is_training());
  });
}

std::string DropoutImpl::extra_repr() const { return fmt::format("p={}", options.p()); }

}  // namespace tessera::nn

// nn::Linear: y = x W^T + b.
#include <fmt/format.h>

#include <cmath>

#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/nn/functional.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::nn {
namespace {

// U(-bound, bound), computed in float32 from the default generator and cast (PyTorch draws in the
// parameter's dtype; for float32, the default, the two agree).
Tensor uniform_parameter(const Shape& shape, double bound, DType dtype, const std::string& backend) {
  const TensorOptions options = TensorOptions(kFloat32).backend(backend);
  return ((rand(shape, options) * 2.0 - 1.0) * bound).to(dtype);
}

}  // namespace

LinearImpl::LinearImpl(const LinearOptions& options_in) : Module("Linear"), options(options_in) {
  if (options.in_features() < 0 || options.out_features() < 0)
    throw Error(fmt::format("nn::Linear: in_features={} and out_features={} must be >= 0",
                            options.in_features(), options.out_features()));
  // PyTorch's reset_parameters: kaiming_uniform_(a=sqrt(5)) gives bound 1/sqrt(fan_in) for the
  // weight, and the bias uses the same bound.
  const double bound =
      options.in_features() > 0 ? 1.0 / std::sqrt(static_cast<double>(options.in_features())) : 0.0;
  weight = register_parameter("weight", uniform_parameter({options.out_features(), options.in_features()},
                                                          bound, options.dtype(), options.backend()));
  if (options.bias())
    bias = register_parameter(
        "bias", uniform_parameter({options.out_features()}, bound, options.dtype(), options.backend()));
}

Value LinearImpl::forward(const Value& x) {
  return run_forward({x}, [this](const std::vector<Value>& in) {
    return functional::linear(in.at(0), weight, bias.defined() ? Value(bias) : Value());
  });
}

std::string LinearImpl::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", options.in_features(),
                     options.out_features(), options.bias() ? "true" : "false");
}

}  // namespace tessera::nn

// nn::LayerNorm and nn::RMSNorm over the trailing normalized_shape dims.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/nn/functional.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::nn {
namespace {

void check_normalized_shape(const char* module, const std::vector<int64_t>& shape) {
  if (shape.empty())
    throw Error(
        fmt::format("nn::{}: normalized_shape is empty; name the trailing dims to normalize", module));
  for (int64_t size : shape)
    if (size < 0) throw Error(fmt::format("nn::{}: normalized_shape has a negative size {}", module, size));
}

std::string norm_repr(const std::vector<int64_t>& shape, const std::string& eps, bool affine) {
  return fmt::format("[{}], eps={}, elementwise_affine={}", fmt::join(shape, ", "), eps,
                     affine ? "true" : "false");
}

}  // namespace

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options_in) : Module("LayerNorm"), options(options_in) {
  check_normalized_shape("LayerNorm", options.normalized_shape());
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ones(options.normalized_shape(),
                                               TensorOptions(options.dtype()).backend(options.backend())));
    if (options.bias())
      bias = register_parameter("bias", zeros(options.normalized_shape(),
                                              TensorOptions(options.dtype()).backend(options.backend())));
  }
}

Value LayerNormImpl::forward(const Value& x) {
  return run_forward({x}, [this](const std::vector<Value>& in) {
    return functional::layer_norm(in.at(0), options.normalized_shape(),
                                  weight.defined() ? Value(weight) : Value(),
                                  bias.defined() ? Value(bias) : Value(), options.eps());
  });
}

std::string LayerNormImpl::extra_repr() const {
  return norm_repr(options.normalized_shape(), fmt::format("{}", options.eps()),
                   options.elementwise_affine());
}

RMSNormImpl::RMSNormImpl(const RMSNormOptions& options_in) : Module("RMSNorm"), options(options_in) {
  check_normalized_shape("RMSNorm", options.normalized_shape());
  if (options.eps() && !(*options.eps() >= 0.0))
    throw Error(fmt::format("nn::RMSNorm: eps={} must be >= 0", *options.eps()));
  if (options.elementwise_affine())
    weight = register_parameter("weight", ones(options.normalized_shape(),
                                               TensorOptions(options.dtype()).backend(options.backend())));
}

Value RMSNormImpl::forward(const Value& x) {
  return run_forward({x}, [this](const std::vector<Value>& in) {
    return functional::rms_norm(in.at(0), options.normalized_shape(),
                                weight.defined() ? Value(weight) : Value(), options.eps());
  });
}

std::string RMSNormImpl::extra_repr() const {
  return norm_repr(options.normalized_shape(), options.eps() ? fmt::format("{}", *options.eps()) : "None",
                   options.elementwise_affine());
}

}  // namespace tessera::nn

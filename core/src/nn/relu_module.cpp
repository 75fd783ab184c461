// nn::ReLU: the activation as a module, so that it can sit in a Sequential.
#include "tessera/nn/functional.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::nn {

Value ReLUImpl::forward(const Value& x) {
  return run_forward({x}, [](const std::vector<Value>& in) { return functional::relu(in.at(0)); });
}

}  // namespace tessera::nn

#include "autograd/saved_tensor.hpp"

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera::autograd {

SavedTensor::SavedTensor(const Tensor& t, bool is_output)
    : value_(is_output ? t.detach() : t), version_(t.defined() ? t.version() : 0) {}

Tensor SavedTensor::unpack(const char* node) const {
  if (value_.defined() && value_.version() != version_)
    throw Error(fmt::format(
        "backward of {}: a tensor it saved (shape {}, {}) was modified by an in-place operation since: it is "
        "at "
        "version {}, but was saved at version {}. Write to a clone() instead, or modify it after backward",
        node, value_.shape().to_string(), dtype_name(value_.dtype()), value_.version(), version_));
  return value_;
}

}  // namespace tessera::autograd

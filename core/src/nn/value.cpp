// A module's input or output: a Tensor or a DTensor; see tessera/nn/value.hpp.
#include "tessera/nn/value.hpp"

#include "tessera/errors.hpp"

namespace tessera::nn {

Value::Value(const Parameter& parameter) {
  if (parameter.is_dtensor()) {
    value_ = parameter.dtensor();
  } else {
    value_ = parameter.tensor();
  }
}

bool Value::defined() const { return is_dtensor() || std::get<Tensor>(value_).defined(); }

const Tensor& Value::tensor() const {
  if (const auto* tensor = std::get_if<Tensor>(&value_)) return *tensor;
  throw Error("nn::Value::tensor: the value is a " + kind() + ", not a Tensor; use dtensor() or local()");
}

const DTensor& Value::dtensor() const {
  if (const auto* dtensor = std::get_if<DTensor>(&value_)) return *dtensor;
  throw Error("nn::Value::dtensor: the value is a " + kind() + ", not a DTensor; use tensor()");
}

const Tensor& Value::local() const {
  if (const auto* dtensor = std::get_if<DTensor>(&value_)) return dtensor->to_local();
  return std::get<Tensor>(value_);
}

Shape Value::shape() const { return is_dtensor() ? dtensor().shape() : tensor().sizes(); }

int64_t Value::size(int64_t dim) const { return is_dtensor() ? dtensor().size(dim) : tensor().size(dim); }

int64_t Value::dim() const { return is_dtensor() ? dtensor().dim() : tensor().dim(); }

DType Value::dtype() const { return local().dtype(); }

std::string Value::kind() const {
  if (is_dtensor()) return "DTensor(" + placements_text(dtensor().placements()) + ")";
  const Tensor& value = std::get<Tensor>(value_);
  if (!value.defined()) return "undefined Tensor";
  return value.is_local() ? "local Tensor" : "Tensor";
}

}  // namespace tessera::nn

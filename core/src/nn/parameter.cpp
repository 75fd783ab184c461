// A parameter slot shared by its handles; see tessera/nn/parameter.hpp.
#include "tessera/nn/parameter.hpp"

#include <sstream>

#include "tessera/errors.hpp"

namespace tessera::nn {

Parameter::Parameter(Tensor value) {
  if (!value.defined()) throw Error("nn::Parameter: the tensor is undefined; a parameter needs a value");
  slot_ = std::make_shared<Slot>(Slot{std::move(value)});
}

Parameter::Parameter(DTensor value) : slot_(std::make_shared<Slot>(Slot{std::move(value)})) {}

const Parameter::Slot& Parameter::slot(const char* what) const {
  if (!slot_)
    throw Error(std::string("nn::Parameter::") + what + ": the parameter is undefined (default-constructed)");
  return *slot_;
}

bool Parameter::defined() const { return slot_ != nullptr; }

bool Parameter::is_dtensor() const { return std::holds_alternative<DTensor>(slot("is_dtensor").value); }

const Tensor& Parameter::tensor() const {
  const auto& value = slot("tensor").value;
  if (const auto* tensor = std::get_if<Tensor>(&value)) return *tensor;
  throw Error("nn::Parameter::tensor: the parameter is a DTensor (" +
              placements_text(std::get<DTensor>(value).placements()) + "); use dtensor() or local()");
}

const DTensor& Parameter::dtensor() const {
  const auto& value = slot("dtensor").value;
  if (const auto* dtensor = std::get_if<DTensor>(&value)) return *dtensor;
  throw Error("nn::Parameter::dtensor: the parameter is a Tensor, not a DTensor; use tensor()");
}

const Tensor& Parameter::local() const {
  const auto& value = slot("local").value;
  if (const auto* dtensor = std::get_if<DTensor>(&value)) return dtensor->to_local();
  return std::get<Tensor>(value);
}

void Parameter::set(Tensor value) const {
  if (!value.defined()) throw Error("nn::Parameter::set: the tensor is undefined; a parameter needs a value");
  const_cast<Slot&>(slot("set")).value = std::move(value);
}

void Parameter::set(DTensor value) const { const_cast<Slot&>(slot("set")).value = std::move(value); }

Shape Parameter::shape() const {
  if (is_dtensor()) return dtensor().shape();
  return tensor().sizes();
}

DType Parameter::dtype() const { return local().dtype(); }

int64_t Parameter::numel() const { return is_dtensor() ? dtensor().numel() : tensor().numel(); }

bool Parameter::requires_grad() const { return local().requires_grad(); }

const Parameter& Parameter::set_requires_grad(bool requires_grad) const {
  // A DTensor's autograd state is its local tensor's, shared by every handle.
  Tensor local_tensor = local();
  local_tensor.set_requires_grad(requires_grad);
  return *this;
}

bool Parameter::is_leaf() const { return local().is_leaf(); }

bool Parameter::has_grad() const { return is_dtensor() ? dtensor().has_grad() : tensor().grad().defined(); }

Tensor Parameter::grad() const {
  if (is_dtensor()) {
    throw Error(
        "nn::Parameter::grad: the parameter is a DTensor; its gradient is a DTensor: use dtensor_grad()");
  }
  return tensor().grad();
}

DTensor Parameter::dtensor_grad() const {
  if (!is_dtensor()) throw Error("nn::Parameter::dtensor_grad: the parameter is a Tensor; use grad()");
  return dtensor().grad();
}

void Parameter::zero_grad(bool set_to_none) const {
  if (is_dtensor()) {
    DTensor value = dtensor();
    value.zero_grad(set_to_none);
  } else {
    Tensor value = tensor();
    value.zero_grad(set_to_none);
  }
}

std::string Parameter::to_string() const {
  if (!defined()) return "Parameter(undefined)";
  std::ostringstream text;
  text << "Parameter(";
  if (is_dtensor()) {
    text << "DTensor " << placements_text(dtensor().placements());
  } else {
    text << (tensor().is_local() ? "local Tensor" : "Tensor");
  }
  text << ", shape [";
  const Shape sizes = shape();
  for (size_t i = 0; i < sizes.size(); ++i) text << (i ? ", " : "") << sizes[i];
  text << "])";
  return text.str();
}

}  // namespace tessera::nn

// A module's parameter (PyTorch: nn.Parameter). In C++ a DTensor is not a Tensor, so a parameter
// holds either: a Tensor (dense or local) before parallelization, a DTensor after
// parallelize_module or fully_shard. Copies of a Parameter are handles to one slot: when a
// parallel style replaces the slot's value (Tensor -> DTensor, or FSDP swapping its sharded and
// unsharded values) every holder sees the new value, as a Python attribute would.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "tessera/dtensor.hpp"
#include "tessera/tensor.hpp"

namespace tessera::nn {

class Parameter {
 public:
  Parameter() = default;     // no slot: defined() is false
  Parameter(Tensor value);   // NOLINT(google-explicit-constructor): a tensor is a parameter's value
  Parameter(DTensor value);  // NOLINT(google-explicit-constructor)

  bool defined() const;
  bool is_dtensor() const;
  // The value; tensor() throws on a DTensor parameter and dtensor() on a Tensor one.
  const Tensor& tensor() const;
  const DTensor& dtensor() const;
  // The tensor this rank computes with: the Tensor itself, or the DTensor's local tensor.
  const Tensor& local() const;

  // Replaces the value every handle of this slot sees.
  void set(Tensor value) const;
  void set(DTensor value) const;

  // The global shape (a DTensor's, not its shard's), dtype and element count.
  Shape shape() const;
  DType dtype() const;
  int64_t numel() const;

  bool requires_grad() const;
  const Parameter& set_requires_grad(bool requires_grad) const;
  bool is_leaf() const;
  bool has_grad() const;
  // The gradient with the parameter's layout (undefined Tensor / DTensor when it has none).
  Tensor grad() const;
  DTensor dtensor_grad() const;
  void zero_grad(bool set_to_none = true) const;

  // Whether two handles name the same slot.
  bool same_slot(const Parameter& other) const { return slot_ == other.slot_; }
  std::string to_string() const;

 private:
  struct Slot {
    std::variant<Tensor, DTensor> value;
  };
  const Slot& slot(const char* what) const;

  std::shared_ptr<Slot> slot_;
};

}  // namespace tessera::nn

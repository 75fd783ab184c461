// What a module's forward takes and returns (ts::nn::Value): a Tensor (dense or local) or a
// DTensor. Parallel styles turn a module's inputs and outputs from one into the other (a local
// tensor in, a DTensor inside, a local tensor out with use_local_output), so the same module code
// runs dense, tensor-parallel or sequence-parallel. A Value converts implicitly from both, and the
// operations in nn/functional.hpp accept it.
#pragma once

#include <string>
#include <variant>

#include "tessera/dtensor.hpp"
#include "tessera/nn/parameter.hpp"
#include "tessera/tensor.hpp"

namespace tessera::nn {

// bugprone-exception-escape flags the implicit move assignment: it follows std::variant's assignment
// into the visitation helpers, whose bad_variant_access throw assignment never reaches.
// NOLINTNEXTLINE(bugprone-exception-escape)
class Value {
 public:
  Value() = default;                                  // undefined
  Value(Tensor value) : value_(std::move(value)) {}   // NOLINT(google-explicit-constructor)
  Value(DTensor value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Value(const Parameter& parameter);                  // NOLINT(google-explicit-constructor)

  bool defined() const;
  bool is_dtensor() const { return std::holds_alternative<DTensor>(value_); }
  // tensor() throws on a DTensor value and dtensor() on a Tensor one, naming what it holds.
  const Tensor& tensor() const;
  const DTensor& dtensor() const;
  // The Tensor, or the DTensor's local tensor.
  const Tensor& local() const;

  // The global shape: a DTensor's, or the Tensor's (a local tensor's shards must agree).
  Shape shape() const;
  int64_t size(int64_t dim) const;
  int64_t dim() const;
  DType dtype() const;

  // What it holds, for error messages: "Tensor", "local Tensor" or "DTensor(S(0),R)".
  std::string kind() const;

 private:
  std::variant<Tensor, DTensor> value_;
};

}  // namespace tessera::nn

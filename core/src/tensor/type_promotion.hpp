// PyTorch's result-type rule for mixed operands.
//
// Operands fall into three tiers: tensors with dims, 0-d tensors, and scalars. Within a tier dtypes
// promote normally; a lower tier only changes the result when it is of a higher category
// (bool < integer < floating). So int32 tensor + int64 0-d tensor is int32, int32 tensor + 2.5 is
// float32 (a float scalar counts as the default float dtype), float32 tensor + float64 0-d tensor
// is float32, but int32 tensor + float64 0-d tensor is float64.
#pragma once

#include <optional>

#include "tessera/scalar.hpp"
#include "tessera/tensor.hpp"

namespace tessera::detail {

class ResultType {
 public:
  ResultType& add(const Tensor& t);
  ResultType& add(const TensorImpl& t);  // a dense tensor's, without going through its handle
  ResultType& add(const Scalar& s);
  DType result() const;

 private:
  std::optional<DType> dimensioned_;
  std::optional<DType> zero_dim_;
  std::optional<DType> scalar_;
};

}  // namespace tessera::detail

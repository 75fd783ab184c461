#include "tensor/type_promotion.hpp"

#include "tensor/tensor_impl.hpp"

namespace tessera::detail {
namespace {

void fold(std::optional<DType>& tier, DType dtype) { tier = tier ? promote_types(*tier, dtype) : dtype; }

std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating(*higher)) return higher;
  if (*higher == kBool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

ResultType& ResultType::add(const Tensor& t) {
  fold(t.dim() > 0 ? dimensioned_ : zero_dim_, t.dtype());
  return *this;
}

ResultType& ResultType::add(const TensorImpl& t) {
  fold(t.dim() > 0 ? dimensioned_ : zero_dim_, t.dtype());
  return *this;
}

ResultType& ResultType::add(const Scalar& s) {
  fold(scalar_, s.promotion_dtype());
  return *this;
}

DType ResultType::result() const {
  return combine(dimensioned_, combine(zero_dim_, scalar_)).value_or(kFloat32);
}

}  // namespace tessera::detail

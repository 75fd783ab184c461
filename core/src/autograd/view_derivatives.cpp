// Backward formulas of the views and shape ops: each undoes its own reshaping on the gradient.
#include <numeric>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {

void record_reshape(const char* name, const Tensor& a, const Tensor& out) {
  const SymShape shape = a.shape();
  record(name, {a}, {out},
         [shape](std::vector<Tensor>& grads) -> std::vector<Tensor> { return {grads[0].reshape(shape)}; });
}

void record_transpose(const Tensor& a, int64_t dim0, int64_t dim1, const Tensor& out) {
  record("TransposeBackward", {a}, {out}, [dim0, dim1](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    return {grads[0].transpose(dim0, dim1)};
  });
}

void record_permute(const Tensor& a, const std::vector<int64_t>& dims, const Tensor& out) {
  // out dim i is input dim dims[i]: the inverse sends dim dims[i] back to i.
  std::vector<int64_t> inverse(dims.size());
  const auto ndim = static_cast<int64_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[static_cast<size_t>((dims[i] % ndim + ndim) % ndim)] = static_cast<int64_t>(i);
  record("PermuteBackward", {a}, {out}, [inverse](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    return {grads[0].permute(inverse)};
  });
}

void record_flip(const Tensor& a, const std::vector<int64_t>& dims, const Tensor& out) {
  record("FlipBackward", {a}, {out},
         [dims](std::vector<Tensor>& grads) -> std::vector<Tensor> { return {grads[0].flip(dims)}; });
}

void record_expand(const Tensor& a, const Tensor& out) {
  const SymShape shape = a.shape();
  record("ExpandBackward", {a}, {out},
         [shape](std::vector<Tensor>& grads) -> std::vector<Tensor> { return {sum_to(grads[0], shape)}; });
}

void record_part(const char* name, const Tensor& a, const Tensor& out,
                 std::function<Tensor(const Tensor&)> part) {
  // A handle to the input (whose storage the view shares anyway) gives zeros of its shape and
  // layout kind (local or plain) at backward.
  const Tensor like = a.detach();
  record(name, {a}, {out}, [like, part = std::move(part)](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    Tensor grad = zeros_like(like);
    Tensor target = part(grad);
    target.copy_(grads[0]);
    return {grad};
  });
}

}  // namespace tessera::autograd

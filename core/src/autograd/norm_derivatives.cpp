// Backward of layer_norm and rms_norm computed by their fused kernels: one backward kernel call per
// shard gives the gradients of x, the weight and the bias together.
#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/norm_kernels.hpp"

namespace tessera::autograd {

void record_norm(bool layer, const std::vector<Tensor>& inputs, bool has_weight, bool has_bias,
                 size_t normalized_ndim, const Tensor& out, const Tensor& mean, const Tensor& rstd) {
  const char* name = layer ? "LayerNormBackward" : "RmsNormBackward";
  const SavedTensor saved_x(inputs[0], false);
  const SavedTensor saved_weight = has_weight ? SavedTensor(inputs[1], false) : SavedTensor();
  // The gradients of the weight and bias come in the compute dtype; each goes back in its input's.
  std::vector<DType> dtypes;
  for (const Tensor& t : inputs) dtypes.push_back(t.dtype());
  const detail::NormKind kind = layer ? detail::NormKind::kLayer : detail::NormKind::kRms;
  record(name, inputs, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor weight = has_weight ? saved_weight.unpack(name) : Tensor();
    std::vector<Tensor> result = detail::norm_backward(kind, grads[0], saved_x.unpack(name), mean, rstd,
                                                       weight, has_bias, normalized_ndim);
    for (size_t i = 1; i < result.size(); ++i) result[i] = result[i].to(dtypes[i]);
    return result;
  });
}

}  // namespace tessera::autograd

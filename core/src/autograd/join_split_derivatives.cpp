// Backward formulas of cat, stack, split and chunk.
#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {

void record_cat(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) {
  // Each input's extent along dim (per rank for local tensors), so the gradient splits back.
  std::vector<SymInt> lengths;
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  for (const Tensor& t : inputs) lengths.push_back(t.sym_size(d));
  record("CatBackward", inputs, {out}, [lengths, d](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    std::vector<Tensor> parts;
    SymInt start(0);
    for (const SymInt& length : lengths) {
      parts.push_back(grads[0].narrow(d, start, length));
      start = start + length;
    }
    return parts;
  });
}

void record_stack(const std::vector<Tensor>& inputs, int64_t dim, const Tensor& out) {
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  const size_t count = inputs.size();
  record("StackBackward", inputs, {out}, [count, d](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    std::vector<Tensor> parts;
    for (size_t i = 0; i < count; ++i) parts.push_back(grads[0].select(d, static_cast<int64_t>(i)));
    return parts;
  });
}

void record_split(const char* name, const Tensor& a, int64_t dim, const std::vector<Tensor>& outputs) {
  const int64_t d = dim < 0 ? dim + a.dim() : dim;
  std::vector<SymInt> lengths;
  for (const Tensor& t : outputs) lengths.push_back(t.sym_size(d));
  const Tensor like = a.detach();
  record(name, {a}, outputs, [like, lengths, d](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    // Outputs no gradient reached contribute zeros.
    Tensor grad = zeros_like(like);
    SymInt start(0);
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (grads[i].defined()) grad.narrow(d, start, lengths[i]).copy_(grads[i]);
      start = start + lengths[i];
    }
    return {grad};
  });
}

}  // namespace tessera::autograd

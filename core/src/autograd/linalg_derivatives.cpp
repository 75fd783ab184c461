// Backward formulas of matmul (all of torch.matmul's cases), mm, bmm, softmax and log_softmax.
#include <cstring>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

// matmul's gradients, from its definition on operands promoted to at least 2-d (a 1-d a as a row
// [1, k], a 1-d b as a column [k, 1]) with broadcast batch dims: ga' = g' b'^T and gb' = a'^T g',
// each summed over the batch dims its operand was broadcast along and shaped back. Each gradient
// reads the other operand's values and its own operand's shape only.
std::vector<Tensor> matmul_grads(const Tensor& g, const Tensor& a, const Tensor& b, const SymShape& shape_a,
                                 const SymShape& shape_b) {
  const bool a_vector = shape_a.size() == 1, b_vector = shape_b.size() == 1;
  Tensor g2 = g;
  if (a_vector) g2 = g2.unsqueeze(b_vector ? 0 : -2);
  if (b_vector) g2 = g2.unsqueeze(-1);
  auto promoted = [](const SymShape& shape, int64_t at) {
    std::vector<SymInt> dims(shape.begin(), shape.end());
    dims.insert(dims.begin() + at, SymInt(1));
    return SymShape(dims);
  };
  Tensor ga, gb;
  if (b.defined()) {  // a needs its gradient
    const Tensor b2 = b_vector ? b.unsqueeze(1) : b;
    ga = sum_to(matmul(g2, b2.transpose(-1, -2)), a_vector ? promoted(shape_a, 0) : shape_a);
    if (a_vector) ga = ga.squeeze(0);
  }
  if (a.defined()) {  // b needs its gradient
    const Tensor a2 = a_vector ? a.unsqueeze(0) : a;
    gb = sum_to(matmul(a2.transpose(-1, -2), g2), b_vector ? promoted(shape_b, 1) : shape_b);
    if (b_vector) gb = gb.squeeze(1);
  }
  return {ga, gb};
}

const char* node_name(const char* op, const Tensor& a, const Tensor& b) {
  if (std::strcmp(op, "bmm") == 0) return "BmmBackward";
  if (std::strcmp(op, "mm") == 0 || (a.dim() == 2 && b.dim() == 2)) return "MmBackward";
  if (a.dim() == 1 && b.dim() == 1) return "DotBackward";
  return "MatmulBackward";
}

}  // namespace

void record_matmul(const char* op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const char* name = node_name(op, a, b);
  const bool need_a = requires_grad(a), need_b = requires_grad(b);
  const SavedTensor saved_a = need_b ? SavedTensor(a, false) : SavedTensor();
  const SavedTensor saved_b = need_a ? SavedTensor(b, false) : SavedTensor();
  const SymShape shape_a = a.shape(), shape_b = b.shape();
  record(name, {a, b}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    return matmul_grads(grads[0], saved_a.unpack(name), saved_b.unpack(name), shape_a, shape_b);
  });
}

void record_softmax(bool log_form, const Tensor& a, int64_t dim, const Tensor& out) {
  const char* name = log_form ? "LogSoftmaxBackward" : "SoftmaxBackward";
  const SavedTensor saved_out(out, true);
  record(name, {a}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor& g = grads[0];
    const Tensor y = saved_out.unpack(name);
    // softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g).
    if (log_form) return {g - exp(y) * sum(g, {dim}, true)};
    return {y * (g - sum(g * y, {dim}, true))};
  });
}

}  // namespace tessera::autograd

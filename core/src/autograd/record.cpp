#include "autograd/record.hpp"

#include <fmt/format.h>

#include "tessera/detail/spmd.hpp"
#include "tessera/detail/spmd_fresh.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.is_local() ? a.local_impl() == b.local_impl() : a.impl() == b.impl();
}

Tensor dense_sum_to(const Tensor& grad, const SymShape& target) {
  const Shape shape = target.to_shape();
  const Shape& sizes = grad.sizes();
  if (sizes == shape) return grad;
  if (shape.size() > sizes.size())
    throw Error(
        fmt::format("internal: autograd cannot sum a gradient of shape {} down to the larger shape {}",
                    target.to_string(), grad.shape().to_string()));
  const size_t lead = sizes.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (d < lead || (shape[d - lead] == 1 && sizes[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  const Tensor summed = dims.empty() ? grad : sum(grad, dims, true);
  return summed.reshape(shape);
}

}  // namespace

bool any_requires_grad(const std::vector<Tensor>& tensors) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& t : tensors)
    if (requires_grad(t)) return true;
  return false;
}

bool returns_an_input(std::span<const Tensor> inputs, std::span<const Tensor> outputs) {
  for (const Tensor& out : outputs)
    for (const Tensor& in : inputs)
      if (same_tensor(out, in)) return true;
  return false;
}

void connect(const std::shared_ptr<Node>& node, std::span<const Tensor> inputs,
             std::span<const Tensor> outputs) {
  node->next_edges.reserve(inputs.size());
  for (const Tensor& in : inputs) {
    Edge edge = gradient_edge(in);
    InputMeta meta = edge.node ? input_meta_of(in) : InputMeta{};
    node->next_edges.push_back({std::move(edge), std::move(meta)});
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    AutogradMeta& meta = *ensure_meta(outputs[i]);
    meta.grad_fn = node;
    meta.output_nr = static_cast<uint32_t>(i);
  }
}

std::optional<SymShape> broadcast_from(const Tensor& input, const Tensor& out) {
  if (!input.is_local() && !out.is_local()) {
    if (input.sizes() == out.sizes()) return std::nullopt;
  } else if (input.shape() == out.shape()) {
    return std::nullopt;
  }
  return input.shape();
}

Tensor sum_to(const Tensor& grad, const SymShape& shape) {
  if (grad.shape() == shape) return grad;
  return detail::spmd_fresh("sum_to", dense_sum_to, grad, shape);
}

void check_inplace(const Tensor& t, const char* op, const char* instead) {
  if (is_grad_enabled() && requires_grad(t))
    throw Error(
        fmt::format("{}: the tensor requires grad, and an in-place operation on it cannot be differentiated; "
                    "{}, or do the update under a NoGradGuard (as optimizers do)",
                    op, instead));
}

}  // namespace tessera::autograd

// cat / stack write inputs into slices of one output; split / chunk return narrow views.
#include <fmt/format.h>

#include "tensor/checked_arith.hpp"
#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tensor/type_promotion.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

Tensor dense_cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("cat: expected a non-empty list of tensors");
  detail::ResultType result;
  for (const Tensor& t : tensors) {
    detail::impl_of(t, "cat");
    result.add(t);
  }
  const DType dtype = result.result();
  const Tensor& first = tensors.front();
  if (first.dim() == 0) throw Error("cat: zero-dimensional tensors cannot be concatenated; use stack");
  const int64_t d = normalize_dim(dim, first.dim(), "cat");
  Shape out_shape = first.sizes();
  out_shape[static_cast<size_t>(d)] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    bool compatible = t.dim() == first.dim();
    for (int64_t k = 0; compatible && k < t.dim(); ++k) compatible = k == d || t.size(k) == first.size(k);
    if (!compatible)
      throw Error(
          fmt::format("cat: tensor {} has shape {}, which does not match tensor 0's shape {} outside dim {}",
                      i, shape_text(t.sizes()), shape_text(first.sizes()), d));
    out_shape[static_cast<size_t>(d)] =
        detail::checked_add(out_shape[static_cast<size_t>(d)], t.size(d),
                            [&] { return fmt::format("cat: the sizes of dim {} of tensors 0..{}", d, i); });
  }
  Tensor out = detail::empty_like_on(*first.impl(), out_shape, dtype);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    out.narrow(d, offset, t.size(d)).copy_(t);
    offset += t.size(d);
  }
  return out;
}

Tensor dense_stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("stack: expected a non-empty list of tensors");
  for (const Tensor& t : tensors) detail::impl_of(t, "stack");
  const Tensor& first = tensors.front();
  const int64_t d = normalize_dim(dim, first.dim() + 1, "stack");
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].sizes() != first.sizes())
      throw Error(fmt::format("stack: tensor {} has shape {}, expected tensor 0's shape {}", i,
                              shape_text(tensors[i].sizes()), shape_text(first.sizes())));
    expanded.push_back(tensors[i].unsqueeze(d));
  }
  return dense_cat(expanded, d);
}

std::vector<Tensor> dense_split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
  const TensorImpl& self = detail::impl_of(a, "split");
  if (self.dim() == 0) throw Error("split: cannot split a 0-d tensor");
  const int64_t d = normalize_dim(dim, self.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw Error(fmt::format("split: section sizes must be non-negative, got {}", shape_text(sizes)));
    total = detail::checked_add(
        total, s, [&] { return fmt::format("split: the section sizes {}", shape_text(sizes)); });
  }
  if (total != a.size(d))
    throw Error(fmt::format("split: section sizes {} sum to {}, but dim {} has size {}", shape_text(sizes),
                            total, d, a.size(d)));
  std::vector<Tensor> parts;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    parts.push_back(a.narrow(d, offset, s));
    offset += s;
  }
  return parts;
}

std::vector<Tensor> dense_split(const Tensor& a, int64_t split_size, int64_t dim) {
  const TensorImpl& self = detail::impl_of(a, "split");
  if (self.dim() == 0) throw Error("split: cannot split a 0-d tensor");
  const int64_t d = normalize_dim(dim, self.dim(), "split");
  // As torch.split: a split_size of 0 is allowed only for an empty dim, which gives one empty piece.
  if (split_size < 0 || (split_size == 0 && a.size(d) != 0))
    throw Error(fmt::format(
        "split: split_size must be positive (or 0 for an empty dim), got {} for dim {} of size {}",
        split_size, d, a.size(d)));
  std::vector<int64_t> sizes;
  for (int64_t left = a.size(d); left > 0; left -= split_size) sizes.push_back(std::min(split_size, left));
  if (sizes.empty()) sizes.push_back(0);  // as torch.split: an empty dim gives one empty piece
  return dense_split(a, sizes, d);
}

std::vector<Tensor> dense_chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  const TensorImpl& self = detail::impl_of(a, "chunk");
  if (chunks <= 0) throw Error(fmt::format("chunk: the number of chunks must be positive, got {}", chunks));
  if (self.dim() == 0) throw Error("chunk: cannot chunk a 0-d tensor");
  const int64_t d = normalize_dim(dim, self.dim(), "chunk");
  const int64_t size = a.size(d);
  // torch.chunk: pieces of ceil(size / chunks); fewer than `chunks` pieces when that runs out.
  const int64_t piece = size == 0 ? 1 : (size - 1) / chunks + 1;
  return dense_split(a, piece, d);
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_alias(
            "cat", [dim](const std::vector<Tensor>& ts) { return dense_cat(ts, dim); }, tensors);
      },
      [&](const Tensor& out) { autograd::record_cat(tensors, dim, out); }, tensors);
}
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_alias(
            "stack", [dim](const std::vector<Tensor>& ts) { return dense_stack(ts, dim); }, tensors);
      },
      [&](const Tensor& out) { autograd::record_stack(tensors, dim, out); }, tensors);
}
std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_alias(
            "split", [&](const Tensor& x) { return dense_split(x, sizes, dim); }, a);
      },
      [&](const std::vector<Tensor>& out) { autograd::record_split("SplitWithSizesBackward", a, dim, out); },
      a);
}
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_alias(
            "split", [&](const Tensor& x) { return dense_split(x, split_size, dim); }, a);
      },
      [&](const std::vector<Tensor>& out) { autograd::record_split("SplitBackward", a, dim, out); }, a);
}
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  return autograd::differentiable(
      [&] {
        return detail::spmd_alias(
            "chunk", [&](const Tensor& x) { return dense_chunk(x, chunks, dim); }, a);
      },
      [&](const std::vector<Tensor>& out) { autograd::record_split("SplitBackward", a, dim, out); }, a);
}

}  // namespace tessera

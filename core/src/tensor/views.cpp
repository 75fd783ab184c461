// Views: new sizes/strides/offset over the same storage; no kernel runs.
#include <algorithm>

#include <fmt/format.h>

#include "tensor/checked_arith.hpp"
#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"

namespace tessera {
using detail::impl_of;

namespace {

// The TensorImpl constructor checks the view against its storage and names `op` when it does not fit.
Tensor make_view(const char* op, const TensorImpl& t, Shape sizes, std::vector<int64_t> strides,
                 int64_t offset) {
  return Tensor(t.view(std::move(sizes), std::move(strides), offset, op));
}

// `base` (the view's offset unless given) moved `index` steps along dim `d`: the offset of a
// narrowed, sliced, selected or flipped view.
int64_t view_offset(const char* op, const TensorImpl& t, size_t d, int64_t index, int64_t base) {
  auto what = [&] {
    return fmt::format("{}: the offset of index {} of dim {} in a tensor of shape {} with strides {}", op,
                       index, d, shape_text(t.sizes()), shape_text(t.strides()));
  };
  return detail::checked_add(base, detail::checked_mul(index, t.strides()[d], what), what);
}
int64_t view_offset(const char* op, const TensorImpl& t, size_t d, int64_t index) {
  return view_offset(op, t, d, index, t.offset());
}

// Resolves one -1 in a requested shape against numel; throws when sizes cannot match.
Shape infer_shape(const Shape& requested, int64_t numel, const char* op) {
  Shape shape = requested;
  int infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0)
        throw Error(fmt::format("{}: only one dim may be -1, got {}", op, shape_text(requested)));
      infer_at = static_cast<int>(i);
      shape[i] = 1;  // counted as 1 until inferred
    } else if (shape[i] < 0) {
      throw Error(fmt::format("{}: invalid size {} in shape {}", op, shape[i], shape_text(requested)));
    }
  }
  const int64_t known = shape_numel(shape, op);
  if (infer_at >= 0) {
    if (known == 0)
      throw Error(
          fmt::format("{}: the -1 in shape {} cannot be inferred: another size is 0, so any value would fit "
                      "a tensor of {} elements",
                      op, shape_text(requested), numel));
    if (numel % known != 0)
      throw Error(fmt::format("{}: shape {} is invalid for a tensor of {} elements", op,
                              shape_text(requested), numel));
    shape[static_cast<size_t>(infer_at)] = numel / known;
  } else if (known != numel) {
    throw Error(
        fmt::format("{}: shape {} is invalid for a tensor of {} elements", op, shape_text(requested), numel));
  }
  return shape;
}

// Strides that let `t` be viewed with `shape` without copying, or false when its layout forbids it.
// Groups of old dims that are contiguous with each other may be split or merged freely.
bool view_strides(const TensorImpl& t, const Shape& shape, std::vector<int64_t>& strides) {
  strides.assign(shape.size(), 0);
  if (t.numel() == 0 || t.dim() == 0) {
    strides = contiguous_strides(shape);
    return true;
  }
  const Shape& old_sizes = t.sizes();
  const std::vector<int64_t>& old_strides = t.strides();
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    // At the start of a contiguous chunk (or the first dim), fill the view dims it covers.
    if (tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 && old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = detail::checked_mul(view_numel, chunk_base_stride, [&] {
          return fmt::format("view: the strides of shape {} over a tensor of strides {}", shape_text(shape),
                             shape_text(old_strides));
        });
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor Tensor::view(const SymShape& sym_shape) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (detail::common_ranks("view", *this, sym_shape))
          return detail::spmd_alias(
              "view", [](const Tensor& s, const SymShape& shape) { return s.view(shape); }, *this, sym_shape);
        const TensorImpl& self = impl_of(*this, "view");
        const Shape requested = sym_shape.to_shape();
        const Shape shape = infer_shape(requested, self.numel(), "view");
        std::vector<int64_t> strides;
        if (!view_strides(self, shape, strides))
          throw Error(
              fmt::format("view: a tensor of shape {} with strides {} cannot be viewed as {} without a copy; "
                          "use reshape() or contiguous() first",
                          shape_text(self.sizes()), shape_text(self.strides()), shape_text(shape)));
        return make_view("view", self, shape, std::move(strides), self.offset());
      },
      [&](const Tensor& out) { autograd::record_reshape("ViewBackward", *this, out); }, *this);
}

Tensor Tensor::reshape(const SymShape& sym_shape) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (detail::common_ranks("reshape", *this, sym_shape))
          return detail::spmd_alias(
              "reshape", [](const Tensor& s, const SymShape& shape) { return s.reshape(shape); }, *this,
              sym_shape);
        const TensorImpl& self = impl_of(*this, "reshape");
        const Shape requested = sym_shape.to_shape();
        const Shape shape = infer_shape(requested, self.numel(), "reshape");
        std::vector<int64_t> strides;
        if (view_strides(self, shape, strides))
          return make_view("reshape", self, shape, std::move(strides), self.offset());
        return clone().view(shape);
      },
      [&](const Tensor& out) { autograd::record_reshape("ReshapeBackward", *this, out); }, *this);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "transpose", [&](const Tensor& s) { return s.transpose(dim0, dim1); }, *this);
        const TensorImpl& self = impl_of(*this, "transpose");
        const auto a = static_cast<size_t>(normalize_dim(dim0, self.dim(), "transpose"));
        const auto b = static_cast<size_t>(normalize_dim(dim1, self.dim(), "transpose"));
        Shape sizes = self.sizes();
        std::vector<int64_t> strides = self.strides();
        if (self.dim() > 0) {
          std::swap(sizes[a], sizes[b]);
          std::swap(strides[a], strides[b]);
        }
        return make_view("transpose", self, std::move(sizes), std::move(strides), self.offset());
      },
      [&](const Tensor& out) { autograd::record_transpose(*this, dim0, dim1, out); }, *this);
}

Tensor Tensor::t() const {
  const int64_t d = dim();
  if (d > 2) throw Error(fmt::format("t: expects a tensor of at most 2 dims, got {} dims", d));
  return d < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "permute", [&](const Tensor& s) { return s.permute(dims); }, *this);
        const TensorImpl& self = impl_of(*this, "permute");
        if (static_cast<int64_t>(dims.size()) != self.dim())
          throw Error(fmt::format("permute: got {} dims {} for a tensor of {} dims", dims.size(),
                                  shape_text(dims), self.dim()));
        Shape sizes(dims.size());
        std::vector<int64_t> strides(dims.size());
        std::vector<bool> used(dims.size(), false);
        for (size_t i = 0; i < dims.size(); ++i) {
          const auto d = static_cast<size_t>(normalize_dim(dims[i], self.dim(), "permute"));
          if (used[d]) throw Error(fmt::format("permute: dim {} appears twice in {}", d, shape_text(dims)));
          used[d] = true;
          sizes[i] = self.sizes()[d];
          strides[i] = self.strides()[d];
        }
        return make_view("permute", self, std::move(sizes), std::move(strides), self.offset());
      },
      [&](const Tensor& out) { autograd::record_permute(*this, dims, out); }, *this);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "flatten", [&](const Tensor& s) { return s.flatten(start_dim, end_dim); }, *this);
        const TensorImpl& self = impl_of(*this, "flatten");
        const int64_t start = normalize_dim(start_dim, self.dim(), "flatten");
        const int64_t end = normalize_dim(end_dim, self.dim(), "flatten");
        if (self.dim() == 0) return reshape({1});  // dims 0 and -1 name the one implicit dim, as in PyTorch
        if (start > end)
          throw Error(fmt::format("flatten: start_dim {} comes after end_dim {}", start_dim, end_dim));
        Shape shape(self.sizes().begin(), self.sizes().begin() + start);
        shape.push_back(
            shape_numel(Shape(self.sizes().begin() + start, self.sizes().begin() + end + 1), "flatten"));
        shape.insert(shape.end(), self.sizes().begin() + end + 1, self.sizes().end());
        return reshape(shape);
      },
      [&](const Tensor& out) { autograd::record_reshape("FlattenBackward", *this, out); }, *this);
}

Tensor Tensor::squeeze() const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "squeeze", [](const Tensor& s) { return s.squeeze(); }, *this);
        const TensorImpl& self = impl_of(*this, "squeeze");
        Shape sizes;
        std::vector<int64_t> strides;
        for (size_t d = 0; d < self.sizes().size(); ++d)
          if (self.sizes()[d] != 1) {
            sizes.push_back(self.sizes()[d]);
            strides.push_back(self.strides()[d]);
          }
        return make_view("squeeze", self, std::move(sizes), std::move(strides), self.offset());
      },
      [&](const Tensor& out) { autograd::record_reshape("SqueezeBackward", *this, out); }, *this);
}

Tensor Tensor::squeeze(int64_t dim) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "squeeze", [&](const Tensor& s) { return s.squeeze(dim); }, *this);
        const TensorImpl& self = impl_of(*this, "squeeze");
        const auto d = static_cast<size_t>(normalize_dim(dim, self.dim(), "squeeze"));
        if (self.dim() == 0) return *this;       // dim 0 or -1 of a 0-d tensor, as in PyTorch
        if (self.sizes()[d] != 1) return *this;  // as in PyTorch: squeezing a dim that is not 1 is a no-op
        Shape sizes = self.sizes();
        std::vector<int64_t> strides = self.strides();
        sizes.erase(sizes.begin() + static_cast<int64_t>(d));
        strides.erase(strides.begin() + static_cast<int64_t>(d));
        return make_view("squeeze", self, std::move(sizes), std::move(strides), self.offset());
      },
      [&](const Tensor& out) { autograd::record_reshape("SqueezeBackward", *this, out); }, *this);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "unsqueeze", [&](const Tensor& s) { return s.unsqueeze(dim); }, *this);
        const TensorImpl& self = impl_of(*this, "unsqueeze");
        const auto d = static_cast<size_t>(normalize_dim(dim, self.dim() + 1, "unsqueeze"));
        Shape sizes = self.sizes();
        std::vector<int64_t> strides = self.strides();
        // The new dim has size 1, so its stride is never stepped over; the row-major value keeps views
        // of the result contiguous where the input was.
        const int64_t stride =
            d < sizes.size()
                ? detail::checked_mul(sizes[d], strides[d],
                                      [&] {
                                        return fmt::format("unsqueeze: the stride of new dim {} of shape {}",
                                                           d, shape_text(self.sizes()));
                                      })
                : 1;
        sizes.insert(sizes.begin() + static_cast<int64_t>(d), 1);
        strides.insert(strides.begin() + static_cast<int64_t>(d), stride);
        return make_view("unsqueeze", self, std::move(sizes), std::move(strides), self.offset());
      },
      [&](const Tensor& out) { autograd::record_reshape("UnsqueezeBackward", *this, out); }, *this);
}

Tensor Tensor::narrow(int64_t dim, const SymInt& sym_start, const SymInt& sym_length) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (detail::common_ranks("narrow", *this, sym_start, sym_length))
          return detail::spmd_alias(
              "narrow",
              [dim](const Tensor& s, int64_t start, int64_t length) { return s.narrow(dim, start, length); },
              *this, sym_start, sym_length);
        const TensorImpl& self = impl_of(*this, "narrow");
        int64_t start = sym_start.as_int();
        const int64_t length = sym_length.as_int();
        if (self.dim() == 0) throw Error("narrow: cannot narrow a 0-d tensor");
        const auto d = static_cast<size_t>(normalize_dim(dim, self.dim(), "narrow"));
        const int64_t size = self.sizes()[d];
        if (start < 0) start += size;
        // Compared as `length > size - start` (never forming start + length, which may overflow).
        if (start < 0 || start > size || length < 0 || length > size - start)
          throw Error(
              fmt::format("narrow: start {} and length {} do not fit dim {} of size {} (need 0 <= start and "
                          "start + length <= {})",
                          sym_start.as_int(), length, d, size, size));
        Shape sizes = self.sizes();
        sizes[d] = length;
        return make_view("narrow", self, std::move(sizes), self.strides(),
                         view_offset("narrow", self, d, start));
      },
      [&](const Tensor& out) {
        autograd::record_part("NarrowBackward", *this, out,
                              [=](const Tensor& z) { return z.narrow(dim, sym_start, sym_length); });
      },
      *this);
}

Tensor Tensor::slice(int64_t dim, const SymInt& sym_start, const SymInt& sym_end, int64_t step) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (detail::common_ranks("slice", *this, sym_start, sym_end))
          return detail::spmd_alias(
              "slice",
              [dim, step](const Tensor& s, int64_t start, int64_t end) {
                return s.slice(dim, start, end, step);
              },
              *this, sym_start, sym_end);
        const TensorImpl& self = impl_of(*this, "slice");
        const int64_t start = sym_start.as_int();
        const int64_t end = sym_end.as_int();
        if (self.dim() == 0) throw Error("slice: cannot slice a 0-d tensor");
        const auto d = static_cast<size_t>(normalize_dim(dim, self.dim(), "slice"));
        if (step <= 0) throw Error(fmt::format("slice: step must be positive, got {}", step));
        const int64_t size = self.sizes()[d];
        // Python slice semantics: negative bounds count from the end, out-of-range bounds clamp.
        auto clamp = [size](int64_t i) { return std::clamp(i < 0 ? i + size : i, int64_t{0}, size); };
        const int64_t lo = clamp(start);
        const int64_t hi = std::max(lo, clamp(end));
        Shape sizes = self.sizes();
        std::vector<int64_t> strides = self.strides();
        // ceil((hi - lo) / step) without forming hi - lo + step - 1, which overflows for a huge step.
        sizes[d] = hi == lo ? 0 : (hi - lo - 1) / step + 1;
        const int64_t offset = view_offset("slice", self, d, lo);
        // A dim of size 0 or 1 is never stepped over: keep its stride rather than overflow step * stride.
        if (sizes[d] > 1)
          strides[d] = detail::checked_mul(strides[d], step, [&] {
            return fmt::format("slice: the stride of dim {} (step {}) of a tensor of strides {}", d, step,
                               shape_text(self.strides()));
          });
        return make_view("slice", self, std::move(sizes), std::move(strides), offset);
      },
      [&](const Tensor& out) {
        autograd::record_part("SliceBackward", *this, out,
                              [=](const Tensor& z) { return z.slice(dim, sym_start, sym_end, step); });
      },
      *this);
}

Tensor Tensor::select(int64_t dim, const SymInt& sym_index) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (detail::common_ranks("select", *this, sym_index))
          return detail::spmd_alias(
              "select", [dim](const Tensor& s, int64_t index) { return s.select(dim, index); }, *this,
              sym_index);
        const TensorImpl& self = impl_of(*this, "select");
        int64_t index = sym_index.as_int();
        if (self.dim() == 0) throw Error("select: cannot index a 0-d tensor");
        const auto d = static_cast<size_t>(normalize_dim(dim, self.dim(), "select"));
        const int64_t size = self.sizes()[d];
        if (index < -size || index >= size)
          throw Error(fmt::format("select: index {} is out of range for dim {} of size {} (expected {}..{})",
                                  index, d, size, -size, size - 1));
        if (index < 0) index += size;
        Shape sizes = self.sizes();
        std::vector<int64_t> strides = self.strides();
        const int64_t offset = view_offset("select", self, d, index);
        sizes.erase(sizes.begin() + static_cast<int64_t>(d));
        strides.erase(strides.begin() + static_cast<int64_t>(d));
        return make_view("select", self, std::move(sizes), std::move(strides), offset);
      },
      [&](const Tensor& out) {
        autograd::record_part("SelectBackward", *this, out,
                              [=](const Tensor& z) { return z.select(dim, sym_index); });
      },
      *this);
}

Tensor Tensor::flip(const std::vector<int64_t>& dims) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (is_local())
          return detail::spmd_alias(
              "flip", [&](const Tensor& s) { return s.flip(dims); }, *this);
        const TensorImpl& self = impl_of(*this, "flip");
        std::vector<int64_t> strides = self.strides();
        // A 0-d tensor accepts dim 0 (or -1), as in PyTorch, and has nothing to reverse.
        std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false);
        int64_t offset = self.offset();
        for (int64_t dim : dims) {
          const auto d = static_cast<size_t>(normalize_dim(dim, self.dim(), "flip"));
          if (flipped[d]) throw Error(fmt::format("flip: dim {} appears twice in {}", d, shape_text(dims)));
          flipped[d] = true;
          if (self.dim() == 0) continue;
          if (self.sizes()[d] > 0) offset = view_offset("flip", self, d, self.sizes()[d] - 1, offset);
          strides[d] = detail::checked_mul(strides[d], -1, [&] {
            return fmt::format("flip: the stride of dim {} of a tensor of strides {}", d,
                               shape_text(self.strides()));
          });
        }
        return make_view("flip", self, self.sizes(), std::move(strides), offset);
      },
      [&](const Tensor& out) { autograd::record_flip(*this, dims, out); }, *this);
}

Tensor Tensor::expand(const SymShape& sym_shape) const {
  return autograd::differentiable(
      [&]() -> Tensor {
        if (detail::common_ranks("expand", *this, sym_shape))
          return detail::spmd_alias(
              "expand", [](const Tensor& s, const SymShape& shape) { return s.expand(shape); }, *this,
              sym_shape);
        const TensorImpl& self = impl_of(*this, "expand");
        const Shape requested = sym_shape.to_shape();
        if (requested.size() < self.sizes().size())
          throw Error(fmt::format("expand: target shape {} has fewer dims than the tensor's shape {}",
                                  shape_text(requested), shape_text(self.sizes())));
        Shape target = requested;
        const size_t lead = target.size() - self.sizes().size();
        for (size_t i = 0; i < target.size(); ++i) {
          const int64_t own = i < lead ? 1 : self.sizes()[i - lead];
          if (target[i] == -1) {
            if (i < lead) throw Error(fmt::format("expand: -1 is not allowed for the new leading dim {}", i));
            target[i] = own;
          }
          if (target[i] < 0)
            throw Error(fmt::format(
                "expand: invalid size {} at dim {} of shape {} (expected a size >= 0, or -1 to keep "
                "the tensor's own)",
                target[i], i, shape_text(requested)));
          if (own != 1 && own != target[i])
            throw Error(
                fmt::format("expand: shape {} cannot be expanded to {} (dim {}: {} is neither 1 nor {})",
                            shape_text(self.sizes()), shape_text(requested), i, own, target[i]));
        }
        return make_view("expand", self, target, detail::broadcast_strides(self, target), self.offset());
      },
      [&](const Tensor& out) { autograd::record_expand(*this, out); }, *this);
}

}  // namespace tessera

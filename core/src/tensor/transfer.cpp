// Moving tensors between backends (PyTorch: tensor.to("cuda")): the bytes go through the two
// backends' own copy functions, never through a kernel, so any pair of backends can exchange
// tensors without knowing each other.
#include <cstddef>
#include <vector>

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include "autograd/record.hpp"
#include "dispatch/backends.hpp"
#include "tensor/internal.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/detail/spmd.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

// A contiguous copy of dense `self` on `target`.
Tensor transfer(const TensorImpl& self, const std::shared_ptr<const dispatch::Backend>& target) {
  const dispatch::Backend& source = self.backend();
  Tensor out = detail::empty_on(self.sizes(), self.dtype(), target);
  // A shapes-only backend has no bytes to give or take: moving onto one keeps the shape, and
  // values cannot come from one (they were never computed).
  if (target->shapes_only()) return out;
  if (source.shapes_only())
    throw Error(
        fmt::format("to('{}'): a {} tensor of shape {} on the {} backend holds shapes only, so it has no "
                    "values to move; make it on a computing backend",
                    target->name(), dtype_name(self.dtype()), shape_text(self.sizes()), source.name()));
  const Tensor packed = Tensor(std::make_shared<TensorImpl>(self)).contiguous();
  const TensorImpl& from = *packed.impl();
  const size_t bytes = static_cast<size_t>(from.numel()) * itemsize(from.dtype());
  if (bytes == 0) return out;
  const std::byte* src = from.bytes_at();
  std::byte* dst = out.impl()->bytes_at();
  // Host memory on either side is copied into or out of directly; two devices meet in a host buffer.
  if (target->device_type() == kDLCPU) {
    source.copy(dst, src, bytes, TESSERA_COPY_DEVICE_TO_HOST);
  } else if (source.device_type() == kDLCPU) {
    target->copy(dst, src, bytes, TESSERA_COPY_HOST_TO_DEVICE);
  } else {
    std::vector<std::byte> staging(bytes);
    source.copy(staging.data(), src, bytes, TESSERA_COPY_DEVICE_TO_HOST);
    target->copy(dst, staging.data(), bytes, TESSERA_COPY_HOST_TO_DEVICE);
  }
  return out;
}

Tensor to_backend(const Tensor& t, const std::string& backend) {
  if (t.is_local())
    return detail::spmd(
        "to", [&backend](const Tensor& shard) { return to_backend(shard, backend); }, t);
  const TensorImpl& self = detail::impl_of(t, "to");
  if (self.backend().name() == backend) return t;
  return transfer(self, dispatch::backend(backend));
}

}  // namespace

Tensor Tensor::to(const std::string& backend) const {
  if (!defined()) (void)detail::impl_of(*this, "to");  // names the op in the undefined tensor's error
  if (!autograd::any_requires_grad(*this)) return to_backend(*this, backend);
  Tensor out = autograd::untracked([&] { return to_backend(*this, backend); });
  // The gradient goes back to where the input lives; a local tensor's shards may live on several.
  autograd::record("ToCopyBackward", {*this}, {out}, [source = *this](std::vector<Tensor>& grads) {
    const Tensor& grad = grads[0];
    if (!grad.is_local()) return std::vector<Tensor>{grad.to(source.backend())};
    return std::vector<Tensor>{detail::spmd(
        "to", [](const Tensor& g, const Tensor& s) { return g.to(s.backend()); }, grad, source)};
  });
  return out;
}

Tensor Tensor::to(const TensorOptions& options) const {
  Tensor moved = options.backend_name.empty() ? *this : to(options.backend_name);
  return options.has_dtype ? moved.to(options.dtype_value) : moved;
}

}  // namespace tessera

#include "world/chunk_view.hpp"

#include <fmt/format.h>

#include "dispatch/backend.hpp"
#include "tessera/errors.hpp"

namespace tessera::world {

DLTensor chunk_view(const TensorImpl& impl, int64_t offset, int64_t count, const std::string& transport,
                    int64_t& length) {
  if (impl.backend().device_type() != kDLCPU)
    throw Error(fmt::format("transport '{}': a message must be in host memory, but it lives on backend '{}'",
                            transport, impl.backend().name()));
  const bool dense = (impl.dim() == 1 && impl.strides()[0] == 1) || impl.is_contiguous();
  if (!dense || offset < 0 || count < 0 || offset > impl.numel() - count)
    throw Error(fmt::format(
        "transport '{}': a message must be a contiguous range of its buffer, but elements [{}, {}) "
        "of {} were asked for (internal error)",
        transport, offset, offset + count, impl.numel()));
  DLTensor t{};
  t.data = impl.bytes_at(offset);
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = 1;
  t.dtype = dispatch::to_dl(impl.dtype());
  length = count;
  t.shape = &length;
  t.strides = nullptr;
  return t;
}

}  // namespace tessera::world

#include "tensor/kernel_operand.hpp"

#include <cstring>

namespace tessera::dispatch {
namespace {

const TensorImpl& tensor_of(const void* buffer) { return *static_cast<const TensorImpl*>(buffer); }

void prepare_tensor_write(const void* buffer) { tensor_of(buffer).prepare_write(); }

void* tensor_data(const void* buffer) {
  const TensorImpl& t = tensor_of(buffer);
  void* data = t.storage()->data;
  if (data == nullptr && t.storage()->released()) t.throw_released("compute with");
  return data;
}

// A widened call's temporary: a tensor (so that memory counters see its bytes, as any tensor's).
std::shared_ptr<const void> fresh_tensor(const void* buffer, std::span<const int64_t> sizes, DType dtype,
                                         Operand& made) {
  std::shared_ptr<TensorImpl> t =
      TensorImpl::allocate(Shape(sizes.begin(), sizes.end()), dtype, tensor_of(buffer).backend_ptr());
  made = operand(*t);
  return t;
}

}  // namespace

const BufferAccess kTensorAccess{&prepare_tensor_write, &tensor_data, &fresh_tensor};

void copy_range(const TensorImpl& from, int64_t from_offset, const TensorImpl& to, int64_t to_offset,
                int64_t count) {
  if (count == 0) return;
  if (from.dtype() == to.dtype() && from.backend().device_type() == kDLCPU &&
      to.backend().device_type() == kDLCPU) {
    to.prepare_write();  // as a kernel's output would be
    const auto item = static_cast<int64_t>(itemsize(to.dtype()));
    std::memcpy(to.bytes_at(to_offset), from.bytes_at(from_offset), static_cast<size_t>(count * item));
    return;
  }
  const int64_t one = 1;
  call_kernel("copy", to.dtype(), {operand_range(from, from_offset, count, one)},
              {operand_range(to, to_offset, count, one)});
}

}  // namespace tessera::dispatch

// A backend component as the core uses it: memory functions and a kernel table indexed for fast
// lookup by (op, dtype).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/loaded_plugin.hpp"
#include "tessera/dtype.hpp"
#include "tessera/sdk/backend.h"

namespace tessera::dispatch {

class Backend {
 public:
  // `table` was validated by plugin::check_backend; `owner` keeps its library mapped.
  Backend(const tessera_backend* table, std::shared_ptr<const plugin::LoadedPlugin> owner);
  // The one Backend of `table` while any is alive, else a new one. Tensors keep their backend's
  // library mapped, and loading a mapped library again gives back the same table; so a plugin
  // unloaded and reloaded while tensors of it live provides the very backend they are on, and old
  // and new tensors mix (identity is the object, compared by address everywhere).
  static std::shared_ptr<const Backend> of(const tessera_backend* table,
                                           std::shared_ptr<const plugin::LoadedPlugin> owner);

  const std::string& name() const { return name_; }
  int32_t device_type() const { return table_->device_type; }
  // Tensors here have shapes but no values (TESSERA_BACKEND_SHAPES_ONLY, SDK 1.2): nothing is read
  // from them and collectives on them move no data.
  bool shapes_only() const { return shapes_only_; }
  const plugin::LoadedPlugin& plugin() const { return *owner_; }

  // nullptr when the backend has no kernel for (op, dtype).
  tessera_kernel_fn find_kernel(std::string_view op, DType dtype) const;
  // Throws Error naming the op, the dtype and the backend.
  tessera_kernel_fn kernel(std::string_view op, DType dtype) const;
  void* context() const { return table_->context; }

  void* allocate(size_t bytes) const;
  // Each call into the plugin is guarded (an exception escaping it becomes an Error naming the
  // backend, its plugin and the call); allocate also refuses a success without memory, and
  // deallocate, which destructors call, logs a failure instead of throwing.
  void deallocate(void* data) const noexcept;
  void copy(void* dst, const void* src, size_t bytes, int32_t direction) const;
  // Limits the threads one kernel call may use (0 = default); a no-op when the backend lacks it.
  void set_num_threads(int32_t num_threads) const;

 private:
  // The kernel table, immutable once built: one entry per op name with its kernel per dtype, found
  // through an open-addressing index (a power-of-two number of slots, at most half of them used),
  // so a lookup is one hash of the name and usually one comparison.
  struct OpKernels {
    std::string op;
    std::array<tessera_kernel_fn, kNumDTypes> by_dtype{};
  };
  void index_kernels();

  const tessera_backend* table_;
  std::shared_ptr<const plugin::LoadedPlugin> owner_;
  std::string name_;
  bool shapes_only_;
  std::vector<OpKernels> ops_;
  std::vector<int32_t> slots_;  // index into ops_, or -1 for an empty slot
};

// Readies `error` for one plugin call: sized, with an empty message that a plugin failing without
// one leaves empty. The rest of the 512-byte buffer stays unwritten (clearing it costs more than a
// small kernel's whole call); a plugin writes a NUL-terminated message there (sdk/status.h).
inline void clear_error(tessera_error& error) {
  error.struct_size = sizeof(error);
  error.code = TESSERA_OK;
  error.message[0] = '\0';
}

// DType <-> DLDataType. from_dl returns false for a type Tessera does not know.
constexpr DLDataType to_dl(DType dtype) {
  switch (dtype) {
    case DType::Bool:
      return {TESSERA_DL_BOOL_CODE, 8, 1};
    case DType::Int32:
      return {kDLInt, 32, 1};
    case DType::Int64:
      return {kDLInt, 64, 1};
    case DType::Float32:
      return {kDLFloat, 32, 1};
    case DType::Float64:
      return {kDLFloat, 64, 1};
    case DType::BFloat16:
      return {kDLBfloat, 16, 1};
    case DType::Float16:
      return {kDLFloat, 16, 1};
    case DType::Int8:
      return {kDLInt, 8, 1};
    case DType::UInt8:
      return {kDLUInt, 8, 1};
  }
  return {kDLFloat, 32, 1};
}
bool from_dl(DLDataType dl, DType* dtype);

}  // namespace tessera::dispatch

#include "dispatch/backend.hpp"

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <mutex>

#include "log/log.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::dispatch {

DLDataType to_dl(DType dtype) {
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
  }
  return {kDLFloat, 32, 1};
}

bool from_dl(DLDataType dl, DType* dtype) {
  for (int i = 0; i < kNumDTypes; ++i) {
    const DLDataType known = to_dl(static_cast<DType>(i));
    if (known.code == dl.code && known.bits == dl.bits && known.lanes == dl.lanes) {
      *dtype = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

Backend::Backend(const tessera_backend* table, std::shared_ptr<const plugin::LoadedPlugin> owner)
    : table_(table),
      owner_(std::move(owner)),
      name_(table->name),
      // Optional (SDK 1.2): a table from an older SDK ends before `flags`, an ordinary backend.
      shapes_only_(table->struct_size >= offsetof(tessera_backend, flags) + sizeof(table->flags) &&
                   (table->flags & TESSERA_BACKEND_SHAPES_ONLY) != 0) {
  for (size_t i = 0; i < table->num_kernels; ++i) {
    const tessera_kernel* entry = table->kernels[i];
    DType dtype;
    if (!from_dl(entry->dtype, &dtype)) {
      observe::logger().warn(
          "backend '{}': kernel '{}' has a dtype Tessera does not know (code {}, {} bits); ignored", name_,
          entry->op, entry->dtype.code, entry->dtype.bits);
      continue;
    }
    kernels_by_dtype_[static_cast<size_t>(dtype)].emplace(entry->op, entry->fn);
  }
}

std::shared_ptr<const Backend> Backend::of(const tessera_backend* table,
                                           std::shared_ptr<const plugin::LoadedPlugin> owner) {
  // Keyed by the table's address, which is the library's own: process-wide like the mapping itself.
  static std::mutex mutex;
  static std::map<const tessera_backend*, std::weak_ptr<const Backend>> alive;
  std::lock_guard lock(mutex);
  std::erase_if(alive, [](const auto& entry) { return entry.second.expired(); });
  if (auto it = alive.find(table); it != alive.end())
    if (std::shared_ptr<const Backend> existing = it->second.lock()) return existing;
  auto made = std::make_shared<const Backend>(table, std::move(owner));
  alive[table] = made;
  return made;
}

tessera_kernel_fn Backend::find_kernel(std::string_view op, DType dtype) const {
  const KernelMap& map = kernels_by_dtype_[static_cast<size_t>(dtype)];
  const auto it = map.find(op);
  return it == map.end() ? nullptr : it->second;
}

tessera_kernel_fn Backend::kernel(std::string_view op, DType dtype) const {
  if (tessera_kernel_fn fn = find_kernel(op, dtype)) return fn;
  std::string supported;
  for (int i = 0; i < kNumDTypes; ++i)
    if (find_kernel(op, static_cast<DType>(i)) != nullptr)
      supported += (supported.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DType>(i)));
  throw Error(fmt::format("op '{}' has no kernel for dtype {} on backend '{}' (it supports: {})", op,
                          dtype_name(dtype), name_, supported.empty() ? "no dtype" : supported));
}

void* Backend::allocate(size_t bytes) const {
  void* data = nullptr;
  tessera_error error{};
  error.struct_size = sizeof(error);
  if (table_->alloc(table_->context, bytes, &data, &error) != TESSERA_OK) {
    throw Error(
        fmt::format("backend '{}' could not allocate {} bytes: {}", name_, bytes, plugin::error_text(error)));
  }
  return data;
}

void Backend::set_num_threads(int32_t num_threads) const {
  // An optional field: present only when the plugin's struct reaches it.
  if (table_->struct_size < offsetof(tessera_backend, set_num_threads) + sizeof(void*) ||
      table_->set_num_threads == nullptr)
    return;
  tessera_error error{};
  error.struct_size = sizeof(error);
  if (table_->set_num_threads(table_->context, num_threads, &error) != TESSERA_OK) {
    observe::logger().warn("backend '{}' could not set its thread count to {}: {}", name_, num_threads,
                           plugin::error_text(error));
  }
}

void Backend::copy(void* dst, const void* src, size_t bytes, int32_t direction) const {
  tessera_error error{};
  error.struct_size = sizeof(error);
  if (table_->copy(table_->context, dst, src, bytes, direction, &error) != TESSERA_OK) {
    throw Error(
        fmt::format("backend '{}' could not copy {} bytes: {}", name_, bytes, plugin::error_text(error)));
  }
}

}  // namespace tessera::dispatch

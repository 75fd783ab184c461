#include "dispatch/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "dispatch/user_call.hpp"
#include "log/log.hpp"
#include "plugin/guarded_call.hpp"
#include "plugin/loaded_plugin.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::dispatch {

thread_local const char* UserCall::current_ = nullptr;

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
    auto it = std::find_if(ops_.begin(), ops_.end(), [&](const OpKernels& k) { return k.op == entry->op; });
    if (it == ops_.end()) it = ops_.insert(ops_.end(), OpKernels{entry->op, {}});
    tessera_kernel_fn& slot = it->by_dtype[static_cast<size_t>(dtype)];
    if (slot == nullptr) slot = entry->fn;  // the first of two entries for one (op, dtype) wins
  }
  index_kernels();
}

namespace {
// FNV-1a: op names are short, and this is cheaper than a general-purpose string hash.
uint64_t op_hash(std::string_view op) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : op) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}
}  // namespace

void Backend::index_kernels() {
  size_t size = 8;
  while (size < 2 * ops_.size()) size *= 2;
  slots_.assign(size, -1);
  for (size_t i = 0; i < ops_.size(); ++i) {
    size_t s = op_hash(ops_[i].op) & (size - 1);
    while (slots_[s] >= 0) s = (s + 1) & (size - 1);
    slots_[s] = static_cast<int32_t>(i);
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
  const size_t mask = slots_.size() - 1;
  for (size_t s = op_hash(op) & mask;; s = (s + 1) & mask) {
    const int32_t i = slots_[s];
    if (i < 0) return nullptr;
    if (ops_[static_cast<size_t>(i)].op == op)
      return ops_[static_cast<size_t>(i)].by_dtype[static_cast<size_t>(dtype)];
  }
}

tessera_kernel_fn Backend::kernel(std::string_view op, DType dtype) const {
  if (tessera_kernel_fn fn = find_kernel(op, dtype)) return fn;
  std::string supported;
  for (int i = 0; i < kNumDTypes; ++i)
    if (find_kernel(op, static_cast<DType>(i)) != nullptr)
      supported += (supported.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DType>(i)));
  const char* call = UserCall::current();
  throw Error(fmt::format(
      "op '{}' has no kernel for dtype {} on backend '{}' (it supports: {}){}", op, dtype_name(dtype), name_,
      supported.empty() ? "no dtype" : supported,
      call == nullptr ? std::string()
                      : fmt::format("; {} needs it (sdk/KERNELS.md, \"What each call needs\")", call)));
}

void* Backend::allocate(size_t bytes) const {
  void* data = nullptr;
  tessera_error error;
  clear_error(error);
  if (plugin::guarded_status(
          "alloc", error, [&] { return table_->alloc(table_->context, bytes, &data, &error); }) != TESSERA_OK)
    throw Error(fmt::format("backend '{}' (plugin {}) could not allocate {} bytes: {}", name_,
                            owner_->info().name, bytes, plugin::error_text(error)));
  // Only a backend of shapes has no bytes to hand out; any other must return memory with success.
  if (data == nullptr && !shapes_only())
    throw Error(
        fmt::format("backend '{}' (plugin {}) reported allocating {} bytes but returned no memory (NULL); a "
                    "backend that cannot allocate must return an error status",
                    name_, owner_->info().name, bytes));
  return data;
}

void Backend::deallocate(void* data) const noexcept {
  // An object in static storage outliving the exit handler that finalized the plugin: the plugin
  // has released its resources, and the process is ending.
  if (owner_->finalized()) return;
  // Called from destructors: a plugin's exception is logged, never let out (it would terminate).
  try {
    const std::string escaped =
        plugin::exception_escaping("free", [&] { table_->free(table_->context, data); });
    if (!escaped.empty())
      observe::logger().error("backend '{}' (plugin {}): {}; the memory may be lost", name_,
                              owner_->info().name, escaped);
  } catch (...) {  // formatting or logging failed: nothing more can be said
  }
}

void Backend::set_num_threads(int32_t num_threads) const {
  // An optional field: present only when the plugin's struct reaches it.
  if (table_->struct_size < offsetof(tessera_backend, set_num_threads) + sizeof(void*) ||
      table_->set_num_threads == nullptr)
    return;
  tessera_error error;
  clear_error(error);
  if (plugin::guarded_status("set_num_threads", error, [&] {
        return table_->set_num_threads(table_->context, num_threads, &error);
      }) != TESSERA_OK) {
    observe::logger().warn("backend '{}' (plugin {}) could not set its thread count to {}: {}", name_,
                           owner_->info().name, num_threads, plugin::error_text(error));
  }
}

void Backend::copy(void* dst, const void* src, size_t bytes, int32_t direction) const {
  tessera_error error;
  clear_error(error);
  if (plugin::guarded_status("copy", error, [&] {
        return table_->copy(table_->context, dst, src, bytes, direction, &error);
      }) != TESSERA_OK) {
    throw Error(fmt::format("backend '{}' (plugin {}) could not copy {} bytes: {}", name_,
                            owner_->info().name, bytes, plugin::error_text(error)));
  }
}

}  // namespace tessera::dispatch

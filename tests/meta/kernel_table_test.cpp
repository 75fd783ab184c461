// The meta backend offers exactly the (op, dtype) kernels the cpu backend offers, so that an op the
// cpu backend refuses for a dtype is refused on meta too, and every op the cpu backend runs has a
// meta kernel. Both tables are read from the shared objects themselves (not through the host).
#include <dlfcn.h>

#include <set>
#include <string>
#include <tuple>

#include "meta_test_support.hpp"
#include "tessera/sdk/backend.h"
#include "tessera/sdk/plugin.h"

namespace {

using KernelKey = std::tuple<std::string, int, int, int>;  // op, dtype code, bits, lanes

// The backend table of the plugin file's only backend component (kept mapped: never dlclosed).
const tessera_backend* backend_table(const char* file) {
  void* handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle != nullptr, dlerror());
  auto query = reinterpret_cast<tessera_plugin_query_fn>(dlsym(handle, TESSERA_PLUGIN_QUERY_SYMBOL));
  REQUIRE((query != nullptr));
  tessera_host_info host{};
  host.struct_size = sizeof(host);
  host.sdk_major = TESSERA_SDK_VERSION_MAJOR;
  host.sdk_minor = TESSERA_SDK_VERSION_MINOR;
  host.host_name = "test_meta";
  tessera_error error{};
  error.struct_size = sizeof(error);
  const tessera_plugin_info* info = nullptr;
  REQUIRE(query(&host, &info, &error) == TESSERA_OK);
  for (size_t i = 0; i < info->num_components; ++i)
    if (info->components[i]->kind == TESSERA_COMPONENT_BACKEND)
      return static_cast<const tessera_backend*>(info->components[i]->table);
  FAIL("no backend component in " << file);
  return nullptr;
}

std::set<KernelKey> kernels_of(const tessera_backend* table) {
  std::set<KernelKey> keys;
  for (size_t i = 0; i < table->num_kernels; ++i) {
    const tessera_kernel* k = table->kernels[i];
    keys.emplace(k->op, k->dtype.code, k->dtype.bits, k->dtype.lanes);
  }
  return keys;
}

uint64_t flags_of(const tessera_backend* table) {
  return table->struct_size >= offsetof(tessera_backend, flags) + sizeof(uint64_t) ? table->flags : 0;
}

std::string text(const KernelKey& k) {
  return std::get<0>(k) + " (code " + std::to_string(std::get<1>(k)) + ", " + std::to_string(std::get<2>(k)) +
         " bits)";
}

}  // namespace

TEST_CASE("the meta backend's kernel table is the cpu backend's, (op, dtype) for (op, dtype)") {
  const std::set<KernelKey> cpu = kernels_of(backend_table(TESSERA_CPU_PLUGIN_FILE));
  const std::set<KernelKey> meta = kernels_of(backend_table(TESSERA_META_PLUGIN_FILE));
  for (const KernelKey& k : cpu)
    CHECK_MESSAGE(meta.count(k) == 1, "cpu has " << text(k) << ", meta does not");
  for (const KernelKey& k : meta)
    CHECK_MESSAGE(cpu.count(k) == 1, "meta has " << text(k) << ", cpu does not");
  // The catalogue (sdk/KERNELS.md) names 63 ops: 28 element-wise (copy, cast, gelu_grad included), 7
  // folds, 5 creation, 9 reductions, 2 products, 2 softmax, SDK 1.6's sin, cos, where, cumsum, gather,
  // scatter_add, and SDK 1.7's layer_norm, rms_norm and their backward kernels.
  // Both tables losing the same ops would show here.
  std::set<std::string> ops;
  for (const KernelKey& k : cpu) ops.insert(std::get<0>(k));
  CHECK(ops.size() == 63);
}

TEST_CASE("meta declares itself shapes-only through the SDK 1.2 flags, cpu does not") {
  const tessera_backend* meta = backend_table(TESSERA_META_PLUGIN_FILE);
  const tessera_backend* cpu = backend_table(TESSERA_CPU_PLUGIN_FILE);
  CHECK(std::string(meta->name) == "meta");
  CHECK(flags_of(meta) == TESSERA_BACKEND_SHAPES_ONLY);
  CHECK(flags_of(cpu) == 0);
}

// Entry point of libtessera-backend-meta.so: one backend, "meta" (PyTorch's device "meta"), whose
// tensors have shapes, dtypes and strides but no values. Every op's shape logic, sharding
// propagation, redistribution planning and collective schedule runs on them in the host; nothing is
// allocated or computed, so a program can be planned at a scale whose data would not fit anywhere.
#include "kernels.hpp"
#include "tessera/sdk/cpp/errors.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

// No memory: a tensor of any size costs its metadata only. The host records the size and checks
// every view against it as for any backend, and never dereferences the pointer.
tessera_status alloc(void*, size_t, void** out, tessera_error*) {
  *out = nullptr;
  return TESSERA_OK;
}

void release(void*, void*) {}

// Values written into a meta tensor are dropped; reading one is an error (the host says so before it
// gets here; this is for any other reader).
tessera_status copy(void*, void*, const void*, size_t, int32_t direction, tessera_error* error) {
  if (direction == TESSERA_COPY_DEVICE_TO_HOST)
    return tessera::sdk::report(
        error, TESSERA_INVALID_ARGUMENT,
        "values of a tensor on the meta backend cannot be read: it holds shapes only");
  return TESSERA_OK;
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Static: the host keeps pointers into the table until the plugin is unloaded. kDLExtDev: no
  // device holds the (absent) data.
  static tessera::sdk::BackendBuilder meta("meta", kDLExtDev);
  tessera::meta::register_kernels(meta);
  meta.memory(&alloc, &release, &copy);
  meta.flags(TESSERA_BACKEND_SHAPES_ONLY);
  plugin.add_backend(meta);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("backend-meta", "0.1.0",
                      "shapes, dtypes and strides without values, for planning at scale", describe)

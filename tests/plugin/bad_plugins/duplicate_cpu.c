/* A plugin that is valid on its own but offers a backend named "cpu", which backend-cpu already
 * provides: the host must reject it and keep the first. */
#include "bad_plugin.h"

static const tessera_kernel fill = {.struct_size = sizeof(tessera_kernel),
                                    .op = "fill",
                                    .dtype = BAD_PLUGIN_FLOAT32,
                                    .fn = bad_plugin_noop_kernel};
static const tessera_kernel* const kernels[] = {&fill};
static const tessera_backend backend = {.struct_size = sizeof(tessera_backend),
                                        .name = "cpu", /* the defect: taken */
                                        .device_type = kDLCPU,
                                        .alloc = bad_plugin_alloc,
                                        .free = bad_plugin_free,
                                        .copy = bad_plugin_copy,
                                        .num_kernels = 1,
                                        .kernels = kernels};
static const tessera_component component = {.struct_size = sizeof(tessera_component),
                                            .kind = TESSERA_COMPONENT_BACKEND,
                                            .name = "cpu",
                                            .table = &backend};
static const tessera_component* const components[] = {&component};
static const tessera_plugin_info info = {.struct_size = sizeof(tessera_plugin_info),
                                         .sdk_major = TESSERA_SDK_VERSION_MAJOR,
                                         .sdk_minor = TESSERA_SDK_VERSION_MINOR,
                                         .name = "bad-duplicate-cpu",
                                         .version = "1.0",
                                         .description = "a second backend named cpu",
                                         .num_components = 1,
                                         .components = components};

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)host;
  (void)error;
  *out = &info;
  return TESSERA_OK;
}

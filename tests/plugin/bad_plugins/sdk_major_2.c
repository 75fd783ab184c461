/* Defect: the plugin says it was built against SDK 2.0; this host speaks SDK major 1. */
#include "bad_plugin.h"

static const tessera_kernel fill = {.struct_size = sizeof(tessera_kernel),
                                    .op = "fill",
                                    .dtype = BAD_PLUGIN_FLOAT32,
                                    .fn = bad_plugin_noop_kernel};
static const tessera_kernel* const kernels[] = {&fill};
static const tessera_backend backend = {.struct_size = sizeof(tessera_backend),
                                        .name = "bad-major",
                                        .device_type = kDLCPU,
                                        .alloc = bad_plugin_alloc,
                                        .free = bad_plugin_free,
                                        .copy = bad_plugin_copy,
                                        .num_kernels = 1,
                                        .kernels = kernels};
static const tessera_component component = {.struct_size = sizeof(tessera_component),
                                            .kind = TESSERA_COMPONENT_BACKEND,
                                            .name = "bad-major",
                                            .table = &backend};
static const tessera_component* const components[] = {&component};
static const tessera_plugin_info info = {.struct_size = sizeof(tessera_plugin_info),
                                         .sdk_major = 2, /* the defect */
                                         .sdk_minor = 0,
                                         .name = "bad-sdk-major-2",
                                         .version = "1.0",
                                         .description = "claims SDK 2.0",
                                         .num_components = 1,
                                         .components = components};

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)host;
  (void)error;
  *out = &info;
  return TESSERA_OK;
}

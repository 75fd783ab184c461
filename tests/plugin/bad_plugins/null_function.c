/* Defect: one required memory function of the backend is NULL. Built three times, with
 * BAD_NULL_ALLOC, BAD_NULL_FREE or BAD_NULL_COPY defined. */
#include "bad_plugin.h"

#if defined(BAD_NULL_ALLOC)
#define PLUGIN_NAME "bad-null-alloc"
#define ALLOC_FN NULL /* the defect */
#else
#define ALLOC_FN bad_plugin_alloc
#endif
#if defined(BAD_NULL_FREE)
#define PLUGIN_NAME "bad-null-free"
#define FREE_FN NULL /* the defect */
#else
#define FREE_FN bad_plugin_free
#endif
#if defined(BAD_NULL_COPY)
#define PLUGIN_NAME "bad-null-copy"
#define COPY_FN NULL /* the defect */
#else
#define COPY_FN bad_plugin_copy
#endif

static const tessera_kernel fill = {.struct_size = sizeof(tessera_kernel),
                                    .op = "fill",
                                    .dtype = BAD_PLUGIN_FLOAT32,
                                    .fn = bad_plugin_noop_kernel};
static const tessera_kernel* const kernels[] = {&fill};
static const tessera_backend backend = {.struct_size = sizeof(tessera_backend),
                                        .name = PLUGIN_NAME,
                                        .device_type = kDLCPU,
                                        .alloc = ALLOC_FN,
                                        .free = FREE_FN,
                                        .copy = COPY_FN,
                                        .num_kernels = 1,
                                        .kernels = kernels};
static const tessera_component component = {.struct_size = sizeof(tessera_component),
                                            .kind = TESSERA_COMPONENT_BACKEND,
                                            .name = PLUGIN_NAME,
                                            .table = &backend};
static const tessera_component* const components[] = {&component};
static const tessera_plugin_info info = {.struct_size = sizeof(tessera_plugin_info),
                                         .sdk_major = TESSERA_SDK_VERSION_MAJOR,
                                         .sdk_minor = TESSERA_SDK_VERSION_MINOR,
                                         .name = PLUGIN_NAME,
                                         .version = "1.0",
                                         .description = "a required backend function is NULL",
                                         .num_components = 1,
                                         .components = components};

BAD_PLUGIN_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                      const tessera_plugin_info** out, tessera_error* error) {
  (void)host;
  (void)error;
  *out = &info;
  return TESSERA_OK;
}

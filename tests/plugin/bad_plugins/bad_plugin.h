/* Shared pieces of the deliberately broken test plugins: a complete, valid plugin (one backend
 * with working host memory and a "fill" kernel that does nothing), filled by hand with the C
 * structs. Each test plugin starts from it and breaks exactly one field, so that defect is the
 * only thing wrong with it and stands out in its source. */
#ifndef TESSERA_TEST_BAD_PLUGIN_H
#define TESSERA_TEST_BAD_PLUGIN_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/sdk/backend.h"
#include "one_component.h"
#include "tessera/sdk/plugin.h"

#define BAD_PLUGIN_EXPORT __attribute__((visibility("default")))
#define BAD_PLUGIN_FLOAT32 \
  { kDLFloat, 32, 1 }

static inline tessera_status bad_plugin_alloc(void* context, size_t bytes, void** out, tessera_error* error) {
  (void)context;
  (void)error;
  *out = aligned_alloc(64, bytes == 0 ? 64 : (bytes + 63) / 64 * 64);
  return *out ? TESSERA_OK : TESSERA_OUT_OF_MEMORY;
}

static inline void bad_plugin_free(void* context, void* ptr) {
  (void)context;
  free(ptr);
}

static inline tessera_status bad_plugin_copy(void* context, void* dst, const void* src, size_t bytes,
                                             int32_t direction, tessera_error* error) {
  (void)context;
  (void)direction;
  (void)error;
  if (bytes != 0) memcpy(dst, src, bytes);
  return TESSERA_OK;
}

static inline tessera_status bad_plugin_noop_kernel(void* context, const tessera_kernel_call* call,
                                                    tessera_error* error) {
  (void)context;
  (void)call;
  (void)error;
  return TESSERA_OK;
}

/* Everything one valid plugin needs, with two kernel slots (the second unused unless a plugin adds
 * one). */
struct bad_plugin {
  tessera_kernel kernels[2];
  const tessera_kernel* kernel_list[2];
  tessera_backend backend;
  tessera_component component;
  const tessera_component* component_list[1];
  tessera_plugin_info info;
};

/* Fills `p` as a valid plugin and backend both called `name`; returns its info. */
static inline tessera_plugin_info* bad_plugin_valid(struct bad_plugin* p, const char* name,
                                                    const char* description) {
  const tessera_kernel fill = {sizeof(tessera_kernel), "fill", BAD_PLUGIN_FLOAT32, bad_plugin_noop_kernel};
  memset(p, 0, sizeof(*p));
  p->kernels[0] = fill;
  p->kernel_list[0] = &p->kernels[0];
  p->kernel_list[1] = &p->kernels[1];
  p->backend.struct_size = sizeof(tessera_backend);
  p->backend.name = name;
  p->backend.device_type = kDLCPU;
  p->backend.alloc = bad_plugin_alloc;
  p->backend.free = bad_plugin_free;
  p->backend.copy = bad_plugin_copy;
  p->backend.num_kernels = 1;
  p->backend.kernels = p->kernel_list;
  return one_component_plugin(&p->info, &p->component, p->component_list, TESSERA_COMPONENT_BACKEND,
                              &p->backend, name, description);
}

/* The entry point of a plugin whose one defect `BREAK` (a statement on `plugin`) applies to an
 * otherwise valid plugin. */
#define BAD_PLUGIN_QUERY(NAME, DESCRIPTION, BREAK) \
  ONE_COMPONENT_QUERY(bad_plugin, bad_plugin_valid(&plugin, NAME, DESCRIPTION), BREAK)

#endif

/* Shared pieces of the deliberately broken test plugins: working host-memory functions and a
 * kernel that does nothing, so that each plugin's one defect is the only thing wrong with it.
 * Every plugin fills its tables by hand with the C structs, to make the defect explicit. */
#ifndef TESSERA_TEST_BAD_PLUGIN_H
#define TESSERA_TEST_BAD_PLUGIN_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/plugin.h"

#define BAD_PLUGIN_EXPORT __attribute__((visibility("default")))
#define BAD_PLUGIN_FLOAT32 \
  { kDLFloat, 32, 1 }

static inline tessera_status bad_plugin_alloc(void* context, size_t bytes, void** out, tessera_error* error) {
  (void)context;
  (void)error;
  *out = aligned_alloc(64, bytes == 0 ? 64 : (bytes + 63) / 64 * 64);
  return *out != NULL ? TESSERA_OK : TESSERA_OUT_OF_MEMORY;
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

#endif

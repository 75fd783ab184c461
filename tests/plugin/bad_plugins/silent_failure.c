/* Defect: the "fill" kernel fails (TESSERA_INTERNAL) without writing a message. */
#include "bad_plugin.h"

static tessera_status fail_silently(void* context, const tessera_kernel_call* call, tessera_error* error) {
  (void)context;
  (void)call;
  (void)error;
  return TESSERA_INTERNAL;
}

BAD_PLUGIN_QUERY("bad-silent-failure", "kernel that fails without a message",
                 plugin.kernels[0].fn = fail_silently)

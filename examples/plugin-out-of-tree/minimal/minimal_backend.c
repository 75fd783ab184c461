/* libtessera-backend-plainc.so: a backend in plain C11, without the C++ helpers: host memory and one
 * kernel, float32 "fill". The tables are static: they must stay valid until the plugin is unloaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/sdk/backend.h"
#include "tessera/sdk/plugin.h"

static tessera_status fail(tessera_error* error, tessera_status code, const char* message) {
  error->code = code;
  snprintf(error->message, sizeof error->message, "%s", message); /* cut at 511 bytes */
  return code;
}

static tessera_status alloc_host(void* context, size_t bytes, void** out, tessera_error* error) {
  (void)context;
  *out = aligned_alloc(64, bytes == 0 ? 64 : (bytes + 63) / 64 * 64); /* a multiple of the alignment */
  return *out != NULL ? TESSERA_OK : fail(error, TESSERA_OUT_OF_MEMORY, "plainc: host allocation failed");
}

static void free_host(void* context, void* ptr) {
  (void)context;
  free(ptr);
}

static tessera_status copy_host(void* context, void* dst, const void* src, size_t bytes, int32_t direction,
                                tessera_error* error) {
  (void)context, (void)direction, (void)error; /* every direction is a memcpy on the CPU */
  if (bytes != 0) memcpy(dst, src, bytes);
  return TESSERA_OK;
}

/* fill: out[...] = value, for any strides. The host passes value as a FLOAT attribute. */
static tessera_status fill_f32(void* context, const tessera_kernel_call* call, tessera_error* error) {
  (void)context;
  if (call->num_inputs != 0 || call->num_outputs != 1)
    return fail(error, TESSERA_INVALID_ARGUMENT, "fill: expected 0 inputs and 1 output");
  const tessera_attr* value = NULL;
  for (size_t i = 0; i < call->num_attrs; ++i)
    if (strcmp(call->attrs[i]->name, "value") == 0) value = call->attrs[i];
  if (value == NULL || value->kind != TESSERA_ATTR_FLOAT)
    return fail(error, TESSERA_INVALID_ARGUMENT, "fill: expected a FLOAT attribute 'value'");
  const DLTensor* out = &call->outputs[0];
  int64_t numel = 1;
  for (int d = 0; d < out->ndim; ++d) numel *= out->shape[d];
  float* data = (float*)((char*)out->data + out->byte_offset);
  for (int64_t i = 0; i < numel; ++i) { /* the offset of row-major element i, from the strides */
    int64_t offset = 0, rest = i;
    for (int d = out->ndim - 1; d >= 0; --d) {
      offset += (rest % out->shape[d]) * out->strides[d];
      rest /= out->shape[d];
    }
    data[offset] = (float)value->float_value;
  }
  return TESSERA_OK;
}

static const tessera_kernel fill_kernel = {sizeof(tessera_kernel), "fill", {kDLFloat, 32, 1}, &fill_f32};
static const tessera_kernel* const kernels[] = {&fill_kernel};

/* clang-format off */
static const tessera_backend backend = {
    .struct_size = sizeof(tessera_backend), .name = "plainc", .device_type = kDLCPU, .alloc = &alloc_host,
    .free = &free_host, .copy = &copy_host, .num_kernels = 1, .kernels = kernels};
static const tessera_component component = {
    .struct_size = sizeof(tessera_component), .kind = TESSERA_COMPONENT_BACKEND, .name = "plainc", .table = &backend};
static const tessera_component* const components[] = {&component};
static const tessera_plugin_info info = {
    .struct_size = sizeof(tessera_plugin_info), .sdk_major = TESSERA_SDK_VERSION_MAJOR,
    .sdk_minor = TESSERA_SDK_VERSION_MINOR, .name = "backend-plainc", .version = "0.1.0",
    .description = "float32 fill, in plain C", .num_components = 1, .components = components};
/* clang-format on */

/* The one exported symbol (tessera_add_plugin hides all others). */
__attribute__((visibility("default"))) tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                                           const tessera_plugin_info** out,
                                                                           tessera_error* error) {
  if (host->sdk_major != TESSERA_SDK_VERSION_MAJOR)
    return fail(error, TESSERA_VERSION_MISMATCH, "backend-plainc needs a host of SDK major 1");
  *out = &info;
  return TESSERA_OK;
}

/* The backend component: one device kind, its memory, and its kernels.
 *
 * The core has no kernels of its own. Every computation is a call to a kernel that a backend
 * registered under (op name, dtype); all kernels share one signature: inputs, outputs, attributes.
 *
 * Kernel contract:
 *  - inputs and outputs are DLTensors on the backend's device. Shapes and strides are in elements;
 *    strides are never NULL and may be 0 (a broadcast dimension) or describe any view. Outputs are
 *    allocated by the host; a kernel writes every element of every output and nothing else.
 *  - the dtype a kernel is registered under is the dtype of its first input (of its first output
 *    for kernels without inputs, such as "fill"). sdk/KERNELS.md (installed as
 *    share/doc/tessera/sdk/KERNELS.md) names every op's inputs, outputs and attributes, and which
 *    kernels each user call needs.
 *  - a kernel may be called from several threads at once on different data; it must not keep
 *    pointers to its arguments after returning.
 *  - on failure a kernel returns a non-OK status and writes a message into *error; it never throws
 *    and never aborts. */
#ifndef TESSERA_SDK_BACKEND_H
#define TESSERA_SDK_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "tessera/sdk/dtype.h"
#include "tessera/sdk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TESSERA_ATTR_INT = 1, TESSERA_ATTR_FLOAT = 2, TESSERA_ATTR_INTS = 3 };

/* A named kernel parameter (a dim, a scalar, a seed). Exactly the field its kind names is valid. */
typedef struct tessera_attr {
  size_t struct_size;
  const char* name;
  int32_t kind;
  int64_t int_value;
  double float_value;
  const int64_t* ints;
  size_t num_ints;
} tessera_attr;

/* Everything a kernel receives; valid only for the duration of the call. */
typedef struct tessera_kernel_call {
  size_t struct_size;
  void* extension;
  const DLTensor* inputs;
  size_t num_inputs;
  const DLTensor* outputs;
  size_t num_outputs;
  const tessera_attr* const* attrs;
  size_t num_attrs;
} tessera_kernel_call;

typedef tessera_status (*tessera_kernel_fn)(void* backend_context, const tessera_kernel_call* call,
                                            tessera_error* error);

typedef struct tessera_kernel {
  size_t struct_size;
  const char* op; /* e.g. "add", "mm", "sum" */
  DLDataType dtype;
  tessera_kernel_fn fn;
} tessera_kernel;

enum { TESSERA_COPY_HOST_TO_DEVICE = 1, TESSERA_COPY_DEVICE_TO_HOST = 2, TESSERA_COPY_DEVICE_TO_DEVICE = 3 };

/* Owned by the plugin; valid until the plugin is unloaded. alloc, free, copy and the kernel table
 * are required (the host rejects a backend lacking any of them); every function is thread-safe.
 * Fields after `kernels` are optional: NULL (0), or absent when struct_size ends before them. */
typedef struct tessera_backend {
  size_t struct_size;
  void* extension;
  const char* name;    /* e.g. "cpu"; how users and config files name this backend */
  int32_t device_type; /* a DLDeviceType */
  void* context;       /* passed back unchanged to every function below */
  /* Allocates `bytes` (which may be 0) aligned to at least 64 bytes. */
  tessera_status (*alloc)(void* context, size_t bytes, void** out, tessera_error* error);
  void (*free)(void* context, void* ptr);
  tessera_status (*copy)(void* context, void* dst, const void* src, size_t bytes, int32_t direction,
                         tessera_error* error);
  size_t num_kernels;
  const tessera_kernel* const* kernels;
  /* How many threads one kernel call may use; 0 restores the backend's default. The host sets 1
   * while it runs several ranks' kernels in parallel, so that a multi-threaded library (OpenBLAS)
   * does not oversubscribe the cores. Optional. */
  tessera_status (*set_num_threads)(void* context, int32_t num_threads, tessera_error* error);
  /* SDK 1.2: TESSERA_BACKEND_* bits saying what kind of backend this is. A table from an older SDK
   * ends before this field, which then reads as 0: an ordinary backend. */
  uint64_t flags;
} tessera_backend;

/* SDK 1.2: tensors on this backend have shapes, dtypes and strides but no values (PyTorch's "meta"
 * device), so that a program's shapes, layouts and communication can be planned at any scale.
 * Its alloc hands out no memory (it may set *out to NULL for any size), its kernels compute
 * nothing (it registers them so that the host finds the same (op, dtype) pairs as on a computing
 * backend), and the host never reads values from it: reading one is an error naming the backend.
 * Collectives on its tensors build, verify, cost and report their schedules but move no data. */
#define TESSERA_BACKEND_SHAPES_ONLY ((uint64_t)1)

#ifdef __cplusplus
}
#endif

#endif

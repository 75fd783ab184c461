/* Defect in the kernel table: a second kernel entry (#1) beside the valid float32 "fill" (#0).
 *  KERNEL_RELU      - op "Relu" (the catalogue, sdk/KERNELS.md, says "relu")
 *  KERNEL_MATMUL    - op "matmul" (the catalogue says "mm")
 *  KERNEL_DUPLICATE - a second float32 "fill": two functions for one (op, dtype)
 *  KERNEL_LANES_4   - op "add" for float32 with 4 lanes, a vector dtype
 *  KERNEL_FUTURE_OP - op "future_op", which this host's catalogue lacks, from a plugin built for
 *                     the next SDK minor (whose catalogue might have it): accepted, not rejected
 *  KERNEL_FOLD_SDK13 - op "fold_add" from a plugin built for SDK 1.3, whose catalogue did not have
 *                     the folds yet (they came with 1.4)
 *  KERNEL_SIN_SDK15  - op "sin" from a plugin built for SDK 1.5, whose catalogue did not have it yet
 *                     (it came with 1.6)
 *  KERNEL_GATHER_SDK15 - op "gather" from a plugin built for SDK 1.5 (the indexing kernels came
 *                     with 1.6)
 *  KERNEL_NORM_SDK16 - op "layer_norm" from a plugin built for SDK 1.6 (the normalisation kernels
 *                     came with 1.7) */
#include "bad_plugin.h"

#define SECOND_KERNEL(OP, DTYPE)                                                                    \
  (plugin.kernels[1] = (tessera_kernel){sizeof(tessera_kernel), OP, DTYPE, bad_plugin_noop_kernel}, \
   plugin.backend.num_kernels = 2)

#if defined(KERNEL_RELU)
BAD_PLUGIN_QUERY("bad-kernel-relu", "kernel op Relu", SECOND_KERNEL("Relu", BAD_PLUGIN_FLOAT32))
#elif defined(KERNEL_MATMUL)
BAD_PLUGIN_QUERY("bad-kernel-matmul", "kernel op matmul", SECOND_KERNEL("matmul", BAD_PLUGIN_FLOAT32))
#elif defined(KERNEL_DUPLICATE)
BAD_PLUGIN_QUERY("bad-kernel-duplicate", "two float32 fill kernels",
                 SECOND_KERNEL("fill", BAD_PLUGIN_FLOAT32))
#elif defined(KERNEL_LANES_4)
BAD_PLUGIN_QUERY("bad-kernel-lanes-4", "a float32x4 kernel",
                 SECOND_KERNEL("add", ((DLDataType){kDLFloat, 32, 4})))
#elif defined(KERNEL_FUTURE_OP)
BAD_PLUGIN_QUERY("bad-kernel-future-op", "a kernel op from a newer catalogue",
                 (SECOND_KERNEL("future_op", BAD_PLUGIN_FLOAT32),
                  plugin.info.sdk_minor = TESSERA_SDK_VERSION_MINOR + 1))
#elif defined(KERNEL_FOLD_SDK13)
BAD_PLUGIN_QUERY("bad-kernel-fold-sdk13", "a fold kernel from an SDK 1.3 plugin",
                 (SECOND_KERNEL("fold_add", BAD_PLUGIN_FLOAT32), plugin.info.sdk_minor = 3))
#elif defined(KERNEL_SIN_SDK15)
BAD_PLUGIN_QUERY("bad-kernel-sin-sdk15", "a sin kernel from an SDK 1.5 plugin",
                 (SECOND_KERNEL("sin", BAD_PLUGIN_FLOAT32), plugin.info.sdk_minor = 5))
#elif defined(KERNEL_GATHER_SDK15)
BAD_PLUGIN_QUERY("bad-kernel-gather-sdk15", "an indexing kernel from an SDK 1.5 plugin",
                 (SECOND_KERNEL("gather", BAD_PLUGIN_FLOAT32), plugin.info.sdk_minor = 5))
#elif defined(KERNEL_NORM_SDK16)
BAD_PLUGIN_QUERY("bad-kernel-norm-sdk16", "a normalisation kernel from an SDK 1.6 plugin",
                 (SECOND_KERNEL("layer_norm", BAD_PLUGIN_FLOAT32), plugin.info.sdk_minor = 6))
#else
#error "define one KERNEL_* defect"
#endif

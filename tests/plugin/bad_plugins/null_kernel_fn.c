/* Defect: the second kernel entry ("copy") has a NULL function pointer. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("bad-null-kernel", "kernel with a NULL function",
                 (plugin.kernels[1] = (tessera_kernel){sizeof(tessera_kernel), "copy", BAD_PLUGIN_FLOAT32,
                                                       NULL},
                  plugin.backend.num_kernels = 2))

/* Defect: the tessera_backend table's struct_size stops before the memory functions. */
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("bad-small-backend", "truncated backend table",
                 plugin.backend.struct_size = offsetof(tessera_backend, alloc))

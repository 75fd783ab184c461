/* Defect: one required memory function of the backend is NULL. Built three times, with
 * BAD_NULL_ALLOC, BAD_NULL_FREE or BAD_NULL_COPY defined. */
#include "bad_plugin.h"

#if defined(BAD_NULL_ALLOC)
BAD_PLUGIN_QUERY("bad-null-alloc", "backend without alloc", plugin.backend.alloc = NULL)
#elif defined(BAD_NULL_FREE)
BAD_PLUGIN_QUERY("bad-null-free", "backend without free", plugin.backend.free = NULL)
#else
BAD_PLUGIN_QUERY("bad-null-copy", "backend without copy", plugin.backend.copy = NULL)
#endif

/* Defect: the component's name differs from the name in its table.
 *  NAME_MISMATCH_BACKEND    - component "bad-name-mismatch", backend table "bad-name-mismatch-table"
 *  NAME_MISMATCH_COLLECTIVE - component "bad-coll-name-mismatch", algorithm table "ring-by-another-name" */
#if defined(NAME_MISMATCH_BACKEND)
#include "bad_plugin.h"

BAD_PLUGIN_QUERY("bad-name-mismatch", "backend whose table has another name",
                 plugin.backend.name = "bad-name-mismatch-table")
#elif defined(NAME_MISMATCH_COLLECTIVE)
#include "bad_collective.h"

ONE_COMPONENT_QUERY(bad_collective,
                    bad_collective_valid(&plugin, "bad-coll-name-mismatch",
                                         "algorithm whose table has another name", BAD_COLLECTIVE_NONE),
                    plugin.algorithm.name = "ring-by-another-name")
#else
#error "define NAME_MISMATCH_BACKEND or NAME_MISMATCH_COLLECTIVE"
#endif

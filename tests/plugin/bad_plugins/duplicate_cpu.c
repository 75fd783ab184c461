/* A plugin that is valid on its own but offers a backend named CLAIMED_BACKEND ("cpu" unless
 * defined), which a bundled plugin already provides (backend-cpu, backend-meta): the host must
 * reject it and keep the bundled one, also when the name was never used before the claim. */
#include "bad_plugin.h"

#ifndef CLAIMED_BACKEND
#define CLAIMED_BACKEND "cpu"
#define CLAIM_PLUGIN_NAME "bad-duplicate-cpu"
#endif

BAD_PLUGIN_QUERY(CLAIM_PLUGIN_NAME, "a second backend named " CLAIMED_BACKEND,
                 (plugin.backend.name = CLAIMED_BACKEND, plugin.component.name = CLAIMED_BACKEND))

/* Defect: an `extension` pointer that SDK 1.x says must be NULL is set (to a valid, readable
 * struct, so only the host's refusal keeps it from being followed).
 *  EXTENSION_INFO      - in tessera_plugin_info
 *  EXTENSION_COMPONENT - in the tessera_component
 *  EXTENSION_BACKEND   - in the tessera_backend table */
#include "bad_plugin.h"

static struct {
  size_t struct_size;
  int32_t type;
  void* next;
} extension = {sizeof(extension), 1, NULL};

#if defined(EXTENSION_INFO)
BAD_PLUGIN_QUERY("bad-extension-info", "extension set in the plugin info", plugin.info.extension = &extension)
#elif defined(EXTENSION_COMPONENT)
BAD_PLUGIN_QUERY("bad-extension-component", "extension set in the component",
                 plugin.component.extension = &extension)
#elif defined(EXTENSION_BACKEND)
BAD_PLUGIN_QUERY("bad-extension-backend", "extension set in the backend table",
                 plugin.backend.extension = &extension)
#else
#error "define EXTENSION_INFO, EXTENSION_COMPONENT or EXTENSION_BACKEND"
#endif

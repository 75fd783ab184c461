/* The plugin info and component list of a test plugin that provides one component, filled by hand
 * with the C structs; shared by the broken backends (bad_plugin.h) and the broken collective
 * algorithms (bad_collective.h), which each break something else. */
#ifndef TESSERA_TEST_ONE_COMPONENT_H
#define TESSERA_TEST_ONE_COMPONENT_H

#include "tessera/sdk/plugin.h"

/* Fills `component` (of `kind`, with `table`) and `info` (a valid SDK version, naming the plugin
 * `name` like its component); `list` gets the component. Returns `info`. */
static inline tessera_plugin_info* one_component_plugin(tessera_plugin_info* info,
                                                        tessera_component* component,
                                                        const tessera_component** list, int32_t kind,
                                                        const void* table, const char* name,
                                                        const char* description) {
  component->struct_size = sizeof(tessera_component);
  component->kind = kind;
  component->name = name;
  component->table = table;
  list[0] = component;
  info->struct_size = sizeof(tessera_plugin_info);
  info->sdk_major = TESSERA_SDK_VERSION_MAJOR;
  info->sdk_minor = TESSERA_SDK_VERSION_MINOR;
  info->name = name;
  info->version = "1.0";
  info->description = description;
  info->num_components = 1;
  info->components = list;
  return info;
}

/* The entry point of a one-component test plugin kept in `static struct STRUCT plugin`: `FILL` (an
 * expression on `plugin`) makes it valid and yields its info, then `BREAK` (a statement on
 * `plugin`) changes the one thing the test is about. */
#define ONE_COMPONENT_QUERY(STRUCT, FILL, BREAK)                                              \
  static struct STRUCT plugin;                                                                \
  __attribute__((visibility("default"))) tessera_status tessera_plugin_query(                 \
      const tessera_host_info* host, const tessera_plugin_info** out, tessera_error* error) { \
    (void)host;                                                                               \
    (void)error;                                                                              \
    *out = FILL;                                                                              \
    BREAK;                                                                                    \
    return TESSERA_OK;                                                                        \
  }

#endif

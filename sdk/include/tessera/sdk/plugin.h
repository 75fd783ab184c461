/* The one entry point of a Tessera plugin and the structs it exchanges with the host.
 *
 * A shared object exports exactly one symbol, tessera_plugin_query. The host calls it once after
 * loading, passing what it supports; the plugin answers with a description of itself and of the
 * components it holds (a backend, a collective algorithm, a placement strategy, and since SDK 1.1 a
 * transport; several may share one .so). The host validates everything (major version, struct sizes, required function pointers)
 * before it calls anything else in the plugin.
 *
 * Struct rules (all SDK structs):
 *  - the first field is size_t struct_size, set by whoever fills the struct to sizeof of the struct
 *    it was compiled against; fields are only ever appended, so a reader treats every field lying
 *    past struct_size as absent;
 *  - `extension` pointers are reserved for optional feature chains and must be NULL in v1;
 *  - arrays of SDK structs are passed as arrays of pointers, so a struct that grows does not change
 *    the array's stride. */
#ifndef TESSERA_SDK_PLUGIN_H
#define TESSERA_SDK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/sdk/status.h"
#include "tessera/sdk/version.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TESSERA_COMPONENT_BACKEND = 1,
  TESSERA_COMPONENT_COLLECTIVE_ALGORITHM = 2,
  TESSERA_COMPONENT_PLACEMENT = 3,
  TESSERA_COMPONENT_TRANSPORT = 4 /* SDK 1.1: table is a tessera_transport (transport.h) */
};

enum { TESSERA_LOG_DEBUG = 0, TESSERA_LOG_INFO = 1, TESSERA_LOG_WARN = 2, TESSERA_LOG_ERROR = 3 };

/* Filled by the host; valid only for the duration of the query call. */
typedef struct tessera_host_info {
  size_t struct_size;
  void* extension;
  uint32_t sdk_major; /* the host's TESSERA_SDK_VERSION_MAJOR */
  uint32_t sdk_minor; /* the newest minor the host understands */
  const char* host_name; /* e.g. "tessera 0.1.0" */
  /* May be NULL. Thread-safe; the plugin may keep the pointer for as long as it is loaded. */
  void (*log)(int32_t level, const char* message);
} tessera_host_info;

/* One component. `table` points to the kind's own struct (tessera_backend for
 * TESSERA_COMPONENT_BACKEND), whose first field is its struct_size. A host rejects a kind it does
 * not know from a plugin built for an SDK minor it knows (a defect), and skips it (with a log line)
 * from a plugin built for a newer minor (a kind added after the host was built). */
typedef struct tessera_component {
  size_t struct_size;
  void* extension;
  int32_t kind;
  const char* name; /* unique per kind among loaded plugins, e.g. "cpu" */
  const void* table;
} tessera_component;

/* Owned by the plugin; must stay valid and unchanged until the shared object is unloaded. */
typedef struct tessera_plugin_info {
  size_t struct_size;
  void* extension;
  uint32_t sdk_major; /* the SDK the plugin was built against */
  uint32_t sdk_minor;
  const char* name; /* e.g. "backend-cpu" */
  const char* version; /* the plugin's own version text */
  const char* description;
  size_t num_components;
  const tessera_component* const* components;
} tessera_plugin_info;

/* Returns TESSERA_OK and sets *info, or a status with a message in *error (for instance when the
 * host's major version is one the plugin cannot work with). Called once per load, on one thread. */
typedef tessera_status (*tessera_plugin_query_fn)(const tessera_host_info* host,
                                                  const tessera_plugin_info** info,
                                                  tessera_error* error);

#define TESSERA_PLUGIN_QUERY_SYMBOL "tessera_plugin_query"

#ifdef __cplusplus
}
#endif

#endif

/* The one entry point of a Tessera plugin and the structs it exchanges with the host.
 *
 * A shared object exports exactly one symbol, tessera_plugin_query. The host calls it once after
 * loading, passing what it supports; the plugin answers with a description of itself and of the
 * components it holds (a backend, a collective algorithm, a placement strategy, since SDK 1.1 a
 * transport and since SDK 1.5 a tuner; several may share one .so). The host validates everything (major version, struct sizes, required function pointers)
 * before it calls anything else in the plugin.
 *
 * Struct rules (all SDK structs):
 *  - the first field is size_t struct_size, set by whoever fills the struct to sizeof of the struct
 *    it was compiled against; fields are only ever appended, so a reader treats every field lying
 *    past struct_size as absent;
 *  - `extension` pointers are NULL or point to a typed extension chain (tessera_extension, SDK
 *    1.3): a list of structs the reader walks, using the entries whose type it knows and skipping
 *    the others. Before 1.3 they had to be NULL;
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
  TESSERA_COMPONENT_TRANSPORT = 4, /* SDK 1.1: table is a tessera_transport (transport.h) */
  TESSERA_COMPONENT_TUNER = 5      /* SDK 1.5: table is a tessera_tuner (tuner.h) */
};

enum { TESSERA_LOG_DEBUG = 0, TESSERA_LOG_INFO = 1, TESSERA_LOG_WARN = 2, TESSERA_LOG_ERROR = 3 };

/* SDK 1.3: the header every extension struct begins with. An `extension` field points to the first
 * entry of a chain (or is NULL); `next` links the entries. A reader uses the entries whose `type`
 * it knows, reading at most struct_size bytes of each, and skips the rest, so that either side can
 * offer a feature the other may not know. The host rejects a malformed chain (an entry whose
 * struct_size is smaller than this header, or a chain longer than TESSERA_EXTENSION_CHAIN_MAX,
 * which a cycle would make) naming the plugin, the struct and the entry's position.
 * No extension type is defined by SDK 1.3 itself: types from TESSERA_EXTENSION_USER up are free for
 * agreements between a host and its plugins. */
typedef struct tessera_extension {
  size_t struct_size; /* of the whole extension struct, header included */
  int32_t type;
  const struct tessera_extension* next;
} tessera_extension;

#define TESSERA_EXTENSION_CHAIN_MAX 64
#define TESSERA_EXTENSION_USER 0x10000

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
  /* SDK 1.3: TESSERA_COMPONENT_* bits. */
  uint64_t flags;
} tessera_component;

/* SDK 1.3: the component replaces a loaded component of the same kind and name (for a placement
 * strategy, also one with the same prefix), for instance a built-in "ring" algorithm. Without this
 * bit a clash is an error; with it the host still refuses unless its configuration allows
 * overriding ([plugins] allow_override = true, TESSERA_PLUGIN_ALLOW_OVERRIDE=1). */
#define TESSERA_COMPONENT_OVERRIDES ((uint64_t)1)

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

  /* SDK 1.3, all optional (NULL): the plugin's lifecycle and parameters. `context` is passed back
   * unchanged to each of them. */
  void* context;
  /* Called once, after the host has validated the plugin and before any component is used; a
   * non-OK status rejects the plugin with its message (and finalize is not called). */
  tessera_status (*init)(void* context, const tessera_host_info* host, tessera_error* error);
  /* Called once before the shared object is unloaded (the unload callback), after the host's last
   * call into any component. Must not fail. */
  void (*finalize)(void* context);
  /* Configuration parameters, MCA-style: every key of the section [plugins.<plugin name>] of a
   * configuration file (and of TESSERA_PLUGIN_PARAMS="<plugin>.<key>=<value>;...") is passed as
   * text, after init and again whenever configuration sets it. The plugin validates it: a non-OK
   * status with a message ("unknown parameter 'x'; known: group_size", "group_size must be >= 1,
   * got 0") makes the host report a configuration error naming the plugin, key, value and where
   * the value came from. Called from one thread at a time; the plugin's other functions may run
   * meanwhile on other threads, so it publishes the new value thread-safely. The host forgets every
   * schedule it built from this plugin's algorithms after a parameter changes. A plugin without
   * set_parameter takes no parameters (a key for it is a configuration error). */
  tessera_status (*set_parameter)(void* context, const char* key, const char* value, tessera_error* error);
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

/* The one entry point of a Tessera plugin and the structs it exchanges with the host.
 *
 * A shared object exports exactly one symbol, tessera_plugin_query. The host calls it once after
 * loading, passing what it supports; the plugin answers with a description of itself and of the
 * components it holds (a backend, a collective algorithm, a placement strategy, since SDK 1.1 a
 * transport and since SDK 1.5 a tuner; several may share one .so). The host validates everything (major
 * version, struct sizes, required function pointers) before it calls anything else in the plugin.
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
 * offer a feature the other may not know.
 *
 * When the host reads them: only in plugins built for SDK 1.3 or later (before 1.3 the field was
 * reserved and had to be NULL; the host rejects a pre-1.3 plugin that sets one), once, at load,
 * right after the query returned and the structs passed validation and before init: the chains of
 * tessera_plugin_info, of every tessera_component and of every component table of a kind the host
 * knows. Never again after that, so a chain must be complete when the query returns.
 *
 * The host walks a chain without trusting it and rejects the plugin, naming the plugin, the struct
 * and the entry's position and address, when an entry is misaligned or cannot be read, when its
 * struct_size is smaller than this header or larger than TESSERA_EXTENSION_STRUCT_MAX (SDK 1.5), when
 * its type lies below TESSERA_EXTENSION_USER and the plugin's SDK minor defines no such type, or
 * when the chain is longer than TESSERA_EXTENSION_CHAIN_MAX (which a cycle would make).
 * No extension type is defined by the SDK itself (up to this minor): types from
 * TESSERA_EXTENSION_USER up are free for agreements between a host and its plugins. The host offers
 * none (tessera_host_info.extension is NULL). */
typedef struct tessera_extension {
  size_t struct_size; /* of the whole extension struct, header included */
  int32_t type;
  const struct tessera_extension* next;
} tessera_extension;

#define TESSERA_EXTENSION_CHAIN_MAX 64
#define TESSERA_EXTENSION_STRUCT_MAX 65536 /* SDK 1.5: the largest struct_size of one entry */
#define TESSERA_EXTENSION_USER 0x10000

/* Filled by the host; valid only for the duration of the query call. */
typedef struct tessera_host_info {
  size_t struct_size;
  void* extension;
  uint32_t sdk_major;    /* the host's TESSERA_SDK_VERSION_MAJOR */
  uint32_t sdk_minor;    /* the newest minor the host understands */
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

/* SDK 1.5: the types a parameter can declare (tessera_parameter.type). Values always travel as text
 * (set_parameter); the type says which texts are valid:
 *   INTEGER  a decimal integer with an optional sign, within [integer_min, integer_max]
 *   REAL     a finite decimal number (strtod's syntax), within [real_min, real_max]
 *   BOOLEAN  "true", "false", "1" or "0"
 *   TEXT     any text
 *   CHOICE   exactly one of `choices` */
enum {
  TESSERA_PARAMETER_INTEGER = 1,
  TESSERA_PARAMETER_REAL = 2,
  TESSERA_PARAMETER_BOOLEAN = 3,
  TESSERA_PARAMETER_TEXT = 4,
  TESSERA_PARAMETER_CHOICE = 5
};

/* SDK 1.5: one configuration parameter a plugin declares (tessera_plugin_info.parameters), so that
 * the host can check values before passing them, `tessera config check` can check a file's keys,
 * and `tessera plugins --params` can list them, as ompi_info --param does. Owned by the plugin,
 * valid and unchanged until it is unloaded. The host rejects the plugin at load (naming the
 * parameter) when a declaration is invalid: no name or a name other than letters, digits and '_';
 * a name declared twice; an unknown type; no default, or a default that is not a valid value of
 * its own declaration; a range whose minimum exceeds its maximum (or a NaN bound); a CHOICE
 * without choices or with one listed twice; no help text; or parameters declared by a plugin
 * without set_parameter. */
typedef struct tessera_parameter {
  size_t struct_size;
  void* extension;
  const char* name;          /* the key: [plugins.<plugin name>] <name> = <value> */
  int32_t type;              /* TESSERA_PARAMETER_* */
  const char* default_value; /* the value in force until configuration sets one, as text: "2", "true" */
  const char* help;          /* one sentence: what the parameter changes */
  int64_t integer_min;       /* INTEGER: the inclusive range (INT64_MIN, INT64_MAX: unbounded) */
  int64_t integer_max;
  double real_min; /* REAL: the inclusive range (-HUGE_VAL, HUGE_VAL: unbounded) */
  double real_max;
  size_t num_choices; /* CHOICE: the valid values */
  const char* const* choices;
} tessera_parameter;

#define TESSERA_PARAMETERS_MAX 1024 /* SDK 1.5: the most parameters one plugin may declare */

/* Owned by the plugin; must stay valid and unchanged until the shared object is unloaded. */
typedef struct tessera_plugin_info {
  size_t struct_size;
  void* extension;
  uint32_t sdk_major; /* the SDK the plugin was built against */
  uint32_t sdk_minor;
  const char* name;    /* e.g. "backend-cpu" */
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

  /* SDK 1.5, optional (0 and NULL): the parameter schema. A plugin that declares its parameters
   * declares all of them: the host then refuses, without calling set_parameter, a key not declared
   * and a value not valid for its declaration (a configuration error naming plugin, key, value and
   * what is allowed), and passes only valid ones. Without a schema, every key and value goes to
   * set_parameter, which validates them itself (as in SDK 1.3 and 1.4). */
  size_t num_parameters;
  const tessera_parameter* const* parameters;
} tessera_plugin_info;

/* Returns TESSERA_OK and sets *info, or a status with a message in *error (for instance when the
 * host's major version is one the plugin cannot work with). Called once per load, on one thread. */
typedef tessera_status (*tessera_plugin_query_fn)(const tessera_host_info* host,
                                                  const tessera_plugin_info** info, tessera_error* error);

#define TESSERA_PLUGIN_QUERY_SYMBOL "tessera_plugin_query"

/* SDK 1.5: versioned entry points, so that one shared object can serve hosts of two majors (as
 * NCCL's ncclNetPlugin_v8 / _v9). A plugin may export tessera_plugin_query_v<N> for each SDK major
 * N it serves, each answering with a description built against that major. A host of major N calls
 * tessera_plugin_query_v<N> when the object exports it, and otherwise tessera_plugin_query (which
 * every 1.x plugin exports; it answers for the major the plugin was built against and refuses
 * others). TESSERA_DEFINE_PLUGIN (tessera/sdk/cpp/plugin_builder.hpp) exports both names for its
 * major; tessera_add_plugin's version script exports every tessera_plugin_query* name. */
#define TESSERA_PLUGIN_QUERY_SYMBOL_PREFIX "tessera_plugin_query_v"
#define TESSERA_PLUGIN_QUERY_SYMBOL_V1 "tessera_plugin_query_v1"

#ifdef __cplusplus
}
#endif

#endif

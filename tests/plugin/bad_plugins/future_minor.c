/* A plugin built for an SDK minor newer than the host's (one past it). Two things only that newer
 * minor could hold: its transport table is larger than the host's (fields appended after
 * 'allgather', set to values the host must never use), and a second component has kind 99, which
 * the host does not know. The host accepts the plugin, reads the transport up to the size it knows
 * and skips the kind-99 component. */
#include "bad_transport.h"

/* The transport as the newer minor might define it. */
struct future_transport {
  tessera_transport known;
  void* appended_pointer;
  int64_t appended_value;
};

/* A table of a kind the host does not know; only its leading struct_size is common to all tables. */
struct future_component_table {
  size_t struct_size;
  void* appended_pointer;
};

static struct future_transport transport;
static struct future_component_table future_table;
static tessera_component future_component;
static struct bad_transport plugin;

BAD_TRANSPORT_EXPORT tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                         const tessera_plugin_info** out,
                                                         tessera_error* error) {
  (void)host;
  (void)error;
  bad_transport_valid(&plugin, "transport-future", "transport from a newer SDK minor");
  plugin.info.sdk_minor = TESSERA_SDK_VERSION_MINOR + 1;

  bad_transport_table(&transport.known, "transport-future");
  transport.known.struct_size = sizeof(transport);
  transport.appended_pointer = (void*)(uintptr_t)0xdeadbeef; /* would crash if the host followed it */
  transport.appended_value = -1;
  plugin.component.table = &transport;

  future_table.struct_size = sizeof(future_table);
  future_table.appended_pointer = (void*)(uintptr_t)0xdeadbeef;
  future_component.struct_size = sizeof(future_component);
  future_component.kind = 99;
  future_component.name = "future-thing";
  future_component.table = &future_table;
  plugin.component_list[1] = &future_component;
  plugin.info.num_components = 2;

  *out = &plugin.info;
  return TESSERA_OK;
}

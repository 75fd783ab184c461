/* Valid plugins that claim a name a bundled plugin provides, one claim each (CLAIM_NAME is the
 * plugin's name; CLAIM_OVERRIDES sets TESSERA_COMPONENT_OVERRIDES on the component):
 *  CLAIM_RING     - a collective algorithm called "ring" (a direct all_reduce), as coll-ring has
 *  CLAIM_PREFIX_S - a placement "my-shard" with the text prefix "S", as placement-std's "shard" has
 * The host must reject the claim (the built-in is loaded first whatever the order of loading), or
 * let it replace the built-in when the component is flagged and configuration allows it. */
#include "bad_collective.h"
#include "tessera/sdk/placement.h"

#ifdef CLAIM_OVERRIDES
#define CLAIM_FLAGS TESSERA_COMPONENT_OVERRIDES
#else
#define CLAIM_FLAGS 0
#endif

#if defined(CLAIM_RING)
ONE_COMPONENT_QUERY(bad_collective,
                    bad_collective_valid(&plugin, "ring", "claims algorithm 'ring'", BAD_COLLECTIVE_NONE),
                    (plugin.info.name = CLAIM_NAME, plugin.component.flags = CLAIM_FLAGS))
#elif defined(CLAIM_PREFIX_S)
/* Near-equal blocks, the first dim_size % num_shards one larger. */
static tessera_status block_layout(void* context, int64_t dim_size, int64_t num_shards, int64_t index,
                                   tessera_segment* segments, size_t capacity, size_t* count,
                                   tessera_error* error) {
  const int64_t base = dim_size / num_shards, extra = dim_size % num_shards;
  (void)context;
  (void)error;
  *count = 1;
  if (capacity < 1) return TESSERA_INVALID_ARGUMENT;
  segments[0].offset = index * base + (index < extra ? index : extra);
  segments[0].length = base + (index < extra ? 1 : 0);
  return TESSERA_OK;
}

struct claim_placement {
  tessera_placement_strategy strategy;
  tessera_component component;
  const tessera_component* component_list[1];
  tessera_plugin_info info;
};

static struct claim_placement plugin;

__attribute__((visibility("default"))) tessera_status tessera_plugin_query(const tessera_host_info* host,
                                                                           const tessera_plugin_info** out,
                                                                           tessera_error* error) {
  (void)host;
  (void)error;
  plugin.strategy.struct_size = sizeof(plugin.strategy);
  plugin.strategy.name = "my-shard";
  plugin.strategy.prefix = "S";
  plugin.strategy.kind = TESSERA_PLACEMENT_SHARD;
  plugin.strategy.layout = block_layout;
  *out = one_component_plugin(&plugin.info, &plugin.component, plugin.component_list,
                              TESSERA_COMPONENT_PLACEMENT, &plugin.strategy, "my-shard",
                              "claims placement prefix 'S'");
  plugin.info.name = CLAIM_NAME;
  plugin.component.flags = CLAIM_FLAGS;
  return TESSERA_OK;
}
#else
#error "define CLAIM_RING or CLAIM_PREFIX_S"
#endif

/* Defect: a shard-like placement ("bad-silent-layout", prefix "Q") whose layout fails
 * (TESSERA_INTERNAL) without writing a message. */
#include <string.h>

#include "one_component.h"
#include "tessera/sdk/placement.h"

struct silent_layout {
  tessera_placement_strategy placement;
  tessera_component component;
  const tessera_component* component_list[1];
  tessera_plugin_info info;
};

static tessera_status fail_silently(void* context, int64_t dim_size, int64_t num_shards, int64_t index,
                                    tessera_segment* segments, size_t capacity, size_t* count,
                                    tessera_error* error) {
  (void)context;
  (void)dim_size;
  (void)num_shards;
  (void)index;
  (void)segments;
  (void)capacity;
  (void)count;
  (void)error;
  return TESSERA_INTERNAL;
}

static tessera_plugin_info* silent_layout_valid(struct silent_layout* p) {
  memset(p, 0, sizeof(*p));
  p->placement.struct_size = sizeof(tessera_placement_strategy);
  p->placement.name = "bad-silent-layout";
  p->placement.prefix = "Q";
  p->placement.kind = TESSERA_PLACEMENT_SHARD;
  p->placement.layout = fail_silently;
  return one_component_plugin(&p->info, &p->component, p->component_list, TESSERA_COMPONENT_PLACEMENT,
                              &p->placement, "bad-silent-layout",
                              "placement whose layout fails without a message");
}

ONE_COMPONENT_QUERY(silent_layout, silent_layout_valid(&plugin), (void)0)

/* Defect: a shard-like placement whose layouts do not cover the dim exactly once. Blocks of
 * ceil(size / shards) elements, shard i holding block i, but:
 *  LAYOUT_GAP     - "bad-layout-gap" (prefix "G"): shard 1 holds nothing, so no shard holds block 1
 *  LAYOUT_OVERLAP - "bad-layout-overlap" (prefix "O"): every shard holds one element past its
 *                   block, which the next shard holds too
 *  LAYOUT_HALF_ARGUMENTS - "bad-layout-half-arguments" (prefix "H"): a correct layout, but
 *                   layout_with_arguments without check_arguments (SDK 1.3 needs both or neither)
 *  LAYOUT_ARGUMENTS_SILENT - "bad-layout-arguments-silent" (prefix "T"): takes arguments, and its
 *                   check_arguments fails for any text without writing a message
 * Every segment is in bounds: only the coverage of all shards together is wrong. */
#include <string.h>

#include "one_component.h"
#include "tessera/sdk/placement.h"

#if defined(LAYOUT_GAP)
#define LAYOUT_NAME "bad-layout-gap"
#define LAYOUT_PREFIX "G"
#elif defined(LAYOUT_OVERLAP)
#define LAYOUT_NAME "bad-layout-overlap"
#define LAYOUT_PREFIX "O"
#elif defined(LAYOUT_HALF_ARGUMENTS)
#define LAYOUT_NAME "bad-layout-half-arguments"
#define LAYOUT_PREFIX "H"
#elif defined(LAYOUT_ARGUMENTS_SILENT)
#define LAYOUT_NAME "bad-layout-arguments-silent"
#define LAYOUT_PREFIX "T"
#else
#error "define LAYOUT_GAP, LAYOUT_OVERLAP, LAYOUT_HALF_ARGUMENTS or LAYOUT_ARGUMENTS_SILENT"
#endif

struct bad_layout {
  tessera_placement_strategy placement;
  tessera_component component;
  const tessera_component* component_list[1];
  tessera_plugin_info info;
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static tessera_status bad_layout_of(void* context, int64_t dim_size, int64_t num_shards, int64_t index,
                                    tessera_segment* segments, size_t capacity, size_t* count,
                                    tessera_error* error) {
  const int64_t block = (dim_size + num_shards - 1) / num_shards;
  const int64_t begin = min64(index * block, dim_size);
  int64_t end = min64(begin + block, dim_size);
  (void)context;
  (void)error;
#if defined(LAYOUT_GAP)
  if (index == 1) end = begin;
#elif defined(LAYOUT_OVERLAP)
  end = min64(end + 1, dim_size);
#endif
  *count = 1;
  if (capacity < 1) return TESSERA_INVALID_ARGUMENT;
  segments[0].offset = begin;
  segments[0].length = end - begin;
  return TESSERA_OK;
}

#if defined(LAYOUT_ARGUMENTS_SILENT)
static tessera_status refuse_silently(void* context, const char* arguments, tessera_error* error) {
  (void)context;
  (void)arguments;
  (void)error;
  return TESSERA_INTERNAL;
}
#endif

#if defined(LAYOUT_HALF_ARGUMENTS) || defined(LAYOUT_ARGUMENTS_SILENT)
static tessera_status layout_ignoring_arguments(void* context, const char* arguments, int64_t dim_size,
                                                int64_t num_shards, int64_t index, tessera_segment* segments,
                                                size_t capacity, size_t* count, tessera_error* error) {
  (void)arguments;
  return bad_layout_of(context, dim_size, num_shards, index, segments, capacity, count, error);
}
#endif

static tessera_plugin_info* bad_layout_valid(struct bad_layout* p) {
  memset(p, 0, sizeof(*p));
  p->placement.struct_size = sizeof(tessera_placement_strategy);
  p->placement.name = LAYOUT_NAME;
  p->placement.prefix = LAYOUT_PREFIX;
  p->placement.kind = TESSERA_PLACEMENT_SHARD;
  p->placement.layout = bad_layout_of;
#if defined(LAYOUT_HALF_ARGUMENTS)
  p->placement.layout_with_arguments = layout_ignoring_arguments;
#elif defined(LAYOUT_ARGUMENTS_SILENT)
  p->placement.check_arguments = refuse_silently;
  p->placement.layout_with_arguments = layout_ignoring_arguments;
#endif
  return one_component_plugin(&p->info, &p->component, p->component_list, TESSERA_COMPONENT_PLACEMENT,
                              &p->placement, LAYOUT_NAME,
                              "placement whose shards do not cover the dim exactly once");
}

ONE_COMPONENT_QUERY(bad_layout, bad_layout_valid(&plugin), (void)0)

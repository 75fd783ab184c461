/* The placement-strategy component: how one mesh dimension lays a tensor out.
 *
 * A strategy has a kind. SHARD-like strategies split one tensor dim between the ranks of a mesh
 * dim: given the size of that dim as the rank currently holds it, the number of shards and a shard
 * index, layout() returns the segments (offset, length) of the dim that shard holds, in the order
 * the shard stores them. REPLICATE and PARTIAL strategies have no layout: every rank holds the
 * whole dim (partial: a term of a pending reduction whose op is part of the placement's text).
 * The core does all redistribution generically from layouts, so a new shard-like strategy needs
 * nothing but its layout.
 *
 * Text forms: the prefix alone ("R"), or prefix(argument): a tensor dim for shard-like kinds
 * ("S(0)"), a reduce op for partial ("P(sum)"). Since SDK 1.3 a shard-like strategy may take
 * arguments after the dim ("C(0, 4)": dim 0, arguments "4"); the host passes them as text, several
 * comma-separated, with whitespace around each argument removed and whitespace inside one kept
 * ("C(0, 1 0)" passes "1 0", for the strategy to refuse), and the strategy validates them. */
#ifndef TESSERA_SDK_PLACEMENT_H
#define TESSERA_SDK_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/sdk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TESSERA_PLACEMENT_SHARD = 1, TESSERA_PLACEMENT_REPLICATE = 2, TESSERA_PLACEMENT_PARTIAL = 3 };

typedef struct tessera_segment {
  int64_t offset;
  int64_t length;
} tessera_segment;

/* Owned by the plugin; valid until it is unloaded. Functions are thread-safe. */
typedef struct tessera_placement_strategy {
  size_t struct_size;
  void* extension;
  const char* name;   /* e.g. "shard", "balanced_shard"; how configuration names it */
  const char* prefix; /* the text form's prefix, e.g. "S"; unique among loaded strategies */
  int32_t kind;       /* TESSERA_PLACEMENT_* */
  void* context;
  /* SHARD kind only (NULL otherwise): writes the segments shard `index` of `num_shards` holds of a
   * dim of `dim_size` elements into segments[0..capacity) and their number into *count. The
   * segments of all shards must cover 0..dim_size exactly once. Returns TESSERA_INVALID_ARGUMENT
   * when capacity is too small (with *count set to what is needed). */
  tessera_status (*layout)(void* context, int64_t dim_size, int64_t num_shards, int64_t index,
                           tessera_segment* segments, size_t capacity, size_t* count, tessera_error* error);

  /* SDK 1.3, optional: a strategy that takes arguments sets both functions (and may leave layout
   * NULL). `arguments` is the text after the dim ("4" for "C(0, 4)"; "" when none was given).
   * check_arguments says whether the text is valid, with a message naming what is wrong and what is
   * expected ("block size must be an integer >= 1, got 'x'"); the host calls it when a placement is
   * parsed or made, before any layout. layout_with_arguments is layout for valid arguments. A
   * strategy without them takes no arguments: "S(0, 4)" is an error naming it. */
  tessera_status (*check_arguments)(void* context, const char* arguments, tessera_error* error);
  tessera_status (*layout_with_arguments)(void* context, const char* arguments, int64_t dim_size,
                                          int64_t num_shards, int64_t index, tessera_segment* segments,
                                          size_t capacity, size_t* count, tessera_error* error);
} tessera_placement_strategy;

#ifdef __cplusplus
}
#endif

#endif

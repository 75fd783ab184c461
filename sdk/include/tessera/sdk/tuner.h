/* The tuner component (SDK 1.5): site knowledge about which collective algorithm is fastest, in
 * the manner of NCCL's tuner plugins (getCollInfo).
 *
 * Under the selection rule "auto" the host costs every algorithm that applies to a call: by the
 * algorithm's own estimate (collective.h, `estimate`) or by the host's alpha-beta model of its
 * schedule. When a tuner is configured ([collectives] tuner = "<name>" in the configuration file,
 * or TESSERA_TUNER=<name>), the host then hands it that cost table, one entry per applicable
 * algorithm, and the tuner may reprice entries (overwrite `seconds`) or veto them (set `vetoed`).
 * The host runs the entry with the lowest price that is not vetoed (ties go to the smaller name);
 * should its schedule fail to build, the next one, and a vetoed entry only when no other builds.
 *
 * The host asks once per distinct call (collective, size, group, topology) and remembers the
 * choice until something it rests on changes: an algorithm or tuner loaded or unloaded, a plugin
 * parameter set, the rules, the topology preset or the tuner setting changed. So a tuner's answer
 * must depend only on what it is given and on its parameters.
 *
 * The host checks the answer: every price must be a finite number of seconds >= 0 and at least one
 * entry must stay not vetoed. An answer that fails the check, a non-OK status or an exception
 * escaping `tune` makes the host ignore the whole answer, log a warning naming the tuner, and use
 * its own costs: a broken tuner costs performance, never correctness.
 *
 * Tuner plugins are found like collective-algorithm plugins: the host loads every
 * libtessera-tuner-*.so on the plugin search path when a tuner is first asked for by name. */
#ifndef TESSERA_SDK_TUNER_H
#define TESSERA_SDK_TUNER_H

#include <stddef.h>
#include <stdint.h>

#include "tessera/sdk/collective.h"
#include "tessera/sdk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the call is and where its ranks are. Filled by the host; valid only during tune(). */
typedef struct tessera_tuner_request {
  size_t struct_size;
  void* extension;
  int32_t collective; /* TESSERA_COLL_* */
  int32_t group_size; /* p >= 1 */
  int64_t bytes;      /* the size of one rank's input, in bytes */
  /* A summary of the topology over the group's ranks, cheap for the host to give:
   * the number of distinct nodes the ranks are on and the most ranks on one node, both 0 when the
   * topology does not state nodes (TESSERA_LOCALITY_NODE); */
  int32_t num_nodes;
  int32_t max_ranks_per_node;
  /* the slowest path from group rank 0 to another group rank (none when p is 1: both 0): its
   * latency in seconds and its bandwidth in bytes per second, over the cheapest route the topology
   * has (several hops add their latencies; the bandwidth is the route's for a large message).
   * All four are 0 for a call the host knows no topology of. */
  double slowest_latency;
  double slowest_bandwidth;
  /* The request the algorithms see (collective.h), for a tuner that wants more: the dtype and
   * count, and through its `locality` and `transfer_time` functions the whole topology. */
  const tessera_collective_request* collective_request;
} tessera_tuner_request;

/* One applicable algorithm. Host-owned; the tuner may write `seconds` and `vetoed` only. */
typedef struct tessera_tuner_cost {
  size_t struct_size;
  const char* algorithm; /* its name, e.g. "ring" */
  /* In: the host's cost in seconds (the algorithm's own estimate, or the host's model of its
   * schedule when `modelled` is non-zero). Out: the tuner's price, a finite number >= 0. */
  double seconds;
  int32_t modelled;
  /* In: 0. Out: non-zero to keep "auto" from choosing the algorithm for this call. */
  int32_t vetoed;
} tessera_tuner_cost;

/* Owned by the plugin; valid until it is unloaded. */
typedef struct tessera_tuner {
  size_t struct_size;
  void* extension;
  const char* name; /* how configuration names it ([collectives] tuner, TESSERA_TUNER) */
  void* context;    /* passed back unchanged to tune */
  /* Required. Reprices or vetoes entries of costs[0..num_costs) (num_costs >= 1; an array of
   * pointers, as every SDK array of structs) and returns TESSERA_OK, or a status with a message in
   * *error to leave every cost as the host had it. Thread-safe: calls for different requests may
   * run at the same time. */
  tessera_status (*tune)(void* context, const tessera_tuner_request* request,
                         tessera_tuner_cost* const* costs, size_t num_costs, tessera_error* error);
} tessera_tuner;

#ifdef __cplusplus
}
#endif

#endif

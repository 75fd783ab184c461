/* The collective-algorithm component: an algorithm describes how data moves; the host moves it.
 *
 * Given a request (which collective, group size, element count, dtype, reduce op, root), an
 * algorithm emits a *schedule* through the host's builder: for every group rank an ordered list
 * of steps on chunks of that rank's buffers. The host executes schedules (in simulation by moving
 * bytes between the ranks' buffers; later over MPI), verifies them symbolically, estimates their
 * cost and traces them. The algorithm never touches data.
 *
 * Buffers of every group rank: 0 = input, 1 = output, 2.. = scratch buffers the algorithm adds.
 * Sizes in elements, with n = request.count:
 *   ALL_REDUCE      in n,   out n      every rank: op over all inputs
 *   BROADCAST       in n,   out n      every rank: root's input
 *   REDUCE          in n,   out n      root: op over all inputs (other ranks' out is ignored)
 *   ALL_GATHER      in n,   out p*n    every rank: block i = rank i's input
 *   REDUCE_SCATTER  in p*n, out n      rank i: op over block i of all inputs
 *   ALL_TO_ALL      in p*n, out p*n    rank j: block i = block j of rank i's input
 *   SCATTER         in p*n, out n      rank i: block i of root's input
 *   GATHER          in n,   out p*n    root: block i = rank i's input
 *   BARRIER         in 0,   out 0      no data; zero-element messages order the ranks
 * Output and scratch buffers start with unspecified contents: a schedule writes (copies or
 * receives into) an element before it reduces into it. Input buffers must not be written.
 *
 * Step semantics (per rank, in order): SEND posts a chunk to a peer (the host buffers it, so a
 * send never blocks, and the message holds the chunk's contents as they were when the SEND ran:
 * the rank may overwrite the chunk right after); RECV waits for the next message from a peer and writes it
 * into a chunk; RECV_REDUCE combines it into the chunk (chunk = chunk op message); COPY and REDUCE do the
 * same with a chunk of the rank's own buffers. Messages between two ranks arrive in the order sent and must
 * match the receiving chunk's element count. The reduction order a schedule spells out is the order the host
 * computes in, so results are bitwise reproducible. An empty schedule is valid when nothing has to move
 * (count 0), and zero-element chunks and messages are allowed. */
#ifndef TESSERA_SDK_COLLECTIVE_H
#define TESSERA_SDK_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "tessera/sdk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  TESSERA_COLL_ALL_REDUCE = 0,
  TESSERA_COLL_BROADCAST = 1,
  TESSERA_COLL_REDUCE = 2,
  TESSERA_COLL_ALL_GATHER = 3,
  TESSERA_COLL_REDUCE_SCATTER = 4,
  TESSERA_COLL_ALL_TO_ALL = 5,
  TESSERA_COLL_SCATTER = 6,
  TESSERA_COLL_GATHER = 7,
  TESSERA_COLL_BARRIER = 8,
  TESSERA_COLL_COUNT = 9
};

/* Reduce ops as the schedule sees them. AVG and PREMUL_SUM reach algorithms as SUM (the host
 * scales before or after); BAND/BOR/BXOR are integer-only. */
enum {
  TESSERA_REDUCE_SUM = 0,
  TESSERA_REDUCE_PRODUCT = 1,
  TESSERA_REDUCE_MIN = 2,
  TESSERA_REDUCE_MAX = 3,
  TESSERA_REDUCE_BAND = 4,
  TESSERA_REDUCE_BOR = 5,
  TESSERA_REDUCE_BXOR = 6
};

#define TESSERA_BUFFER_INPUT 0
#define TESSERA_BUFFER_OUTPUT 1

typedef struct tessera_chunk {
  int32_t buffer;
  int64_t offset; /* in elements */
  int64_t count;  /* in elements */
} tessera_chunk;

typedef struct tessera_collective_request {
  size_t struct_size;
  void* extension;
  int32_t collective; /* TESSERA_COLL_* */
  int32_t group_size; /* p >= 1 */
  int64_t count;      /* n, see the table above */
  DLDataType dtype;
  int32_t reduce_op; /* TESSERA_REDUCE_*, for reducing collectives */
  int32_t root;      /* group rank, for BROADCAST, REDUCE, SCATTER, GATHER */
  /* The order in which ring-shaped algorithms should visit the group ranks (a permutation of
   * 0..p-1 taken from the topology so that neighbours are close), or NULL for 0, 1, ..., p-1. */
  const int32_t* ring_order;

  /* SDK 1.3: where the group's ranks are, so that hierarchical algorithms can choose subgroups
   * (all NULL in a request from an older host). Group ranks are 0..p-1 as everywhere above.
   * check, build and estimate should depend on where the ranks are (locality, transfer_time,
   * ring_order), not on the world ranks' numbers: on a topology of equal links with no locality
   * stated, where every group of one size looks the same, the host builds and costs once per
   * request shape and reuses that schedule for every group of that size. */
  const int32_t* group_ranks; /* p entries: the world rank of each group rank */
  const void* topology;       /* the host's; passed back to the two functions below */
  /* The locality domain group rank `rank` belongs to at `level` (TESSERA_LOCALITY_*): ranks with
   * the same id share that domain (a node, a NUMA domain, a switch); -1 when the topology does not
   * say. Cheap to call: the host computes it once per topology. */
  int32_t (*locality)(const void* topology, int32_t rank, int32_t level);
  /* Alpha-beta time in seconds of sending `bytes` from group rank `from` to group rank `to` along
   * the cheapest path of the topology in force (latency + bytes / bandwidth per hop). */
  double (*transfer_time)(const void* topology, int32_t from, int32_t to, int64_t bytes);
} tessera_collective_request;

/* SDK 1.3: locality levels, innermost first. */
enum { TESSERA_LOCALITY_NUMA = 0, TESSERA_LOCALITY_NODE = 1, TESSERA_LOCALITY_SWITCH = 2 };

/* Host-owned; valid during build(). Every function records one step for `rank` (a group rank). */
typedef struct tessera_schedule_builder {
  size_t struct_size;
  void* context;
  /* Adds a zeroed scratch buffer of `count` elements to `rank`; returns its buffer id (>= 2). */
  int32_t (*add_buffer)(void* context, int32_t rank, int64_t count);
  void (*send)(void* context, int32_t rank, tessera_chunk chunk, int32_t peer);
  void (*recv)(void* context, int32_t rank, tessera_chunk chunk, int32_t peer);
  void (*recv_reduce)(void* context, int32_t rank, tessera_chunk chunk, int32_t peer);
  void (*copy)(void* context, int32_t rank, tessera_chunk dst, tessera_chunk src);
  void (*reduce)(void* context, int32_t rank, tessera_chunk dst, tessera_chunk src);
} tessera_schedule_builder;

/* Owned by the plugin; valid until it is unloaded. check and build are required and thread-safe. */
typedef struct tessera_collective_algorithm {
  size_t struct_size;
  void* extension;
  const char* name; /* e.g. "ring"; how configuration names it */
  void* context;
  /* Bit (1 << TESSERA_COLL_*) set for each collective this algorithm can schedule. */
  uint64_t collectives;
  /* TESSERA_OK when the algorithm applies to the request; otherwise a status and a message saying
   * which precondition fails (e.g. "needs a power-of-two group, got 6"), so the host falls back. */
  tessera_status (*check)(void* context, const tessera_collective_request* request, tessera_error* error);
  tessera_status (*build)(void* context, const tessera_collective_request* request,
                          const tessera_schedule_builder* builder, tessera_error* error);
  /* SDK 1.3, optional (NULL): tuning, NCCL-tuner style. The algorithm's own estimate, in seconds,
   * of running a request check() accepted (it may use the request's topology). Under the selection
   * rule "auto" the host runs the applicable algorithm with the lowest estimate; an algorithm
   * without `estimate`, or whose estimate returns a non-OK status, is costed by the host's model
   * of its schedule. Thread-safe; *seconds must be finite and >= 0. */
  tessera_status (*estimate)(void* context, const tessera_collective_request* request, double* seconds,
                             tessera_error* error);
} tessera_collective_algorithm;

#ifdef __cplusplus
}
#endif

#endif

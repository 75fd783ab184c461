/* The transport component (SDK 1.1): moves chunks between processes for the executor.
 *
 * A world spread over several processes (mpirun -np P) runs the same collective schedules as a
 * simulated one; messages between ranks of one process move in memory, messages between processes
 * go through a transport. A transport is point-to-point and non-blocking (post a send or a receive,
 * then test or wait for it), plus an optional all-gather of small byte strings that the host uses
 * to compare collective fingerprints across processes. transport-mpi (MPI_Isend / MPI_Irecv /
 * MPI_Testsome) is the first; NCCL or UCX would fit the same table.
 *
 * Threading: the host serializes every call into one transport. No two calls run at the same
 * time, but successive calls may come from different threads (with a happens-before edge between
 * them), so a transport must not depend on thread-local state; an MPI transport initialises MPI
 * with at least MPI_THREAD_SERIALIZED. init is the first call and finalize the last; neither runs
 * with a request pending.
 *
 * Buffers: a chunk is described by a DLTensor on host memory (device kDLCPU), contiguous (strides
 * NULL or compact row-major); its bytes are data + byte_offset, numel * ceil(bits*lanes/8) long.
 * The DLTensor struct itself is only read during isend/irecv (the transport copies what it needs);
 * the bytes it points to belong to the transport from the isend/irecv call until the request
 * completes (test sets *done, wait returns TESSERA_OK) or free_request returns: the host neither
 * writes a send buffer nor reads a receive buffer in between.
 *
 * Matching: a receive from process `peer` with tag `tag` matches a send to this process with the
 * same tag; several messages with the same (peer, tag) match in the order they were posted (MPI's
 * non-overtaking rule). A message must be exactly as long as the receive buffer; a length mismatch
 * is an error reported by test or wait, naming both lengths.
 *
 * Errors: every function returns TESSERA_OK or a status with a message in *error (never throws,
 * never aborts the process, except the optional abort). A failed request stays owned by the host
 * until free_request.
 *
 * Failure: once anything on the link failed (a transport error, a peer that did not answer within
 * the timeout, a message that does not belong to the collective it arrived in), the host calls no
 * function of the transport again but abort (or nothing, when the transport has none): no later
 * message could be trusted to match, and finalize might wait for a peer that is gone. */
#ifndef TESSERA_SDK_TRANSPORT_H
#define TESSERA_SDK_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "tessera/sdk/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pending send or receive. Opaque to the host; made by isend/irecv, released by free_request. */
typedef struct tessera_transport_request_impl* tessera_transport_request;

/* What the host asks of the transport at init. Filled by the host; valid only during init. */
typedef struct tessera_transport_config {
  size_t struct_size;
  void* extension;
  /* The world's timeout ([world] timeout, TESSERA_TIMEOUT) in milliseconds, > 0: the longest the
   * host is prepared to wait for a peer. A transport may use it for its own start-up handshake;
   * test/wait/allgather receive their timeouts explicitly. */
  int64_t timeout_ms;
} tessera_transport_config;

/* What init reports. The host sets struct_size to the size it knows and zeroes the rest; the
 * transport writes only fields that lie within that struct_size (a field it leaves alone reads as
 * 0, which every optional field below takes to mean "unknown" or "no limit").
 *
 * Process index and count: the transport learns them from its own runtime, not from the host,
 * which knows neither before init: MPI_Comm_rank and MPI_Comm_size of the communicator it uses, or
 * what the launcher sets (Open MPI's OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, PMIx's
 * PMIX_RANK, Slurm's SLURM_PROCID and SLURM_NTASKS, ...), or its own rendezvous. The host checks
 * 0 <= process_index < process_count at init; then, before anything runs, that every process
 * reported the same process_count and that the indices are a permutation of 0 .. process_count-1
 * (process p of the all-gather reports index p), and fails init_world on every process naming
 * what differs. Every process must also report the same optional properties (they shape the cost
 * model, so processes that disagreed could choose different algorithms for one collective).
 *
 * SDK 1.5 appended the optional properties after max_tag. The host validates them at init: the
 * latency and bandwidth finite and >= 0, max_message_bytes 0 or at least
 * TESSERA_TRANSPORT_LEAST_MAX_MESSAGE, device_memory 0 or 1; any other value fails init with an
 * error naming the transport, the field and the value. */
typedef struct tessera_transport_info {
  size_t struct_size;
  void* extension;
  int32_t process_index; /* this process, 0 .. process_count-1 */
  int32_t process_count; /* processes in the world, >= 1 */
  int64_t max_tag;       /* the largest tag isend/irecv accept (tags are 0 .. max_tag), >= 32767 */

  /* SDK 1.5, optional. The time one message between two processes takes before its first byte
   * arrives (alpha), in seconds; 0: unknown. With bandwidth, it costs the links between processes
   * in the world's topology: the cost model, the ring order, "auto" and the algorithms' estimates
   * (the request's transfer_time) see every link joining ranks of different processes at this
   * latency, in place of the [topology] preset's; 0 keeps the preset's value. */
  double latency;
  /* SDK 1.5, optional. Bytes per second one message between two processes moves at (1/beta);
   * 0: unknown (the preset's bandwidth stays). */
  double bandwidth;
  /* SDK 1.5, optional. The most bytes one isend or irecv may carry; 0: no limit. The host refuses a
   * longer chunk before it reaches the transport, with an error naming the transport, the length
   * and this limit (it does not split messages: a transport whose runtime has a smaller limit, as
   * MPI's int count has, splits them itself and reports 0). At least
   * TESSERA_TRANSPORT_LEAST_MAX_MESSAGE when set: the host's own messages (settings, fingerprints,
   * small staged sends with their envelopes) must fit. */
  int64_t max_message_bytes;
  /* SDK 1.5, optional. 1: isend and irecv also accept chunks in device memory (a DLTensor whose
   * device is not kDLCPU); 0: host memory only. The host passes host memory only today, whatever
   * this says; it is recorded so that every process agrees. */
  int32_t device_memory;
} tessera_transport_info;

/* The least max_message_bytes a transport may report (other than 0, no limit): the longest message
 * the host itself sends (4 KiB of a staged send after a 256-byte envelope). */
#define TESSERA_TRANSPORT_LEAST_MAX_MESSAGE 4352

typedef struct tessera_transport {
  size_t struct_size;
  void* extension;
  const char* name; /* e.g. "mpi"; how [world] transport names it */
  void* context;    /* passed back as the first argument of every function */

  /* Required. Joins the world (MPI_Init_thread, or nothing if MPI is already initialised) and fills
   * *info. Called once, before any other function. */
  tessera_status (*init)(void* context, const tessera_transport_config* config, tessera_transport_info* info,
                         tessera_error* error);
  /* Required. Leaves the world; called once, last, with no request pending (the host has freed every
   * request). A transport that did not initialise MPI itself does not finalise it. */
  tessera_status (*finalize)(void* context, tessera_error* error);

  /* Required. Posts a send of `chunk`'s bytes to process `peer` (!= this process) with `tag`
   * (0 .. max_tag) and returns at once with a new request in *request. */
  tessera_status (*isend)(void* context, const DLTensor* chunk, int32_t peer, int64_t tag,
                          tessera_transport_request* request, tessera_error* error);
  /* Required. Posts a receive into `chunk`'s bytes from process `peer` with `tag`; as isend. The
   * DLTensor is const because its description is not changed: the bytes it points to are written. */
  tessera_status (*irecv)(void* context, const DLTensor* chunk, int32_t peer, int64_t tag,
                          tessera_transport_request* request, tessera_error* error);
  /* Required. Never blocks: sets *done to 1 when the request has completed (its buffer is the
   * host's again), else to 0. Testing a completed request again sets *done to 1 again. */
  tessera_status (*test)(void* context, tessera_transport_request request, int32_t* done,
                         tessera_error* error);
  /* Required. Waits at most timeout_ms milliseconds (>= 0; 0 only polls) for the request to
   * complete: TESSERA_OK when it has, TESSERA_TIMEOUT when the time ran out first (the request is
   * still pending and may be waited for again or freed), another status when it failed. */
  tessera_status (*wait)(void* context, tessera_transport_request request, int64_t timeout_ms,
                         tessera_error* error);
  /* Required. Releases a request, completed or not; a pending one is cancelled first, and its
   * buffer is the host's again when this returns. Called exactly once per request. */
  tessera_status (*free_request)(void* context, tessera_transport_request request, tessera_error* error);

  /* Optional (may be NULL, and absent when struct_size ends before it). A blocking all-gather over
   * every process: each passes `bytes` bytes (the same count everywhere, a few kilobytes at most) in
   * `send`; `recv` (process_count * bytes, host-owned) receives them in process-index order.
   * TESSERA_TIMEOUT when not every process arrived within timeout_ms. Without it, the host gathers
   * fingerprints with isend/irecv. */
  tessera_status (*allgather)(void* context, const void* send, size_t bytes, void* recv, int64_t timeout_ms,
                              tessera_error* error);

  /* Optional (SDK 1.5; may be NULL, and absent when struct_size ends before it). Ends this process's
   * part in the world after a failure, in place of finalize: a peer may be stalled or gone, so an
   * orderly finalize could wait for it forever (MPI_Finalize), and a pending send may still read a
   * buffer. The host calls it at most once, instead of finalize, with requests possibly pending and
   * never freed; it must not wait for any other process. It may end the whole job (MPI_Abort, which
   * the mpi transport calls with `exit_code`; NCCL's ncclCommAbort is the same idea). When a
   * transport has none, the host leaves it without finalize and logs that. */
  tessera_status (*abort)(void* context, int32_t exit_code, tessera_error* error);
} tessera_transport;

#ifdef __cplusplus
}
#endif

#endif

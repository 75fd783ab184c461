/* Errors across the ABI: a status code plus a message.
 *
 * Plugins never throw across the boundary. A function that can fail returns a tessera_status and,
 * on failure, writes a NUL-terminated message into the host-owned tessera_error it was handed. The
 * host copies the message out and turns it into a C++ exception with context. */
#ifndef TESSERA_SDK_STATUS_H
#define TESSERA_SDK_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t tessera_status;

enum {
  TESSERA_OK = 0,
  TESSERA_INVALID_ARGUMENT = 1,
  TESSERA_UNIMPLEMENTED = 2,
  TESSERA_OUT_OF_MEMORY = 3,
  TESSERA_VERSION_MISMATCH = 4,
  TESSERA_INTERNAL = 5,
  /* SDK 1.1: a transport's wait or allgather ran out of time; the operation may still complete. */
  TESSERA_TIMEOUT = 6,
  /* SDK 1.5: codes a caller can act on. A host built for an older minor shows them as numbers. */
  TESSERA_NOT_FOUND = 7,   /* something named does not exist: a device, a file, a peer, a parameter */
  TESSERA_UNAVAILABLE = 8, /* it exists but cannot be used now (a device taken, a link down): retrying
                              later or elsewhere may succeed */
  TESSERA_ABORTED = 9 /* the operation was cancelled (an abort, a peer that left); its results are void */
};

/* TESSERA_OUT_OF_MEMORY (from 1.0) is what an alloc that cannot get the memory returns: the host
 * then reports how much was asked of which backend. */

#define TESSERA_ERROR_MESSAGE_CAPACITY 512

/* Owned by the caller (the host); the callee fills it only when it returns a non-OK status. A
 * message longer than TESSERA_ERROR_MESSAGE_CAPACITY - 1 bytes is cut there (snprintf does so); the
 * host then says that the plugin's message was truncated. */
typedef struct tessera_error {
  size_t struct_size;
  tessera_status code;
  char message[TESSERA_ERROR_MESSAGE_CAPACITY];
} tessera_error;

#ifdef __cplusplus
}
#endif

#endif

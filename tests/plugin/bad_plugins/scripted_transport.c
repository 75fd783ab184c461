/* "transport-scripted": a transport whose failures are scripted, for the link's error paths
 * (tests/plugin/process_link_failure_test.cpp). Two processes; this one is process 0 and never
 * talks to a real peer:
 *  - sends complete at their first test, except the send numbered SCRIPTED_FAIL_SEND (counted
 *    from 1 in the order posted; read from that environment variable at init), whose test fails,
 *    and the send numbered SCRIPTED_PENDING_SEND, which never completes (a peer that never takes it);
 *  - with SCRIPTED_PENDING_RECV set, receives never complete (a message that never comes);
 *  - receives complete at their first test and fill their bytes with 0x3f (1.0f in every float32
 *    lane is 0x3f800000; 0x3f3f3f3f is 0.747...: what matters is that the bytes were written).
 * Its SDK 1.5 link properties come from SCRIPTED_LATENCY, SCRIPTED_BANDWIDTH (strtod) and
 * SCRIPTED_MAX_MESSAGE (strtoll), each reported only when set (else 0: unknown, no limit).
 * It counts the requests it made and freed: scripted_transport_open() is made - freed, so a test
 * can see every request freed exactly once (a double free also shows under AddressSanitizer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_transport.h"

struct scripted_request {
  int is_send;
  long serial; /* sends only: 1, 2, ... in the order posted */
  void* bytes;
  size_t length;
};

/* The requests made and not yet freed, so that those a broken link never frees (it may not call
 * the transport again) are released when the plugin is unloaded, not reported as leaks. */
#define SCRIPTED_MOST_OPEN 256
static void* open_list[SCRIPTED_MOST_OPEN];

static void remember(void* request, void* forget) {
  for (int i = 0; i < SCRIPTED_MOST_OPEN; ++i)
    if (open_list[i] == forget) {
      open_list[i] = request;
      return;
    }
}

__attribute__((destructor)) static void release_open_requests(void) {
  for (int i = 0; i < SCRIPTED_MOST_OPEN; ++i) {
    free(open_list[i]);
    open_list[i] = NULL;
  }
}

static long sends_posted;
static long fail_send;
static long pending_send;
static int pending_recv;
static long open_requests;

BAD_TRANSPORT_EXPORT long scripted_transport_open(void) { return open_requests; }

static tessera_status scripted_init(void* context, const tessera_transport_config* config,
                                    tessera_transport_info* info, tessera_error* error) {
  const char* fail = getenv("SCRIPTED_FAIL_SEND");
  const char* pending = getenv("SCRIPTED_PENDING_SEND");
  (void)context;
  (void)config;
  (void)error;
  sends_posted = 0;
  fail_send = fail != NULL ? atol(fail) : 0;
  pending_send = pending != NULL ? atol(pending) : 0;
  pending_recv = getenv("SCRIPTED_PENDING_RECV") != NULL;
  info->process_index = 0;
  info->process_count = 2;
  info->max_tag = INT32_MAX;
  if (info->struct_size >= offsetof(tessera_transport_info, device_memory) + sizeof(info->device_memory)) {
    const char* latency = getenv("SCRIPTED_LATENCY");
    const char* bandwidth = getenv("SCRIPTED_BANDWIDTH");
    const char* max_message = getenv("SCRIPTED_MAX_MESSAGE");
    if (latency != NULL) info->latency = strtod(latency, NULL);
    if (bandwidth != NULL) info->bandwidth = strtod(bandwidth, NULL);
    if (max_message != NULL) info->max_message_bytes = strtoll(max_message, NULL, 10);
  }
  return TESSERA_OK;
}

static size_t chunk_length(const DLTensor* chunk) {
  size_t n = (chunk->dtype.bits * chunk->dtype.lanes + 7u) / 8u;
  for (int32_t d = 0; d < chunk->ndim; ++d) n *= (size_t)chunk->shape[d];
  return n;
}

static tessera_status scripted_post(int is_send, const DLTensor* chunk, tessera_transport_request* request) {
  struct scripted_request* made = calloc(1, sizeof(*made));
  if (made == NULL) return TESSERA_OUT_OF_MEMORY;
  made->is_send = is_send;
  made->serial = is_send ? ++sends_posted : 0;
  made->bytes = (char*)chunk->data + chunk->byte_offset;
  made->length = chunk_length(chunk);
  ++open_requests;
  remember(made, NULL);
  *request = (tessera_transport_request)made;
  return TESSERA_OK;
}

static tessera_status scripted_isend(void* context, const DLTensor* chunk, int32_t peer, int64_t tag,
                                     tessera_transport_request* request, tessera_error* error) {
  (void)context;
  (void)peer;
  (void)tag;
  (void)error;
  return scripted_post(1, chunk, request);
}

static tessera_status scripted_irecv(void* context, const DLTensor* chunk, int32_t peer, int64_t tag,
                                     tessera_transport_request* request, tessera_error* error) {
  (void)context;
  (void)peer;
  (void)tag;
  (void)error;
  return scripted_post(0, chunk, request);
}

static tessera_status scripted_test(void* context, tessera_transport_request request, int32_t* done,
                                    tessera_error* error) {
  struct scripted_request* pending = (struct scripted_request*)request;
  (void)context;
  if (pending->is_send && pending->serial == fail_send) {
    error->code = TESSERA_INTERNAL;
    snprintf(error->message, sizeof(error->message), "scripted failure of send #%ld", pending->serial);
    return TESSERA_INTERNAL;
  }
  if ((pending->is_send && pending->serial == pending_send) || (!pending->is_send && pending_recv)) {
    *done = 0;
    return TESSERA_OK;
  }
  if (!pending->is_send && pending->length > 0) memset(pending->bytes, 0x3f, pending->length);
  *done = 1;
  return TESSERA_OK;
}

static tessera_status scripted_free(void* context, tessera_transport_request request, tessera_error* error) {
  (void)context;
  (void)error;
  remember(NULL, request);
  free(request);
  --open_requests;
  return TESSERA_OK;
}

static struct bad_transport* scripted(struct bad_transport* p) {
  bad_transport_valid(p, "transport-scripted", "test transport: failures on cue");
  p->transport.init = scripted_init;
  p->transport.isend = scripted_isend;
  p->transport.irecv = scripted_irecv;
  p->transport.test = scripted_test;
  p->transport.free_request = scripted_free;
  return p;
}

ONE_COMPONENT_QUERY(bad_transport, &scripted(&plugin)->info, (void)0)

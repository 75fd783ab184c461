/* Shared pieces of the transport test plugins (SDK 1.1): one complete, valid plugin with one
 * transport, filled by hand with the C structs. Its functions only have to exist: the tests check
 * what the loader accepts, not messages moving. Each test plugin starts from it and changes exactly
 * one thing, which stands out in its source. */
#ifndef TESSERA_TEST_BAD_TRANSPORT_H
#define TESSERA_TEST_BAD_TRANSPORT_H

#include <stdint.h>
#include <string.h>

#include "one_component.h"
#include "tessera/sdk/plugin.h"
#include "tessera/sdk/transport.h"

#define BAD_TRANSPORT_EXPORT __attribute__((visibility("default")))

/* A world of one process: there is no peer to send to or receive from. */
static inline tessera_status bad_transport_init(void* context, const tessera_transport_config* config,
                                                tessera_transport_info* info, tessera_error* error) {
  (void)context;
  (void)config;
  (void)error;
  info->process_index = 0;
  info->process_count = 1;
  info->max_tag = INT32_MAX;
  return TESSERA_OK;
}

static inline tessera_status bad_transport_finalize(void* context, tessera_error* error) {
  (void)context;
  (void)error;
  return TESSERA_OK;
}

static inline tessera_status bad_transport_post(void* context, const DLTensor* chunk, int32_t peer,
                                                int64_t tag, tessera_transport_request* request,
                                                tessera_error* error) {
  (void)context;
  (void)chunk;
  (void)peer;
  (void)tag;
  (void)request;
  (void)error;
  return TESSERA_INVALID_ARGUMENT;
}

static inline tessera_status bad_transport_test(void* context, tessera_transport_request request,
                                                int32_t* done, tessera_error* error) {
  (void)context;
  (void)request;
  (void)error;
  *done = 1;
  return TESSERA_OK;
}

static inline tessera_status bad_transport_wait(void* context, tessera_transport_request request,
                                                int64_t timeout_ms, tessera_error* error) {
  (void)context;
  (void)request;
  (void)timeout_ms;
  (void)error;
  return TESSERA_OK;
}

static inline tessera_status bad_transport_free(void* context, tessera_transport_request request,
                                                tessera_error* error) {
  (void)context;
  (void)request;
  (void)error;
  return TESSERA_OK;
}

struct bad_transport {
  tessera_transport transport;
  tessera_component component;
  const tessera_component* component_list[2]; /* the second slot for a plugin that adds a component */
  tessera_plugin_info info;
};

/* Fills `table` as a valid transport called `name`, without the optional allgather. */
static inline void bad_transport_table(tessera_transport* table, const char* name) {
  memset(table, 0, sizeof(*table));
  table->struct_size = sizeof(tessera_transport);
  table->name = name;
  table->init = bad_transport_init;
  table->finalize = bad_transport_finalize;
  table->isend = bad_transport_post;
  table->irecv = bad_transport_post;
  table->test = bad_transport_test;
  table->wait = bad_transport_wait;
  table->free_request = bad_transport_free;
}

/* Fills `p` as a valid plugin whose one transport is called `name` like the plugin; returns its info. */
static inline tessera_plugin_info* bad_transport_valid(struct bad_transport* p, const char* name,
                                                       const char* description) {
  memset(p, 0, sizeof(*p));
  bad_transport_table(&p->transport, name);
  return one_component_plugin(&p->info, &p->component, p->component_list, TESSERA_COMPONENT_TRANSPORT,
                              &p->transport, name, description);
}

/* The entry point of a transport plugin whose one change `BREAK` (a statement on `plugin`) applies
 * to an otherwise valid plugin. */
#define BAD_TRANSPORT_QUERY(NAME, DESCRIPTION, BREAK) \
  ONE_COMPONENT_QUERY(bad_transport, bad_transport_valid(&plugin, NAME, DESCRIPTION), BREAK)

#endif

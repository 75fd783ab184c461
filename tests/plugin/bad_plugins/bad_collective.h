/* Shared pieces of the deliberately wrong collective-algorithm test plugins: one complete, valid
 * plugin with one algorithm (a direct all_reduce: every rank sends its input to every other and
 * combines all inputs in rank order), filled by hand with the C structs. Each test plugin starts
 * from it and breaks exactly one thing in the schedule it builds, named by `defect`, so that
 * defect is the only thing wrong with it and stands out in its source. The plugin loads fine:
 * only verifying its schedule can tell it is wrong. */
#ifndef TESSERA_TEST_BAD_COLLECTIVE_H
#define TESSERA_TEST_BAD_COLLECTIVE_H

#include <stdint.h>
#include <string.h>

#include "tessera/sdk/collective.h"
#include "one_component.h"
#include "tessera/sdk/plugin.h"

enum bad_collective_defect {
  BAD_COLLECTIVE_NONE = 0,
  BAD_COLLECTIVE_NO_STEPS,            /* builds an empty schedule: outputs never written */
  BAD_COLLECTIVE_SELF_COPY,           /* every rank copies its own input to its output */
  BAD_COLLECTIVE_HUGE_OFFSET,         /* rank 0 writes its first contribution at offset INT64_MAX */
  BAD_COLLECTIVE_RECV_WITHOUT_SEND,   /* rank 1 never sends to rank 0, which still waits for it */
  BAD_COLLECTIVE_MISSING_CONTRIBUTION /* rank 0 neither receives nor is sent the last rank's input */
};

struct bad_collective {
  enum bad_collective_defect defect;
  tessera_collective_algorithm algorithm;
  tessera_component component;
  const tessera_component* component_list[1];
  tessera_plugin_info info;
};

static inline tessera_chunk bad_collective_chunk(int32_t buffer, int64_t offset, int64_t count) {
  tessera_chunk c = {buffer, offset, count};
  return c;
}

static inline tessera_status bad_collective_check(void* context, const tessera_collective_request* request,
                                                  tessera_error* error) {
  (void)context;
  (void)request;
  (void)error;
  return TESSERA_OK;
}

/* Whether rank `from` sends its input to rank `to` (and `to` takes it). */
static inline int bad_collective_sends(enum bad_collective_defect defect, int32_t from, int32_t to,
                                       int32_t p) {
  if (defect == BAD_COLLECTIVE_RECV_WITHOUT_SEND && from == 1 && to == 0) return 0;
  if (defect == BAD_COLLECTIVE_MISSING_CONTRIBUTION && from == p - 1 && to == 0) return 0;
  return from != to;
}

static inline tessera_status bad_collective_build(void* context, const tessera_collective_request* q,
                                                  const tessera_schedule_builder* b, tessera_error* error) {
  const enum bad_collective_defect defect = ((const struct bad_collective*)context)->defect;
  const int32_t p = q->group_size;
  const tessera_chunk in = bad_collective_chunk(TESSERA_BUFFER_INPUT, 0, q->count);
  (void)error;
  if (defect == BAD_COLLECTIVE_NO_STEPS) return TESSERA_OK;
  for (int32_t r = 0; r < p; ++r) {
    if (defect == BAD_COLLECTIVE_SELF_COPY) {
      b->copy(b->context, r, bad_collective_chunk(TESSERA_BUFFER_OUTPUT, 0, q->count), in);
      continue;
    }
    for (int32_t i = 0; i < p; ++i)
      if (bad_collective_sends(defect, r, i, p)) b->send(b->context, r, in, i);
  }
  if (defect == BAD_COLLECTIVE_SELF_COPY) return TESSERA_OK;
  for (int32_t r = 0; r < p; ++r) {
    tessera_chunk out = bad_collective_chunk(TESSERA_BUFFER_OUTPUT, 0, q->count);
    if (defect == BAD_COLLECTIVE_HUGE_OFFSET && r == 0) out.offset = INT64_MAX;
    int first = 1;
    for (int32_t i = 0; i < p; ++i) {
      if (i != r && !bad_collective_sends(defect, i, r, p) && defect == BAD_COLLECTIVE_MISSING_CONTRIBUTION)
        continue;
      if (first)
        i == r ? b->copy(b->context, r, out, in) : b->recv(b->context, r, out, i);
      else
        i == r ? b->reduce(b->context, r, out, in) : b->recv_reduce(b->context, r, out, i);
      first = 0;
    }
  }
  return TESSERA_OK;
}

/* Fills `p` as a valid plugin whose one algorithm, called `name` like the plugin, offers all_reduce
 * and builds its schedule with `defect`; returns its info. */
static inline tessera_plugin_info* bad_collective_valid(struct bad_collective* p, const char* name,
                                                        const char* description,
                                                        enum bad_collective_defect defect) {
  memset(p, 0, sizeof(*p));
  p->defect = defect;
  p->algorithm.struct_size = sizeof(tessera_collective_algorithm);
  p->algorithm.name = name;
  p->algorithm.context = p;
  p->algorithm.collectives = (uint64_t)1 << TESSERA_COLL_ALL_REDUCE;
  p->algorithm.check = bad_collective_check;
  p->algorithm.build = bad_collective_build;
  return one_component_plugin(&p->info, &p->component, p->component_list,
                              TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, &p->algorithm, name, description);
}

/* The entry point of a collective plugin whose schedule has the one defect `DEFECT`. */
#define BAD_COLLECTIVE_QUERY(NAME, DESCRIPTION, DEFECT) \
  ONE_COMPONENT_QUERY(bad_collective, bad_collective_valid(&plugin, NAME, DESCRIPTION, DEFECT), (void)0)

#endif

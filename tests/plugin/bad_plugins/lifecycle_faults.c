/* Plugins whose lifecycle (SDK 1.3 init and finalize) misbehaves in a way no host can guard against
 * in-process, for `tessera plugins check`, which must report each with the stage it happened in and
 * survive it. Each is otherwise a valid collective algorithm (the direct all_reduce of
 * bad_collective.h, without a defect), so the fault is the only thing wrong. Built once per fault:
 *  FAULT_FINALIZE_SEGFAULT - finalize writes through a null pointer;
 *  FAULT_INIT_HANGS        - init never returns;
 *  FAULT_INIT_LEAKS        - init takes LEAK_BYTES (and touches them, so they are resident) that
 *                            finalize never gives back: every load leaks them.
 * They live in a directory of their own: discovery probes (init, then finalize) every file it finds,
 * and no test that lists plugins may crash or hang on these. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bad_collective.h"

/* An otherwise valid direct all_reduce whose lifecycle `FAULT` (a statement on `plugin`) breaks. */
#define FAULTY_PLUGIN_QUERY(NAME, DESCRIPTION, FAULT)                                                        \
  ONE_COMPONENT_QUERY(bad_collective, bad_collective_valid(&plugin, NAME, DESCRIPTION, BAD_COLLECTIVE_NONE), \
                      FAULT)

#if defined(FAULT_FINALIZE_SEGFAULT)

/* volatile: the compiler cannot know it is null, so the store really happens (and faults). */
static int* volatile nowhere = NULL;

static void crashing_finalize(void* context) {
  (void)context;
  *nowhere = 1;
}

FAULTY_PLUGIN_QUERY("bad-finalize-segfault", "finalize writes through a null pointer",
                    plugin.info.finalize = crashing_finalize)

#elif defined(FAULT_INIT_HANGS)

static tessera_status hanging_init(void* context, const tessera_host_info* host, tessera_error* error) {
  (void)context;
  (void)host;
  (void)error;
  for (;;) sleep(60);
  return TESSERA_OK; /* never reached */
}

FAULTY_PLUGIN_QUERY("bad-init-hangs", "init never returns", plugin.info.init = hanging_init)

#elif defined(FAULT_INIT_LEAKS)

#define LEAK_BYTES (8 * 1024 * 1024)
/* volatile: a static the file never reads would let an optimizing compiler drop the store, then the
 * malloc and memset with it, and there would be no leak to find. */
static void* volatile leaked = NULL;

static tessera_status leaking_init(void* context, const tessera_host_info* host, tessera_error* error) {
  (void)context;
  (void)host;
  (void)error;
  void* block = malloc(LEAK_BYTES);
  if (block == NULL) return TESSERA_OUT_OF_MEMORY;
  memset(block, 1, LEAK_BYTES);
  leaked = block; /* the previous load's block, if the library stayed mapped, is lost here */
  return TESSERA_OK;
}

static void forgetful_finalize(void* context) { (void)context; }

FAULTY_PLUGIN_QUERY("bad-init-leaks", "init leaks 8 MiB on every load",
                    (plugin.info.init = leaking_init, plugin.info.finalize = forgetful_finalize))

#else
#error "define one FAULT_* fault"
#endif

// A valid all_reduce (every rank's input folded at rank 0 in rank order, then sent back) whose
// SDK 1.3 estimate misbehaves in one way per build (EST_MODE), for the rule "auto":
//   EST_ZERO      0 seconds: the cheapest possible, so "auto" takes it
//   EST_NAN, EST_NEGATIVE, EST_INF   an answer the host must reject, naming the plugin
//   EST_THROWS    a C++ exception escaping through the C ABI (the SDK forbids it; the host survives)
//   EST_DECLINES  a non-OK status: the host costs the schedule with its model instead
//   EST_NONE      no estimate function at all (NULL)
// BUILD_FAULT, when defined, breaks build as well, so that the cheapest candidate cannot run:
//   BUILD_FAILS   build returns an error status with a message
//   BUILD_THROWS  a C++ exception escapes build
//   BUILD_WRONG   build emits a schedule the checker rejects (ranks other than 0 get no result)
// The table is written by hand, not with AlgorithmBuilder, whose trampolines would catch the throw.
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "tessera/sdk/cpp/plugin_builder.hpp"

#define EST_ZERO 0
#define EST_NAN 1
#define EST_NEGATIVE 2
#define EST_INF 3
#define EST_THROWS 4
#define EST_DECLINES 5
#define EST_NONE 6

#define BUILD_FAILS 1
#define BUILD_THROWS 2
#define BUILD_WRONG 3

namespace {

namespace sdk = tessera::sdk;

tessera_status check(void*, const tessera_collective_request* request, tessera_error* error) {
  if (request->collective != TESSERA_COLL_ALL_REDUCE)
    return sdk::report(error, TESSERA_UNIMPLEMENTED, EST_NAME " only does all_reduce");
  return TESSERA_OK;
}

tessera_status build(void*, const tessera_collective_request* request,
                     const tessera_schedule_builder* builder, tessera_error* error) {
#if defined(BUILD_FAULT) && BUILD_FAULT == BUILD_FAILS
  (void)request;
  (void)builder;
  return sdk::report(error, TESSERA_INTERNAL, EST_NAME " has no schedule for this machine");
#elif defined(BUILD_FAULT) && BUILD_FAULT == BUILD_THROWS
  (void)request;
  (void)builder;
  (void)error;
  throw std::runtime_error("the schedule generator crashed");
#endif
  return sdk::guarded(error, [&] {
    const sdk::Schedule s(builder);
    if (sdk::schedule_trivial(*request, s)) return;
    const tessera_chunk in = sdk::chunk(TESSERA_BUFFER_INPUT, 0, request->count);
    const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, request->count);
    s.copy(0, out, in);
    for (int32_t r = 1; r < request->group_size; ++r) {
      s.send(r, in, 0);
      s.recv_reduce(0, out, r);
    }
#if !defined(BUILD_FAULT) || BUILD_FAULT != BUILD_WRONG
    for (int32_t r = 1; r < request->group_size; ++r) {
      s.send(0, out, r);
      s.recv(r, out, 0);
    }
#endif
  });
}

#if EST_MODE != EST_NONE
tessera_status estimate(void*, const tessera_collective_request*, double* seconds, tessera_error* error) {
#if EST_MODE == EST_ZERO
  *seconds = 0.0;
#elif EST_MODE == EST_NAN
  *seconds = std::numeric_limits<double>::quiet_NaN();
#elif EST_MODE == EST_NEGATIVE
  *seconds = -1.0;
#elif EST_MODE == EST_INF
  *seconds = std::numeric_limits<double>::infinity();
#elif EST_MODE == EST_THROWS
  (void)seconds;
  throw std::runtime_error("the tuning table is missing");
#elif EST_MODE == EST_DECLINES
  (void)seconds;
  return sdk::report(error, TESSERA_UNIMPLEMENTED, "no estimate for this size");
#endif
  (void)error;
  return TESSERA_OK;
}
#endif

tessera_collective_algorithm make_table() {
  tessera_collective_algorithm table{};
  table.struct_size = sizeof(table);
  table.name = EST_NAME;
  table.collectives = uint64_t{1} << TESSERA_COLL_ALL_REDUCE;
  table.check = &check;
  table.build = &build;
#if EST_MODE != EST_NONE
  table.estimate = &estimate;
#endif
  return table;
}

const tessera_collective_algorithm table = make_table();

void describe(sdk::PluginBuilder& plugin) {
  plugin.add_component(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, EST_NAME, &table);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-" EST_NAME, "0.1.0", "A test all_reduce whose estimate misbehaves", describe)

// Tuner plugins (SDK 1.5) with one fault each, written with the bare C structs (no builder, whose
// guards would catch the throw). Built once per variant (TUNER_FAULT):
//
// Tuners that load but answer badly; the host must ignore the answer, warn naming the tuner and
// choose by its own costs. Plugin "tuner-<x>", tuner "<x>":
//   TUNER_FAILS      tune returns TESSERA_INTERNAL with a message
//   TUNER_THROWS     a C++ exception escapes tune (the SDK forbids it)
//   TUNER_NAN        prices the first entry at NaN
//   TUNER_NEGATIVE   prices every entry at -1 s
//   TUNER_VETOES_ALL vetoes every entry
// A valid tuner that changes nothing but records what it was given (tuner "probe"), one line per
// call in the file TESSERA_TEST_PLUGIN_LOG names:
//   TUNER_PROBE      "tune <collective> p=<p> bytes=<b> nodes=<n> per_node=<k> latency=<s>
//                    bandwidth=<B/s> request=<same|other>" then " <algorithm> <seconds> <model|own>"
//                    per entry ("request=same": collective_request agrees with the summary)
// Tables the host must reject when loading. Plugin "bad-tuner-<x>":
//   TUNER_SMALL      struct_size ends before 'tune'
//   TUNER_NULL_TUNE  the required 'tune' is NULL
//   TUNER_NO_NAME    the table's name is NULL
//   TUNER_SDK14      a plugin built for SDK 1.4, which had no tuner kind, declares one
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "tessera/sdk/plugin.h"
#include "tessera/sdk/tuner.h"

#define TUNER_FAILS 1
#define TUNER_THROWS 2
#define TUNER_NAN 3
#define TUNER_NEGATIVE 4
#define TUNER_VETOES_ALL 5
#define TUNER_PROBE 6
#define TUNER_SMALL 7
#define TUNER_NULL_TUNE 8
#define TUNER_NO_NAME 9
#define TUNER_SDK14 10

namespace {

#if TUNER_FAULT == TUNER_PROBE
void record(const tessera_tuner_request* request, tessera_tuner_cost* const* costs, size_t num_costs) {
  const char* file = std::getenv("TESSERA_TEST_PLUGIN_LOG");
  if (file == nullptr) return;
  std::FILE* out = std::fopen(file, "a");
  if (out == nullptr) return;
  const tessera_collective_request* full = request->collective_request;
  const bool same =
      full != nullptr && full->collective == request->collective && full->group_size == request->group_size;
  std::fprintf(out, "tune %d p=%d bytes=%lld nodes=%d per_node=%d latency=%.6g bandwidth=%.6g request=%s\n",
               request->collective, request->group_size, static_cast<long long>(request->bytes),
               request->num_nodes, request->max_ranks_per_node, request->slowest_latency,
               request->slowest_bandwidth, same ? "same" : "other");
  for (size_t i = 0; i < num_costs; ++i)
    std::fprintf(out, " %s %.6g %s\n", costs[i]->algorithm, costs[i]->seconds,
                 costs[i]->modelled ? "model" : "own");
  std::fclose(out);
}
#endif

tessera_status tune(void*, const tessera_tuner_request* request, tessera_tuner_cost* const* costs,
                    size_t num_costs, tessera_error* error) {
  (void)request;
  (void)error;
#if TUNER_FAULT == TUNER_FAILS
  (void)costs;
  (void)num_costs;
  std::snprintf(error->message, sizeof(error->message), "%s", "no measurements for this machine");
  error->code = TESSERA_INTERNAL;
  return TESSERA_INTERNAL;
#elif TUNER_FAULT == TUNER_THROWS
  (void)costs;
  (void)num_costs;
  throw std::runtime_error("the tuning database is locked");
#elif TUNER_FAULT == TUNER_NAN
  (void)num_costs;
  costs[0]->seconds = std::numeric_limits<double>::quiet_NaN();
#elif TUNER_FAULT == TUNER_NEGATIVE
  for (size_t i = 0; i < num_costs; ++i) costs[i]->seconds = -1.0;
#elif TUNER_FAULT == TUNER_VETOES_ALL
  for (size_t i = 0; i < num_costs; ++i) costs[i]->vetoed = 1;
#elif TUNER_FAULT == TUNER_PROBE
  record(request, costs, num_costs);
#else
  (void)costs;
  (void)num_costs;
#endif
  return TESSERA_OK;
}

struct Plugin {
  tessera_tuner table{};
  tessera_component component{};
  const tessera_component* components[1] = {&component};
  tessera_plugin_info info{};

  Plugin() {
    table.struct_size = sizeof(table);
    table.name = TUNER_NAME;
    table.tune = &tune;
    component.struct_size = sizeof(component);
    component.kind = TESSERA_COMPONENT_TUNER;
    component.name = TUNER_NAME;
    component.table = &table;
    info.struct_size = sizeof(info);
    info.sdk_major = TESSERA_SDK_VERSION_MAJOR;
    info.sdk_minor = TESSERA_SDK_VERSION_MINOR;
    info.name = PLUGIN_NAME;
    info.version = "1.0";
    info.description = "a tuner with one fault";
    info.num_components = 1;
    info.components = components;
#if TUNER_FAULT == TUNER_SMALL
    table.struct_size = offsetof(tessera_tuner, tune);
#elif TUNER_FAULT == TUNER_NULL_TUNE
    table.tune = nullptr;
#elif TUNER_FAULT == TUNER_NO_NAME
    table.name = nullptr;
#elif TUNER_FAULT == TUNER_SDK14
    info.sdk_minor = 4;
#endif
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) tessera_status tessera_plugin_query(
    const tessera_host_info*, const tessera_plugin_info** out, tessera_error*) {
  static const Plugin plugin;
  *out = &plugin.info;
  return TESSERA_OK;
}

// libtessera-coll-minimal.so: an all_reduce algorithm "star": every rank sends its input to group
// rank 0, which sums them in rank order and sends the result back. Select it with
// TESSERA_COLL="all_reduce:star", or let its estimate compete under "all_reduce:auto".
#include <cstdint>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

void star_all_reduce(const tessera_collective_request& request, const sdk::Schedule& s) {
  if (sdk::schedule_trivial(request, s)) return;  // count 0, or a group of one
  const int32_t p = request.group_size;
  const tessera_chunk in = sdk::chunk(TESSERA_BUFFER_INPUT, 0, request.count);
  const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, request.count);
  // Rank 0: out = in0, then out = out + in_r for r = 1, 2, ...: the order the host adds in.
  s.copy(0, out, in);
  for (int32_t r = 1; r < p; ++r) s.recv_reduce(0, out, r);
  for (int32_t r = 1; r < p; ++r) s.send(0, out, r);
  // Every other rank: its input to rank 0, the sum back into its output.
  for (int32_t r = 1; r < p; ++r) {
    s.send(r, in, 0);
    s.recv(r, out, 0);
  }
}

// Rank 0 receives p - 1 messages and sends p - 1, one after the other. Without a topology in the
// request there is nothing to price: declining (throwing) makes the host cost the schedule itself.
double star_seconds(const tessera_collective_request& request) {
  if (!sdk::has_topology(request))
    throw sdk::Error(TESSERA_UNIMPLEMENTED, "star: no topology in the request to estimate with");
  const int64_t bytes = request.count * sdk::element_bytes(request);
  double seconds = 0;
  for (int32_t r = 1; r < request.group_size; ++r)
    seconds += sdk::transfer_time(request, r, 0, bytes) + sdk::transfer_time(request, 0, r, bytes);
  return seconds;
}

void describe(sdk::PluginBuilder& plugin) {
  static sdk::AlgorithmBuilder star("star");
  star.collective(TESSERA_COLL_ALL_REDUCE, &star_all_reduce).estimate(TESSERA_COLL_ALL_REDUCE, &star_seconds);
  plugin.add_algorithm(star);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-minimal", "0.1.0", "all_reduce through group rank 0 (star)", describe)

// The schedule of a direct all_reduce, for the test plugins whose point lies elsewhere (lifecycle,
// parameters): every rank sends its input to every other and combines all inputs in rank order, so
// all get bitwise the same result.
#pragma once

#include <cstdint>

#include "tessera/sdk/cpp/algorithm_builder.hpp"

namespace plugin_test {

inline void schedule_direct_all_reduce(const tessera_collective_request& q, const tessera::sdk::Schedule& s) {
  namespace sdk = tessera::sdk;
  if (sdk::schedule_trivial(q, s)) return;
  const tessera_chunk in = sdk::chunk(TESSERA_BUFFER_INPUT, 0, q.count);
  const tessera_chunk out = sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, q.count);
  for (int32_t r = 0; r < q.group_size; ++r)
    for (int32_t peer = 0; peer < q.group_size; ++peer)
      if (peer != r) s.send(r, in, peer);
  for (int32_t r = 0; r < q.group_size; ++r)
    for (int32_t i = 0; i < q.group_size; ++i) {
      if (i == 0)
        i == r ? s.copy(r, out, in) : s.recv(r, out, i);
      else
        i == r ? s.reduce(r, out, in) : s.recv_reduce(r, out, i);
    }
}

}  // namespace plugin_test

// Ring all-reduce: a ring reduce-scatter followed by a ring all-gather over p near-equal blocks of
// the output (block_offsets(n, p), so n need not divide by p).
//
// Every rank first copies its input into its output and works there (the input is read-only).
// Reduce-scatter, step s = 0 .. p-2: rank r sends block r - s to its right neighbour and folds
// block r - s - 1 arriving from its left neighbour into its own copy. The block a rank sends at
// step s + 1 is the one it just finished folding at step s, so partial results travel round the
// ring gathering one more contribution per hop; after p - 1 steps rank r holds the full result of
// block r + 1. All-gather, step s = 0 .. p-2: rank r sends block r + 1 - s (the one it completed
// or last received) and receives block r - s, overwriting its partial copy.
//
// Each block is reduced on exactly one chain and then only copied, so every rank ends with
// bitwise the same values. With a ring order from the topology, positions k round the ring take
// the place of ranks in the steps above (k is r itself for the natural order).
#include "ring.hpp"

namespace tessera::ring {

void all_reduce(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;
  const std::vector<int64_t> offsets = sdk::block_offsets(n, p);
  auto block = [&](int64_t index) {
    const int32_t b = wrap(index, p);
    return sdk::chunk(TESSERA_BUFFER_OUTPUT, offsets[b], offsets[b + 1] - offsets[b]);
  };

  const Ring ring(request);
  for (int32_t k = 0; k < p; ++k) {
    const int32_t r = ring.rank_at(k), right = ring.rank_at(k + 1), left = ring.rank_at(k - 1);
    s.copy(r, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
    // Reduce-scatter: afterwards rank r owns the reduced block r + 1.
    for (int32_t step = 0; step < p - 1; ++step) {
      s.send(r, block(k - step), right);
      s.recv_reduce(r, block(k - step - 1), left);
    }
    // All-gather: pass the finished blocks round the ring once.
    for (int32_t step = 0; step < p - 1; ++step) {
      s.send(r, block(k + 1 - step), right);
      s.recv(r, block(k - step), left);
    }
  }
}

}  // namespace tessera::ring

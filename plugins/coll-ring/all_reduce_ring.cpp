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

#include <algorithm>
#include <utility>
#include <vector>

namespace tessera::ring {
namespace {

// The steps 0 .. p - 2 of one phase at which a rank sends or receives a non-empty block, in the
// order it takes them (by step, the send before the receive): at step t it sends block
// send_base - t and receives block recv_base - t, and blocks 0 .. m - 1 are the non-empty ones.
// With fewer elements than ranks most blocks are empty; visiting only the m steps that move
// something keeps a 4096-rank ring of 16 elements at 4 * 16 steps per rank instead of 4 * 4095
// empty calls per rank (67M in all) that the host would drop anyway.
std::vector<std::pair<int32_t, bool>> busy_steps(int64_t send_base, int64_t recv_base, int32_t p, int64_t m) {
  std::vector<std::pair<int32_t, bool>> steps;  // (step, is a receive)
  if (m >= p) {
    for (int32_t t = 0; t < p - 1; ++t) steps.insert(steps.end(), {{t, false}, {t, true}});
    return steps;
  }
  for (int64_t b = 0; b < m; ++b) {
    const int32_t send_at = wrap(send_base - b, p);
    const int32_t recv_at = wrap(recv_base - b, p);
    if (send_at < p - 1) steps.emplace_back(send_at, false);
    if (recv_at < p - 1) steps.emplace_back(recv_at, true);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace

void all_reduce(const tessera_collective_request& request, const Schedule& s) {
  if (schedule_trivial(request, s)) return;
  const int32_t p = request.group_size;
  const int64_t n = request.count;
  const std::vector<int64_t> offsets = sdk::block_offsets(n, p);
  auto block = [&](int64_t index) {
    const int32_t b = wrap(index, p);
    return sdk::chunk(TESSERA_BUFFER_OUTPUT, offsets[b], offsets[b + 1] - offsets[b]);
  };

  const int64_t non_empty = std::min<int64_t>(n, p);  // blocks 0 .. non_empty - 1 hold elements

  const Ring ring(request);
  for (int32_t k = 0; k < p; ++k) {
    const int32_t r = ring.rank_at(k), right = ring.rank_at(k + 1), left = ring.rank_at(k - 1);
    s.copy(r, sdk::chunk(TESSERA_BUFFER_OUTPUT, 0, n), sdk::chunk(TESSERA_BUFFER_INPUT, 0, n));
    // Reduce-scatter: at step t send block k - t, fold in block k - t - 1; afterwards rank r owns
    // the reduced block k + 1.
    for (const auto& [step, is_recv] : busy_steps(k, k - 1, p, non_empty)) {
      if (is_recv)
        s.recv_reduce(r, block(k - step - 1), left);
      else
        s.send(r, block(k - step), right);
    }
    // All-gather: pass the finished blocks round the ring once; at step t send block k + 1 - t and
    // receive block k - t.
    for (const auto& [step, is_recv] : busy_steps(k + 1, k, p, non_empty)) {
      if (is_recv)
        s.recv(r, block(k - step), left);
      else
        s.send(r, block(k + 1 - step), right);
    }
  }
}

}  // namespace tessera::ring

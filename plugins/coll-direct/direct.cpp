// The direct algorithm: every rank gets every input it needs straight from its owner and combines
// them in group-rank order. The oracle other algorithms are tested against and the fallback when
// none applies: one step of latency, p - 1 messages per rank, and the same reduction order
// (rank 0 op rank 1 op ... ) on every rank, so results are bitwise identical everywhere.
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

using tessera::sdk::chunk;
using tessera::sdk::Schedule;
constexpr int32_t kIn = TESSERA_BUFFER_INPUT;
constexpr int32_t kOut = TESSERA_BUFFER_OUTPUT;

// On rank r: dst = op over every rank i of the chunk rank i holds at `source_offset` in its input,
// in rank order; remote chunks arrive as messages from their owners.
void combine_in_rank_order(const Schedule& s, int32_t r, int32_t p, tessera_chunk dst,
                           int64_t source_offset) {
  for (int32_t i = 0; i < p; ++i) {
    const tessera_chunk own = chunk(kIn, source_offset, dst.count);
    if (i == 0)
      i == r ? s.copy(r, dst, own) : s.recv(r, dst, i);
    else
      i == r ? s.reduce(r, dst, own) : s.recv_reduce(r, dst, i);
  }
}

void all_reduce(const tessera_collective_request& q, const Schedule& s) {
  const int32_t p = q.group_size;
  for (int32_t r = 0; r < p; ++r)
    for (int32_t i = 0; i < p; ++i)
      if (i != r) s.send(r, chunk(kIn, 0, q.count), i);
  for (int32_t r = 0; r < p; ++r) combine_in_rank_order(s, r, p, chunk(kOut, 0, q.count), 0);
}

void reduce(const tessera_collective_request& q, const Schedule& s) {
  for (int32_t r = 0; r < q.group_size; ++r)
    if (r != q.root) s.send(r, chunk(kIn, 0, q.count), q.root);
  combine_in_rank_order(s, q.root, q.group_size, chunk(kOut, 0, q.count), 0);
}

void broadcast(const tessera_collective_request& q, const Schedule& s) {
  for (int32_t r = 0; r < q.group_size; ++r)
    if (r != q.root) s.send(q.root, chunk(kIn, 0, q.count), r);
  for (int32_t r = 0; r < q.group_size; ++r)
    r == q.root ? s.copy(r, chunk(kOut, 0, q.count), chunk(kIn, 0, q.count))
                : s.recv(r, chunk(kOut, 0, q.count), q.root);
}

void all_gather(const tessera_collective_request& q, const Schedule& s) {
  const int32_t p = q.group_size;
  const int64_t n = q.count;
  for (int32_t r = 0; r < p; ++r)
    for (int32_t i = 0; i < p; ++i)
      if (i != r) s.send(r, chunk(kIn, 0, n), i);
  for (int32_t r = 0; r < p; ++r)
    for (int32_t i = 0; i < p; ++i)
      i == r ? s.copy(r, chunk(kOut, i * n, n), chunk(kIn, 0, n)) : s.recv(r, chunk(kOut, i * n, n), i);
}

void reduce_scatter(const tessera_collective_request& q, const Schedule& s) {
  const int32_t p = q.group_size;
  const int64_t n = q.count;
  for (int32_t r = 0; r < p; ++r)
    for (int32_t j = 0; j < p; ++j)
      if (j != r) s.send(r, chunk(kIn, j * n, n), j);
  for (int32_t r = 0; r < p; ++r) combine_in_rank_order(s, r, p, chunk(kOut, 0, n), r * n);
}

void all_to_all(const tessera_collective_request& q, const Schedule& s) {
  const int32_t p = q.group_size;
  const int64_t n = q.count;
  for (int32_t r = 0; r < p; ++r)
    for (int32_t j = 0; j < p; ++j)
      if (j != r) s.send(r, chunk(kIn, j * n, n), j);
  for (int32_t r = 0; r < p; ++r)
    for (int32_t i = 0; i < p; ++i)
      i == r ? s.copy(r, chunk(kOut, i * n, n), chunk(kIn, r * n, n)) : s.recv(r, chunk(kOut, i * n, n), i);
}

void scatter(const tessera_collective_request& q, const Schedule& s) {
  const int64_t n = q.count;
  for (int32_t r = 0; r < q.group_size; ++r)
    if (r != q.root) s.send(q.root, chunk(kIn, r * n, n), r);
  for (int32_t r = 0; r < q.group_size; ++r)
    r == q.root ? s.copy(r, chunk(kOut, 0, n), chunk(kIn, r * n, n)) : s.recv(r, chunk(kOut, 0, n), q.root);
}

void gather(const tessera_collective_request& q, const Schedule& s) {
  const int64_t n = q.count;
  for (int32_t r = 0; r < q.group_size; ++r)
    if (r != q.root) s.send(r, chunk(kIn, 0, n), q.root);
  for (int32_t i = 0; i < q.group_size; ++i)
    i == q.root ? s.copy(q.root, chunk(kOut, i * n, n), chunk(kIn, 0, n))
                : s.recv(q.root, chunk(kOut, i * n, n), i);
}

// Everyone reports to rank 0, which answers everyone once it has heard from all.
void barrier(const tessera_collective_request& q, const Schedule& s) {
  const tessera_chunk nothing = chunk(kIn, 0, 0);
  for (int32_t r = 1; r < q.group_size; ++r) s.send(r, nothing, 0);
  for (int32_t r = 1; r < q.group_size; ++r) s.recv(0, chunk(kOut, 0, 0), r);
  for (int32_t r = 1; r < q.group_size; ++r) s.send(0, nothing, r);
  for (int32_t r = 1; r < q.group_size; ++r) s.recv(r, chunk(kOut, 0, 0), 0);
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  static tessera::sdk::AlgorithmBuilder direct("direct");
  direct.collective(TESSERA_COLL_ALL_REDUCE, &all_reduce)
      .collective(TESSERA_COLL_BROADCAST, &broadcast)
      .collective(TESSERA_COLL_REDUCE, &reduce)
      .collective(TESSERA_COLL_ALL_GATHER, &all_gather)
      .collective(TESSERA_COLL_REDUCE_SCATTER, &reduce_scatter)
      .collective(TESSERA_COLL_ALL_TO_ALL, &all_to_all)
      .collective(TESSERA_COLL_SCATTER, &scatter)
      .collective(TESSERA_COLL_GATHER, &gather)
      .collective(TESSERA_COLL_BARRIER, &barrier);
  plugin.add_algorithm(direct);
}

}  // namespace

TESSERA_DEFINE_PLUGIN("coll-direct", "0.1.0", "direct collectives: the oracle and the fallback", describe)

// Loading into other meshes, placements and world sizes, checked element by element against the
// dense tensor that was saved, and the bytes read counted: with 4-byte checksum blocks a load
// reads exactly the bytes its ranks hold, each once; with the default blocks it reads whole blocks.
#include "checkpoint_test_support.hpp"

using ct::distinct;
using ct::ScratchDir;
namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

struct Layout {
  std::vector<int64_t> mesh;
  ts::Placements placements;
};

int world_of(const Layout& l) {
  int64_t n = 1;
  for (int64_t s : l.mesh) n *= s;
  return static_cast<int>(n);
}

// Saves `dense` laid out as `from`, loads it into a zero DTensor laid out as `to`, and checks the
// loaded DTensor's value, that its shards kept their identity, and the byte counts.
dcp::LoadStats reshard(const ts::Tensor& dense, const Layout& from, const Layout& to, int64_t block_bytes) {
  ScratchDir dir;
  {
    ts::LocalMode mode(world_of(from));
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", from.mesh);
    dcp::save({{"t", ts::distribute_tensor(dense, mesh, from.placements)}}, dir.path(),
              {.checksum_block_bytes = block_bytes});
  }
  ts::LocalMode mode(world_of(to));
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", to.mesh);
  dcp::StateDict state = {{"t", ct::zeros_like_layout(dense.sizes(), mesh, to.placements, dense.dtype())}};
  const ts::Tensor local_before = std::get<ts::DTensor>(state.at("t")).to_local();
  std::vector<const void*> addresses;
  for (const auto& [rank, shard] : local_before.shards()) addresses.push_back(shard.impl().get());
  const dcp::LoadStats stats = dcp::load(state, dir.path());
  const ts::DTensor& got = std::get<ts::DTensor>(state.at("t"));
  ct::check_equal(ct::dense_of(got), dense, "loaded value");
  // Every rank's shard equals the layout's own split of the dense tensor (distribute_tensor).
  const ts::DTensor want = ts::distribute_tensor(dense, mesh, to.placements);
  for (const auto& [rank, shard] : got.to_local().shards())
    ct::check_equal(shard, want.to_local().shard(rank), "shard of rank " + std::to_string(rank));
  size_t i = 0;
  for (const auto& [rank, shard] : local_before.shards()) CHECK(shard.impl().get() == addresses[i++]);
  CHECK(stats.bytes_needed == ct::shard_bytes(want));
  return stats;
}

}  // namespace

TEST_CASE("resharding: values equal the dense source, and 4-byte blocks read exactly the bytes needed") {
  const ts::Tensor square = distinct({16, 12}, 0.25);
  const ts::Tensor uneven = distinct({10, 6}, 2);
  struct Case {
    const char* name;
    ts::Tensor dense;
    Layout from, to;
  };
  const std::vector<Case> cases = {
      {"8 -> 4 ranks, Shard(0)", square, {{8}, {ts::Shard(0)}}, {{4}, {ts::Shard(0)}}},
      {"4 -> 8 ranks, Shard(0)", square, {{4}, {ts::Shard(0)}}, {{8}, {ts::Shard(0)}}},
      {"(2,4) -> (4,2), S(0),S(1)",
       square,
       {{2, 4}, {ts::Shard(0), ts::Shard(1)}},
       {{4, 2}, {ts::Shard(0), ts::Shard(1)}}},
      {"(2,4) S(0),R -> (4,2) R,S(1)",
       square,
       {{2, 4}, {ts::Shard(0), ts::Replicate()}},
       {{4, 2}, {ts::Replicate(), ts::Shard(1)}}},
      {"Shard(0) -> Shard(1) on 4", square, {{4}, {ts::Shard(0)}}, {{4}, {ts::Shard(1)}}},
      {"Shard(1) -> Shard(0) on 3", square, {{3}, {ts::Shard(1)}}, {{3}, {ts::Shard(0)}}},
      {"uneven: 10 rows over 3 -> over 4", uneven, {{3}, {ts::Shard(0)}}, {{4}, {ts::Shard(0)}}},
      {"uneven: 10 rows over 4 -> over 3", uneven, {{4}, {ts::Shard(0)}}, {{3}, {ts::Shard(0)}}},
      {"uneven: 10 rows over 4 -> 6 cols over 4", uneven, {{4}, {ts::Shard(0)}}, {{4}, {ts::Shard(1)}}},
      // FSDP shards parameters by rows over dp; tensor parallelism (column-wise) shards rows of
      // the weight over tp and row-wise shards columns, on a (dp, tp) mesh replicated over dp.
      {"FSDP (8) S(0) -> TP (2,4) R,S(1)",
       square,
       {{8}, {ts::Shard(0)}},
       {{2, 4}, {ts::Replicate(), ts::Shard(1)}}},
      {"TP (2,4) R,S(0) -> FSDP (4) S(0)",
       square,
       {{2, 4}, {ts::Replicate(), ts::Shard(0)}},
       {{4}, {ts::Shard(0)}}},
      {"FSDP+TP (2,2) S(0),S(1) -> 1 rank",
       square,
       {{2, 2}, {ts::Shard(0), ts::Shard(1)}},
       {{1}, {ts::Replicate()}}},
      {"Replicate on 3 -> StridedShard(0, 2) on 2",
       square,
       {{3}, {ts::Replicate()}},
       {{2}, {ts::StridedShard(0, 2)}}},
      {"StridedShard(0, 2) on 4 -> Shard(1) on 2",
       square,
       {{4}, {ts::StridedShard(0, 2)}},
       {{2}, {ts::Shard(1)}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const dcp::LoadStats stats = reshard(c.dense, c.from, c.to, 4);
    // The ranks of the process together hold every element (some more than once, where the new
    // layout replicates): each saved byte is read exactly once.
    CHECK(stats.bytes_read == c.dense.numel() * 4);
  }
}

TEST_CASE("resharding with the default 4 KiB blocks reads whole blocks, and only the chunks a rank needs") {
  // 8 -> 4 by rows: each new shard is two whole saved chunks (8 KiB each): exactly what it needs.
  const ts::Tensor big = distinct({64, 256}, 1);
  const dcp::LoadStats rows = reshard(big, {{8}, {ts::Shard(0)}}, {{4}, {ts::Shard(0)}}, 4096);
  CHECK(rows.bytes_read == rows.bytes_needed);
  CHECK(rows.chunks_read == 8);
  // Shard(0) -> Shard(1) on 4: each rank needs 64 of every row's 256 floats (256 bytes of each
  // 1 KiB row), and the four ranks of the process together need all of every chunk: each chunk is
  // read once, whole, in one read (not once per rank, whose 4 KiB blocks would each hold 4 rows).
  const dcp::LoadStats cols = reshard(big, {{4}, {ts::Shard(0)}}, {{4}, {ts::Shard(1)}}, 4096);
  CHECK(cols.bytes_needed == 64 * 256 * 4);
  CHECK(cols.bytes_read == cols.bytes_needed);
  CHECK(cols.chunks_read == 4);
  CHECK(cols.reads == 4 * 2);  // per chunk: its checksum table, its bytes
  // With 256-byte blocks the same: every block of the 4 chunks (16 KiB each: 64 blocks) is read
  // and checked once, its table entry read once.
  const dcp::LoadStats fine = reshard(big, {{4}, {ts::Shard(0)}}, {{4}, {ts::Shard(1)}}, 256);
  CHECK(fine.bytes_read == fine.bytes_needed);
  CHECK(fine.checksum_bytes_read == 4 * 64 * 4);
}

TEST_CASE("a DTensor saved and loaded as a plain tensor, and a plain tensor loaded into a DTensor") {
  ScratchDir dir;
  const ts::Tensor dense = distinct({7, 5}, 4);
  {
    ts::LocalMode mode(3);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {3});
    dcp::save({{"d", ts::distribute_tensor(dense, mesh, {ts::Shard(1)})}, {"p", dense}}, dir.path());
  }
  dcp::StateDict plain = {{"d", ts::zeros({7, 5})}};
  dcp::load(plain, dir.path());
  ct::check_equal(std::get<ts::Tensor>(plain.at("d")), dense, "DTensor into a plain tensor");
  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  dcp::StateDict sharded = {{"p", ct::zeros_like_layout({7, 5}, mesh, {ts::Shard(0)})}};
  dcp::load(sharded, dir.path());
  ct::check_equal(ct::dense_of(std::get<ts::DTensor>(sharded.at("p"))), dense, "plain tensor into a DTensor");
}

TEST_CASE("large chunks are read in pieces, long runs past the page cache, each byte once and checked") {
  // 1024 x 1024 float32 (4 MiB) in 4 chunks of 1 MiB: whole-chunk runs, read with O_DIRECT where
  // the file system takes it (aligned edges), and 3 ranks of another split cut each chunk unevenly.
  const ts::Tensor big = distinct({1024, 1024}, 3);
  const int64_t bytes = 1024 * 1024 * 4;
  for (const Layout& to :
       {Layout{{3}, {ts::Shard(1)}}, Layout{{3}, {ts::Shard(0)}}, Layout{{2}, {ts::Replicate()}}}) {
    CAPTURE(to.mesh[0]);
    const dcp::LoadStats stats = reshard(big, {{4}, {ts::Shard(0)}}, to, 4096);
    CHECK(stats.bytes_read >= bytes);
    CHECK(stats.bytes_read <= bytes + 4 * 2 * 4096);  // at most an alignment unit each side of a chunk
    CHECK(stats.chunks_read == 4);
  }
}

// all_to_all_single with per-rank splits: every block is padded to the largest one, moved with the
// uniform all_to_all schedule, and trimmed again on arrival.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "autograd/record.hpp"
#include "comm/call.hpp"
#include "comm/mailbox.hpp"
#include "comm/rank_programs.hpp"
#include "comm/run_collective.hpp"
#include "comm/comm_observer.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/dist.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"
#include "tessera/ops.hpp"
#include "world/world.hpp"

namespace tessera::dist {
namespace {

// One rank's splits: the rows it sends to (or expects from) each group rank. Equal splits are kept
// as their one count: a thousand ranks' equal splits need no million entries.
struct RankSplits {
  bool known = false;          // a rank another process hosts, until learned
  std::vector<int64_t> given;  // one per group rank; empty for equal splits
  int64_t each = 0;            // equal splits: the count for every group rank

  int64_t operator[](size_t peer) const { return given.empty() ? each : given[peer]; }
  bool equal_to(int64_t rows) const { return known && given.empty() && each == rows; }
};

// The splits of one rank: given ones (local ints allowed), or equal splits of dim 0.
RankSplits splits_on(const char* what, const std::vector<SymInt>& splits, int rank, int64_t rows,
                     size_t group_size) {
  if (splits.empty()) {
    if (rows % static_cast<int64_t>(group_size) != 0)
      throw Error(fmt::format(
          "all_to_all_single: {} on rank {} has {} rows, which the group size {} does not divide; "
          "pass explicit splits",
          what, rank, rows, group_size));
    return RankSplits{true, {}, rows / static_cast<int64_t>(group_size)};
  }
  if (splits.size() != group_size)
    throw Error(fmt::format("all_to_all_single: {} splits have {} entries, expected one per group rank ({})",
                            what, splits.size(), group_size));
  RankSplits values{true, {}, 0};
  int64_t total = 0;
  for (const SymInt& s : splits) {
    values.given.push_back(s.at(rank));
    if (values.given.back() < 0)
      throw Error(fmt::format("all_to_all_single: {} split {} is negative on rank {}", what,
                              values.given.back(), rank));
    total += values.given.back();
  }
  if (total != rows)
    throw Error(fmt::format("all_to_all_single: {} splits on rank {} sum to {}, but dim 0 has {} rows", what,
                            rank, total, rows));
  return values;
}

int64_t row_size(const Tensor& shard) {
  return shard.dim() == 0
             ? 1
             : (shard.size(0) == 0 ? shape_numel(Shape(shard.sizes().begin() + 1, shard.sizes().end()))
                                   : shard.numel() / shard.size(0));
}

// In a world spread over processes, each process knows only its hosted members' splits; the
// padding needs every member's, so the send splits are all-gathered first (an extra collective
// that a simulated world does not need).
void learn_remote_splits(const comm::CallContext& context, const std::vector<int>& members,
                         std::vector<RankSplits>& send) {
  const size_t p = members.size();
  std::vector<Tensor> mine;
  DisabledLocalMode plain;
  for (size_t i = 0; i < p; ++i) {
    if (!send[i].known) {
      mine.emplace_back();
      continue;
    }
    Tensor row = empty({static_cast<int64_t>(p)}, TensorOptions(kInt64));
    for (size_t j = 0; j < p; ++j) row.narrow(0, static_cast<int64_t>(j), 1).fill_(send[i][j]);
    mine.push_back(row);
  }
  const std::vector<Tensor> all =
      comm::run_collective(context, TESSERA_COLL_ALL_GATHER, members, mine, static_cast<int64_t>(p));
  const Tensor& known = *std::find_if(all.begin(), all.end(), [](const Tensor& t) { return t.defined(); });
  const std::vector<int64_t> values = known.to_vector<int64_t>();
  for (size_t i = 0; i < p; ++i) {
    send[i].known = true;
    send[i].given.assign(values.begin() + static_cast<ptrdiff_t>(i * p),
                         values.begin() + static_cast<ptrdiff_t>((i + 1) * p));
  }
}

}  // namespace

void all_to_all_single(Tensor& output, const Tensor& input, const std::vector<SymInt>& output_splits,
                       const std::vector<SymInt>& input_splits, const ProcessGroup& group) {
  if (const auto* program = comm::program_for(input))
    return comm::program::all_to_all_single(*program, output, input, output_splits, input_splits, group);
  autograd::check_inplace(output, "dist::all_to_all_single",
                          "use ts::dist::functional::all_to_all_single, which returns a new tensor");
  const comm::CollectiveCall call;
  const char* op = "all_to_all_single";
  if (in_per_rank_region()) throw Error("all_to_all_single: cannot be issued inside run_per_rank");
  comm::require_no_pending_messages(op);
  if (!input.defined() || !input.is_local() || !output.defined() || !output.is_local())
    throw Error("all_to_all_single: input and output must be local tensors");
  if (input.ranks() != output.ranks())
    throw Error(fmt::format("all_to_all_single: input ranks {} and output ranks {} differ",
                            input.ranks().to_string(), output.ranks().to_string()));
  const comm::Call covered = comm::begin_call(op, input, group, comm::Fingerprint{"any", {}, -1});
  for (const std::vector<int>& members : covered.fibres()) {
    const size_t p = members.size();
    std::vector<RankSplits> send(p), expect(p);
    // Asked p^2 times below: looked up once per member.
    const world::WorldState& world = world::current();
    std::vector<char> hosts(p);
    for (size_t i = 0; i < p; ++i) hosts[i] = world.hosts(members[i]) ? 1 : 0;
    const auto hosted = [&](size_t i) { return hosts[i] != 0; };
    size_t first = 0;
    while (!hosted(first)) ++first;
    const int64_t row = row_size(input.shard(members[first]));
    for (size_t i = 0; i < p; ++i) {
      if (!hosted(i)) continue;
      const Tensor in = input.shard(members[i]);
      const Tensor out = output.shard(members[i]);
      if (row_size(in) != row || row_size(out) != row)
        throw Error(fmt::format(
            "all_to_all_single: rows on rank {} hold {} (input) and {} (output) elements, expected {}",
            members[i], row_size(in), row_size(out), row));
      send[i] = splits_on("input", input_splits, members[i], in.dim() == 0 ? 1 : in.size(0), p);
      expect[i] = splits_on("output", output_splits, members[i], out.dim() == 0 ? 1 : out.size(0), p);
    }
    if (world.distributed()) learn_remote_splits(covered.context, members, send);
    // Pad every block to the widest so one uniform schedule moves them all. With every block that
    // wide already (an even split, the usual case) an input is its padded buffer and a result its
    // output: one copy per rank instead of one per block, p^2 in all. Blocks that no hosted rank
    // sends or receives do not count (a process knows only its own ranks' expectations).
    int64_t widest = 0;
    bool even = true;
    // Equal splits of one count everywhere (the usual case) agree without checking every pair.
    const int64_t first_count = send[first][0];
    const auto equal = [&](const RankSplits& splits) { return splits.equal_to(first_count); };
    if (std::all_of(send.begin(), send.end(), equal) &&
        std::all_of(expect.begin(), expect.end(),
                    [&](const RankSplits& e) { return !e.known || equal(e); })) {
      widest = first_count * row;
    } else {
      int64_t narrowest = std::numeric_limits<int64_t>::max();
      for (size_t i = 0; i < p; ++i)
        for (size_t j = 0; j < p; ++j) {
          const int64_t rows = send[i][j];
          if (hosted(j) && rows != expect[j][i])
            throw Error(
                fmt::format("all_to_all_single: rank {} sends {} rows to rank {}, but rank {} expects {} "
                            "rows from rank {}",
                            members[i], rows, members[j], members[j], expect[j][i], members[i]));
          widest = std::max(widest, rows * row);
          if (hosted(i) || hosted(j)) narrowest = std::min(narrowest, rows * row);
        }
      even = narrowest == widest;
    }
    std::vector<Tensor> buffers;
    {
      DisabledLocalMode plain;
      for (size_t i = 0; i < p; ++i) {
        if (!hosted(i)) {
          buffers.emplace_back();
          continue;
        }
        const Tensor flat_in = input.shard(members[i]).contiguous().reshape({-1});
        if (even) {
          buffers.push_back(flat_in);
          continue;
        }
        Tensor buffer =
            zeros({static_cast<int64_t>(p) * widest}, TensorOptions(input.dtype()).backend(input.backend()));
        int64_t offset = 0;
        for (size_t j = 0; j < p; ++j) {
          const int64_t n = send[i][j] * row;
          buffer.narrow(0, static_cast<int64_t>(j) * widest, n).copy_(flat_in.narrow(0, offset, n));
          offset += n;
        }
        buffers.push_back(buffer);
      }
    }
    const std::vector<Tensor> results =
        comm::run_collective(covered.context, TESSERA_COLL_ALL_TO_ALL, members, buffers, widest);
    for (size_t j = 0; j < p; ++j) {
      if (!hosted(j)) continue;
      Tensor out = output.shard(members[j]);
      Tensor flat_out = out.reshape({-1});
      const bool is_view = flat_out.is_contiguous() && out.is_contiguous();
      if (even) {
        out.copy_(results[j].reshape(out.sizes()));
        continue;
      }
      Tensor staging = is_view ? flat_out : zeros_like(flat_out);
      int64_t offset = 0;
      for (size_t i = 0; i < p; ++i) {
        const int64_t n = expect[j][i] * row;
        staging.narrow(0, offset, n).copy_(results[j].narrow(0, static_cast<int64_t>(i) * widest, n));
        offset += n;
      }
      if (!is_view) out.copy_(staging.reshape(out.sizes()));
    }
  }
}

}  // namespace tessera::dist

#include "comm/call.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstring>

#include "comm/envelope.hpp"
#include "comm/fibres.hpp"
#include "comm/run_collective.hpp"
#include "tensor/local_tensor_impl.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "world/process_link.hpp"
#include "world/world.hpp"

namespace tessera::comm {
namespace {

// Every process passes the same number of bytes to the all-gather.
constexpr size_t kFingerprintBytes = 256;

std::string describe(const char* op, const Tensor& tensor, const ProcessGroup& group, const Fingerprint& f) {
  std::string group_text = group.is_default() ? "default" : group.to_string();
  // Long groups (a large mesh's fibres) are compared by hash and shown shortened.
  if (group_text.size() > 48)
    group_text = fmt::format("{}...#{:016x}", group_text.substr(0, 32), world::digest(group_text));
  std::string text = fmt::format("{}(group {}, {} {}", op, group_text, dtype_name(tensor.dtype()),
                                 f.shape.empty() ? "any shape" : f.shape);
  if (f.reduce_op) text += ", " + f.reduce_op->to_string();
  if (f.root >= 0) text += fmt::format(", root {}", f.root);
  // Processes that order or cost a call on different topologies could pick different algorithms.
  if (const auto& topology = group.topology())
    text += fmt::format(", topology '{}' #{:016x}", topology->name(), topology->fingerprint());
  return text + ")";
}

std::string hosted_text(const world::WorldState& w, int process) {
  const int k = w.ranks_per_process();
  return k == 1 ? fmt::format("rank {}", process)
                : fmt::format("ranks {}..{}", process * k, process * k + k - 1);
}

void compare_across_processes(world::WorldState& w, uint64_t call, const std::string& mine, const char* op) {
  std::string padded = fmt::format("{}|{}", call, mine);
  if (padded.size() >= kFingerprintBytes)
    padded = padded.substr(0, kFingerprintBytes - 17) + fmt::format("#{:016x}", world::digest(padded));
  padded.resize(kFingerprintBytes, '\0');
  const std::vector<std::string> all =
      w.link()->allgather(padded, fmt::format("{}: comparing collective calls", op));
  for (int p = 0; p < static_cast<int>(all.size()); ++p) {
    if (all[static_cast<size_t>(p)] == padded) continue;
    const auto text = [](const std::string& s) {
      const std::string t = s.substr(0, s.find('\0'));
      const size_t bar = t.find('|');
      return fmt::format("collective call #{}: {}", t.substr(0, bar), t.substr(bar + 1));
    };
    throw Error(fmt::format(
        "{}: the processes disagree on a collective: process {} ({}) made {}, but process {} ({}) "
        "made {}",
        op, p, hosted_text(w, p), text(all[static_cast<size_t>(p)]), w.process_index(),
        hosted_text(w, w.process_index()), text(padded)));
  }
}

std::shared_ptr<const world::WorldState::FibreList> distributed_fibres(const char* op, const RankSet& ranks,
                                                                       const ProcessGroup& group,
                                                                       const world::WorldState& w) {
  std::shared_ptr<const world::WorldState::FibreList> list = w.whole_world();
  if (!group.is_default()) {
    world::WorldState::FibreList fibres;
    for (const std::vector<int>& fibre : group.fibres())
      for (int r : fibre)
        if (w.hosts(r)) {
          fibres.push_back(fibre);
          break;
        }
    list = std::make_shared<const world::WorldState::FibreList>(std::move(fibres));
  }
  const world::WorldState::FibreList& fibres = *list;
  for (const std::vector<int>& fibre : fibres)
    for (int r : fibre) {
      if (r >= w.size())
        throw Error(fmt::format("{}: group {} has rank {}, outside the world of {} rank(s)", op,
                                group.to_string(), r, w.size()));
      if (w.hosts(r) && !ranks.contains(r))
        throw Error(fmt::format(
            "{}: the tensor has ranks {} but rank {}, which this process hosts, is a member of the "
            "group; a collective needs every hosted member",
            op, ranks.to_string(), r));
    }
  return list;
}

// CallContext::fingerprint: what every process's call must agree on, as one number. The shape is
// part of it only where every member must share it (the default group, or a single fibre) and the
// caller did not name a fixed text for it ("any", "none").
uint64_t call_fingerprint(const char* op, const Tensor& tensor, const ProcessGroup& group,
                          const Fingerprint& f) {
  // On the stack: this runs on every collective call across processes, a small one included.
  std::array<int64_t, 64 + kMaxDims> words{};
  size_t n = 0;
  for (const char* c = op; *c != '\0' && n < 48; ++c) words[n++] = static_cast<unsigned char>(*c);
  words[n++] = static_cast<int64_t>(tensor.dtype());
  words[n++] = f.reduce_op ? static_cast<int64_t>(f.reduce_op->kind()) : -1;
  const double factor = f.reduce_op ? f.reduce_op->factor() : 0.0;
  std::memcpy(&words[n++], &factor, sizeof(double));
  words[n++] = f.root;
  words[n++] = group.topology() != nullptr ? static_cast<int64_t>(group.topology()->fingerprint()) : 0;
  if (!f.shape.empty()) {
    words[n++] = static_cast<int64_t>(world::digest(f.shape));
  } else if (group.is_default() || group.fibres().size() == 1) {
    const Shape& first = tensor.shards().begin()->second.sizes();
    bool even = true;
    for (const auto& [rank, shard] : tensor.shards()) even = even && shard.sizes() == first;
    if (even)
      for (int64_t size : first) words[n++] = size;
    words[n++] = even ? static_cast<int64_t>(first.size()) : -1;  // -1: uneven
  }
  return bytes_digest(words.data(), n * sizeof(int64_t));
}

}  // namespace

bool checks_calls() {
  const world::WorldState& w = world::current();
  return w.distributed() && w.compares_calls();
}

std::string shape_of(const Tensor& tensor) {
  const Shape& first = tensor.shards().begin()->second.sizes();
  for (const auto& [rank, shard] : tensor.shards())
    if (shard.sizes() != first) return "uneven";
  return fmt::format("[{}]", fmt::join(first, ", "));
}

Call begin_call(const char* op, const Tensor& tensor, const ProcessGroup& group,
                const Fingerprint& fingerprint) {
  world::WorldState& w = world::current();
  Call call;
  call.world = &w;
  call.context.world = world_of(tensor);
  call.context.call = w.next_call();
  call.context.topology = group.topology();
  // The local tensor's own rank set, not a copy (world_of has checked that it is local).
  const RankSet& ranks = tensor.local_impl()->ranks();
  if (!w.distributed()) {
    // A tensor over every rank of a sized world (ranks are distinct and below the size) on the
    // default group: the world's own fibre.
    if (group.is_default() && w.sized() && static_cast<int>(ranks.size()) == w.size())
      call.fibre_list = w.whole_world();
    else
      call.fibre_list =
          std::make_shared<const world::WorldState::FibreList>(covered_fibres(op, ranks, group));
    return call;
  }
  call.fibre_list = distributed_fibres(op, ranks, group, w);
  call.context.fingerprint = call_fingerprint(op, tensor, group, fingerprint);
  if (w.compares_calls())
    compare_across_processes(w, call.context.call, describe(op, tensor, group, fingerprint), op);
  return call;
}

}  // namespace tessera::comm

#include "checkpoint/in_rank_programs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "checkpoint/world_sync.hpp"
#include "comm/rank_programs.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/autograd.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"
#include "world/process_link.hpp"

namespace tessera::dcp {
namespace {

enum class Call { save, async_save, load };

// One rank's call, on its (suspended) stack while the meeting runs; the run writes the results.
struct MemberCall {
  Call call = Call::save;
  int rank = -1;
  const world::WorldState* world = nullptr;
  const StateDict* state = nullptr;  // save, async_save
  StateDict* target = nullptr;       // load
  std::string path;
  SaveOptions options;
  SaveStats saved;
  LoadStats loaded;
  std::shared_future<SaveStats> pending;

  const StateDict& dict() const { return target != nullptr ? *target : *state; }
};

const char* kind_name(const StateValue& value) {
  if (const auto* t = std::get_if<Tensor>(&value)) return t->is_local() ? "a local tensor" : "a tensor";
  if (std::holds_alternative<DTensor>(value)) return "a DTensor";
  if (std::holds_alternative<int64_t>(value)) return "an int";
  if (std::holds_alternative<double>(value)) return "a float";
  return "a string";
}

// A rank's own shard of a local tensor it passes (a DTensor's local part holds only its rank's).
Tensor own_shard(const Tensor& local, const std::string& key, int rank, const std::string& path) {
  if (!comm::holds_only(local, rank))
    throw Error(
        fmt::format("checkpoint '{}': entry '{}' on rank {} is a local tensor over ranks {}; in a rank's "
                    "program a state dict holds the rank's own shards alone",
                    path, key, rank, local.ranks().to_string()));
  return local.shards().begin()->second;
}

// Who holds each key: (rank, value), in rank order.
using Holders = std::map<std::string, std::vector<std::pair<int, const StateValue*>>>;

Holders holders_of(const std::vector<MemberCall*>& calls) {
  Holders holders;
  for (const MemberCall* call : calls)
    for (const auto& [key, value] : call->dict()) holders[key].emplace_back(call->rank, &value);
  return holders;
}

// Every rank of `mesh` that this process hosts passed the key.
void require_whole_mesh(const std::string& key, const DeviceMesh& mesh,
                        const std::vector<int>& ranks_with_key, const world::WorldState& world,
                        const std::string& path) {
  for (int r : mesh.ranks())
    if (world.hosts(r) && std::find(ranks_with_key.begin(), ranks_with_key.end(), r) == ranks_with_key.end())
      throw Error(
          fmt::format("checkpoint '{}': entry '{}' is a DTensor on the mesh {} but rank {} of that mesh "
                      "has no such entry; every rank of a DTensor's mesh passes it",
                      path, key, mesh.to_string(), r));
}

// One entry put together from the ranks that hold it.
StateValue combine_entry(const std::string& key, const std::vector<std::pair<int, const StateValue*>>& held,
                         const world::WorldState& world, const std::string& path) {
  const auto& [first_rank, first] = held.front();
  for (const auto& [rank, value] : held)
    if (std::string_view(kind_name(*value)) != kind_name(*first))
      throw Error(
          fmt::format("checkpoint '{}': entry '{}' is {} on rank {} but {} on rank {}; every rank "
                      "that passes an entry passes the same kind",
                      path, key, kind_name(*first), first_rank, kind_name(*value), rank));
  std::vector<int> ranks;
  for (const auto& [rank, value] : held) ranks.push_back(rank);
  if (const auto* first_dt = std::get_if<DTensor>(first)) {
    std::vector<std::pair<int, Tensor>> shards;
    for (const auto& [rank, value] : held) {
      const DTensor& dt = std::get<DTensor>(*value);
      if (!(dt.device_mesh() == first_dt->device_mesh()) || dt.placements() != first_dt->placements() ||
          dt.shape() != first_dt->shape() || dt.dtype() != first_dt->dtype())
        throw Error(
            fmt::format("checkpoint '{}': entry '{}' differs between ranks: rank {} passes a {} DTensor {} "
                        "on {} {}, rank {} "
                        "a {} DTensor {} on {} {}",
                        path, key, first_rank, dtype_name(first_dt->dtype()), shape_text(first_dt->shape()),
                        first_dt->device_mesh().to_string(), placements_text(first_dt->placements()), rank,
                        dtype_name(dt.dtype()), shape_text(dt.shape()), dt.device_mesh().to_string(),
                        placements_text(dt.placements())));
      const std::vector<int> mesh_ranks = dt.device_mesh().ranks();
      if (std::find(mesh_ranks.begin(), mesh_ranks.end(), rank) == mesh_ranks.end())
        throw Error(
            fmt::format("checkpoint '{}': entry '{}' on rank {} is a DTensor on the mesh {}, which does "
                        "not hold rank {}",
                        path, key, rank, dt.device_mesh().to_string(), rank));
      shards.emplace_back(rank, own_shard(dt.to_local(), key, rank, path));
    }
    require_whole_mesh(key, first_dt->device_mesh(), ranks, world, path);
    return DTensor(local_tensor(RankMap<Tensor>(std::move(shards))), first_dt->device_mesh(),
                   first_dt->placements(), first_dt->shape());
  }
  if (const auto* t = std::get_if<Tensor>(first); t != nullptr && t->is_local()) {
    std::vector<std::pair<int, Tensor>> shards;
    for (const auto& [rank, value] : held)
      shards.emplace_back(rank, own_shard(std::get<Tensor>(*value), key, rank, path));
    return local_tensor(RankMap<Tensor>(std::move(shards)));
  }
  return *first;  // a plain tensor or a scalar: the lowest rank's
}

// Across processes every process's ranks together must pass the same keys and kinds: the first
// process writes the metadata from its own view of the entries.
void require_same_keys_everywhere(const StateDict& combined, const std::string& path) {
  WorldSync sync(current_world());
  uint64_t digest = world::digest(path);
  for (const auto& [key, value] : combined) {
    digest = world::digest(key.data(), key.size(), digest);
    const std::string_view kind = kind_name(value);
    digest = world::digest(kind.data(), kind.size(), digest);
  }
  const auto as_signed = static_cast<int64_t>(digest);
  const int64_t largest = sync.max_over_processes(as_signed);
  const int64_t smallest = ~sync.max_over_processes(~as_signed);
  if (largest != smallest)
    throw Error(
        fmt::format("checkpoint '{}': the ranks of different processes pass different entries (keys or "
                    "kinds); across processes the ranks of every process together pass the same keys",
                    path));
}

StateDict combine(const std::vector<MemberCall*>& calls) {
  const MemberCall& lead = *calls.front();
  StateDict combined;
  for (const auto& [key, held] : holders_of(calls))
    combined.emplace(key, combine_entry(key, held, *lead.world, lead.path));
  if (lead.world->distributed()) require_same_keys_everywhere(combined, lead.path);
  return combined;
}

std::vector<MemberCall*> member_calls(const std::vector<comm::Meeting*>& parts) {
  std::vector<MemberCall*> calls;
  for (comm::Meeting* part : parts)
    if (part != nullptr) calls.push_back(static_cast<MemberCall*>(part->context));
  return calls;
}

void run_save(const std::vector<comm::Meeting*>& parts, const ProcessGroup&) {
  const std::vector<MemberCall*> calls = member_calls(parts);
  const MemberCall& lead = *calls.front();
  const StateDict combined = combine(calls);
  if (lead.call == Call::save) {
    const SaveStats stats = save(combined, lead.path, lead.options);
    for (MemberCall* call : calls) call->saved = stats;
  } else {
    const std::shared_future<SaveStats> pending = async_save(combined, lead.path, lead.options).share();
    for (MemberCall* call : calls) call->pending = pending;
  }
}

void run_load(const std::vector<comm::Meeting*>& parts, const ProcessGroup&) {
  const std::vector<MemberCall*> calls = member_calls(parts);
  const MemberCall& lead = *calls.front();
  StateDict combined = combine(calls);
  const LoadStats stats = load(combined, lead.path);
  // DTensors and local tensors were filled in the members' own shards; plain tensors and scalars
  // went to the lowest rank's entry (or into `combined`) and go from there to every other rank.
  NoGradGuard no_grad;
  for (MemberCall* call : calls) {
    call->loaded = stats;
    for (auto& [key, value] : *call->target) {
      const StateValue& loaded = combined.at(key);
      if (auto* t = std::get_if<Tensor>(&value)) {
        const Tensor& source = std::get<Tensor>(loaded);
        if (!t->is_local() && t->impl() != source.impl()) t->copy_(source);
      } else if (!std::holds_alternative<DTensor>(value)) {
        value = loaded;
      }
    }
  }
}

// Meets the other ranks' calls; returns once the run has filled `call`'s results.
void meet(const world::RunningProgram& program, MemberCall& call, const char* verb) {
  call.rank = program.rank;
  call.world = program.world;
  const std::string name = fmt::format("dcp.{}('{}')", verb, call.path);
  comm::Meeting part;
  part.collective = name.c_str();
  part.agreed = {static_cast<int64_t>(call.call), call.options.checksum_block_bytes};
  part.run = call.call == Call::load ? &run_load : &run_save;
  const auto& whole = program.world->whole_world();
  part.fibre = std::shared_ptr<const std::vector<int>>(whole, &whole->front());
  part.group_rank = program.rank;
  part.context = &call;
  program.programs->meet(part);
}

}  // namespace

SaveStats save_in_rank_program(const world::RunningProgram& program, const StateDict& state,
                               const std::string& path, const SaveOptions& options) {
  MemberCall call;
  call.state = &state;
  call.path = path;
  call.options = options;
  meet(program, call, "save");
  return call.saved;
}

std::future<SaveStats> async_save_in_rank_program(const world::RunningProgram& program,
                                                  const StateDict& state, const std::string& path,
                                                  const SaveOptions& options) {
  if (program.world->distributed())
    throw Error(fmt::format(
        "checkpoint '{}': async_save in a rank's program of a world that spans processes is not supported "
        "(its "
        "commit would exchange messages from inside a rank's program); use save there, or async_save outside "
        "ts::spawn",
        path));
  MemberCall call;
  call.call = Call::async_save;
  call.state = &state;
  call.path = path;
  call.options = options;
  meet(program, call, "async_save");
  return std::async(std::launch::deferred, [pending = call.pending] { return pending.get(); });
}

LoadStats load_in_rank_program(const world::RunningProgram& program, StateDict& state,
                               const std::string& path) {
  MemberCall call;
  call.call = Call::load;
  call.target = &state;
  call.path = path;
  meet(program, call, "load");
  return call.loaded;
}

}  // namespace tessera::dcp

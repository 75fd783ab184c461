// The collectives of tessera::dist as a rank's program (ts::spawn) issues them on its own plain
// tensors: each becomes a Meeting whose run assembles the members' tensors into local tensors (the
// members' tensors are the shards, so results land in them in place) and calls the local-tensor
// collective once, with its algorithm selection, checks and reports.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "comm/rank_programs.hpp"
#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera::comm {

std::string Meeting::describe() const {
  std::string text = fmt::format("{}(", collective);
  const size_t shown = std::min<size_t>(tensors.size(), 3);
  for (size_t i = 0; i < shown; ++i)
    text += fmt::format("{}{} {}", i == 0 ? "" : ", ", dtype_name(tensors[i]->dtype()),
                        shape_text(tensors[i]->sizes()));
  if (tensors.size() > shown) text += fmt::format(", ... {} tensors in all", tensors.size());
  if (reduces) text += fmt::format("{}op={}", tensors.empty() ? "" : ", ", op.to_string());
  if (root >= 0) text += fmt::format("{}root={}", tensors.empty() && !reduces ? "" : ", ", root);
  return text + ")";
}

namespace program {
namespace {

// Numbers every member's call must agree on.
void agree_on_tensor(decltype(Meeting::agreed)& agreed, const Tensor& t) {
  agreed.push_back(static_cast<int64_t>(t.dtype()));
  agreed.push_back(t.dim());
  agreed.insert(agreed.end(), t.sizes().begin(), t.sizes().end());
}
void agree_on_op(Meeting& m, const ReduceOp& op) {
  m.reduces = true;
  m.op = op;
  m.agreed.push_back(op.kind());
  m.agreed.push_back(std::bit_cast<int64_t>(op.factor()));
}

// A tensor of the rank's program as a collective's argument: defined, the rank's own (plain, or a
// local tensor holding only its shard) and (when written) not one autograd records. Returns what
// the meeting holds: the plain tensor, or the local tensor's shard itself (own_tensor).
const Tensor& usable(const Meeting& m, int rank, const Tensor& t, const char* what, bool written) {
  if (!t.defined()) throw Error(fmt::format("{} on rank {}: {} is undefined", m.collective, rank, what));
  if (t.is_local() && !holds_only(t, rank))
    throw Error(fmt::format(
        "{} on rank {}: {} is a local tensor over ranks {}; a rank's program passes its own plain tensors, "
        "or local tensors holding its own shard alone (as its DTensors do)",
        m.collective, rank, what, t.ranks().to_string()));
  if (written && t.requires_grad())
    throw Error(
        fmt::format("{} on rank {}: {} requires grad, and the collective writes it in place; use "
                    "ts::dist::functional, whose collectives return new tensors",
                    m.collective, rank, what));
  return t.is_local() ? t.shards().begin()->second : t;
}

// The rank's fibre of a group other than the default one, checked against the spawned world.
[[gnu::noinline]] void join_fibre(const world::RunningProgram& p, Meeting& m, const ProcessGroup& group) {
  const int world_size = p.world->size();
  const std::vector<int>* mine = nullptr;
  for (const std::vector<int>& fibre : group.fibres())
    if (auto at = std::find(fibre.begin(), fibre.end(), p.rank); at != fibre.end()) {
      mine = &fibre;
      m.group_rank = static_cast<int>(at - fibre.begin());
    }
  if (mine == nullptr)
    throw Error(fmt::format("{} on rank {}: rank {} is not a member of the group {}", m.collective, p.rank,
                            p.rank, group.to_string()));
  for (int r : *mine)
    if (r < 0 || r >= world_size)
      throw Error(
          fmt::format("{} on rank {}: the group {} names rank {}, outside the spawned world of {} rank(s)",
                      m.collective, p.rank, group.to_string(), r, world_size));
  m.fibre = std::make_shared<const std::vector<int>>(*mine);
  m.run_group = group.fibres().size() == 1 ? group : ProcessGroup(*mine).with_topology(group.topology());
}

[[gnu::noinline]] void check_root(const world::RunningProgram& p, const Meeting& m) {
  if (m.root >= 0 || m.collective == std::string_view("broadcast") ||
      m.collective == std::string_view("reduce") || m.collective == std::string_view("scatter") ||
      m.collective == std::string_view("gather"))
    if (m.root < 0 || static_cast<size_t>(m.root) >= m.fibre->size())
      throw Error(fmt::format("{} on rank {}: root {} is not a group rank; expected 0..{}", m.collective,
                              p.rank, m.root, m.fibre->size() - 1));
}

// Finds the rank's fibre of `group` and hands the part to the scheduler. The rank waits below this
// frame and returns through it once the collective has run: what the default group does not need
// lives in the functions above, so that it stays small, and it is part of its caller's frame (each
// return after a switch of stacks is one the processor cannot predict).
[[gnu::always_inline]] inline void meet(const world::RunningProgram& p, Meeting& m,
                                        const ProcessGroup& group) {
  if (group.is_default()) {
    // A pointer that owns nothing (no reference count to touch at every arrival): the world outlives
    // every meeting of its ranks' programs, and every gathering of its scheduler.
    const std::vector<int>& whole = p.world->whole_world()->front();
    m.fibre = std::shared_ptr<const std::vector<int>>(std::shared_ptr<const void>(), &whole);
    m.group_rank = p.rank;
  } else {
    join_fibre(p, m, group);
  }
  check_root(p, m);
  p.programs->meet(m);
}

// The members' parts are by group rank; in a world spread over processes only the members this
// process hosts have one (the others are null), and the collective's local tensors hold their shards.
const Meeting& lead(const std::vector<Meeting*>& parts) {
  for (const Meeting* part : parts)
    if (part != nullptr) return *part;
  throw Error("a collective of a rank's program ran without a member");  // the scheduler never does this
}

// Whether `local` holds, as each member's shard, the very tensor number `index` that member passes.
bool holds_members(const Tensor& local, const std::vector<Meeting*>& parts, size_t index) {
  const std::vector<int>& fibre = *lead(parts).fibre;
  const RankMap<Tensor>& shards = local.shards();
  auto shard = shards.begin();
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k] == nullptr) continue;
    if (shard == shards.end() || shard->first != fibre[k] ||
        shard->second.impl() != parts[k]->tensors[index]->impl())
      return false;
    ++shard;
  }
  return shard == shards.end();
}

// The members' tensors number `index` as one local tensor: member k's tensor is the shard of the
// fibre's k-th rank (the very tensor, so a collective's result lands in it). Taken from what the
// scheduler kept when it still holds these very tensors.
Tensor members_tensor(const std::vector<Meeting*>& parts, size_t index) {
  const Meeting& first = lead(parts);
  AssembledMembers* kept = index < AssembledMembers::kKept ? first.assembled : nullptr;
  if (kept != nullptr && kept->locals[index].defined() && kept->agreed[index] == first.agreed &&
      holds_members(kept->locals[index], parts, index))
    return kept->locals[index];
  const std::vector<int>& fibre = *first.fibre;
  std::vector<std::pair<int, Tensor>> shards;
  shards.reserve(parts.size());
  for (size_t k = 0; k < parts.size(); ++k)
    if (parts[k] != nullptr) shards.emplace_back(fibre[k], *parts[k]->tensors[index]);
  Tensor local = local_tensor(RankMap<Tensor>(std::move(shards)));
  if (kept != nullptr) {
    kept->locals[index] = local;
    kept->agreed[index] = first.agreed;
  }
  return local;
}

// The list only the root passes (scatter's inputs, gather's outputs), from its tensor 1 on, as
// local tensors: every member's shard of entry i is the root's i-th tensor, which the collective
// reads (or writes) on the root alone. Where the root lives in another process, every entry (one
// per member) is a stand-in shaped like each member's tensor 0, neither read nor written.
std::vector<Tensor> roots_list(const std::vector<Meeting*>& parts, int root) {
  const std::vector<int>& fibre = *lead(parts).fibre;
  const Meeting* root_part = parts[static_cast<size_t>(root)];
  const size_t count = root_part != nullptr ? root_part->tensors.size() - 1 : parts.size();
  std::vector<Tensor> list;
  for (size_t i = 0; i < count; ++i) {
    std::vector<std::pair<int, Tensor>> shards;
    for (size_t k = 0; k < parts.size(); ++k)
      if (parts[k] != nullptr)
        shards.emplace_back(
            fibre[k], root_part != nullptr ? *root_part->tensors[1 + i] : empty_like(*parts[k]->tensors[0]));
    list.push_back(local_tensor(RankMap<Tensor>(std::move(shards))));
  }
  return list;
}

std::vector<Tensor> members_list(const std::vector<Meeting*>& parts, size_t first, size_t count) {
  std::vector<Tensor> list;
  for (size_t i = 0; i < count; ++i) list.push_back(members_tensor(parts, first + i));
  return list;
}

// Each member's i-th split as one local int.
std::vector<SymInt> members_splits(const std::vector<Meeting*>& parts, bool output) {
  const Meeting& first = lead(parts);
  const std::vector<int>& fibre = *first.fibre;
  const size_t n = output ? first.splits_out.size() : first.splits_in.size();
  std::vector<SymInt> splits;
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::pair<int, int64_t>> values;
    for (size_t k = 0; k < parts.size(); ++k)
      if (parts[k] != nullptr)
        values.emplace_back(fibre[k], output ? parts[k]->splits_out[i] : parts[k]->splits_in[i]);
    splits.emplace_back(LocalInt(RankMap<int64_t>(std::move(values))));
  }
  return splits;
}

}  // namespace

void all_reduce(const world::RunningProgram& p, Tensor& tensor, ReduceOp op, const ProcessGroup& group) {
  Meeting m;
  m.collective = "all_reduce";
  const Tensor& own = usable(m, p.rank, tensor, "the tensor", true);
  agree_on_tensor(m.agreed, own);
  agree_on_op(m, op);
  m.tensors.push_back(&own);
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor t = members_tensor(parts, 0);
    dist::all_reduce(t, lead(parts).op, g);
  };
  meet(p, m, group);
}

void broadcast(const world::RunningProgram& p, Tensor& tensor, int src, const ProcessGroup& group) {
  Meeting m;
  m.collective = "broadcast";
  const Tensor& own = usable(m, p.rank, tensor, "the tensor", true);
  agree_on_tensor(m.agreed, own);
  m.root = src;
  m.agreed.push_back(src);
  m.tensors.push_back(&own);
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor t = members_tensor(parts, 0);
    dist::broadcast(t, lead(parts).root, g);
  };
  meet(p, m, group);
}

void reduce(const world::RunningProgram& p, Tensor& tensor, int dst, ReduceOp op, const ProcessGroup& group) {
  Meeting m;
  m.collective = "reduce";
  const Tensor& own = usable(m, p.rank, tensor, "the tensor", true);
  agree_on_tensor(m.agreed, own);
  agree_on_op(m, op);
  m.root = dst;
  m.agreed.push_back(dst);
  m.tensors.push_back(&own);
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor t = members_tensor(parts, 0);
    dist::reduce(t, lead(parts).root, lead(parts).op, g);
  };
  meet(p, m, group);
}

void all_gather(const world::RunningProgram& p, std::vector<Tensor>& outputs, const Tensor& tensor,
                const ProcessGroup& group) {
  Meeting m;
  m.collective = "all_gather";
  const Tensor& own = usable(m, p.rank, tensor, "the tensor", false);
  agree_on_tensor(m.agreed, own);
  m.agreed.push_back(static_cast<int64_t>(outputs.size()));
  m.tensors.push_back(&own);
  for (const Tensor& out : outputs) {
    m.tensors.push_back(&usable(m, p.rank, out, "an output", true));
    agree_on_tensor(m.agreed, *m.tensors.back());
  }
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    std::vector<Tensor> outs = members_list(parts, 1, lead(parts).tensors.size() - 1);
    dist::all_gather(outs, members_tensor(parts, 0), g);
  };
  meet(p, m, group);
}

void all_gather_into_tensor(const world::RunningProgram& p, Tensor& output, const Tensor& input,
                            const ProcessGroup& group) {
  Meeting m;
  m.collective = "all_gather_into_tensor";
  m.tensors = {&usable(m, p.rank, output, "the output", true), &usable(m, p.rank, input, "the input", false)};
  agree_on_tensor(m.agreed, *m.tensors[0]);
  agree_on_tensor(m.agreed, *m.tensors[1]);
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor out = members_tensor(parts, 0);
    dist::all_gather_into_tensor(out, members_tensor(parts, 1), g);
  };
  meet(p, m, group);
}

void reduce_scatter(const world::RunningProgram& p, Tensor& output, const std::vector<Tensor>& inputs,
                    ReduceOp op, const ProcessGroup& group) {
  Meeting m;
  m.collective = "reduce_scatter";
  m.tensors = {&usable(m, p.rank, output, "the output", true)};
  agree_on_tensor(m.agreed, *m.tensors[0]);
  agree_on_op(m, op);
  m.agreed.push_back(static_cast<int64_t>(inputs.size()));
  for (const Tensor& in : inputs) {
    m.tensors.push_back(&usable(m, p.rank, in, "an input", false));
    agree_on_tensor(m.agreed, *m.tensors.back());
  }
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor out = members_tensor(parts, 0);
    dist::reduce_scatter(out, members_list(parts, 1, lead(parts).tensors.size() - 1), lead(parts).op, g);
  };
  meet(p, m, group);
}

void reduce_scatter_tensor(const world::RunningProgram& p, Tensor& output, const Tensor& input, ReduceOp op,
                           const ProcessGroup& group) {
  Meeting m;
  m.collective = "reduce_scatter_tensor";
  m.tensors = {&usable(m, p.rank, output, "the output", true), &usable(m, p.rank, input, "the input", false)};
  agree_on_tensor(m.agreed, *m.tensors[0]);
  agree_on_tensor(m.agreed, *m.tensors[1]);
  agree_on_op(m, op);
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor out = members_tensor(parts, 0);
    dist::reduce_scatter_tensor(out, members_tensor(parts, 1), lead(parts).op, g);
  };
  meet(p, m, group);
}

void all_to_all(const world::RunningProgram& p, std::vector<Tensor>& outputs,
                const std::vector<Tensor>& inputs, const ProcessGroup& group) {
  Meeting m;
  m.collective = "all_to_all";
  m.agreed = {static_cast<int64_t>(outputs.size()), static_cast<int64_t>(inputs.size())};
  for (const Tensor& out : outputs) {
    m.tensors.push_back(&usable(m, p.rank, out, "an output", true));
    agree_on_tensor(m.agreed, *m.tensors.back());
  }
  for (const Tensor& in : inputs) {
    m.tensors.push_back(&usable(m, p.rank, in, "an input", false));
    agree_on_tensor(m.agreed, *m.tensors.back());
  }
  m.first_input = outputs.size();
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    const size_t outputs = lead(parts).first_input;
    std::vector<Tensor> outs = members_list(parts, 0, outputs);
    dist::all_to_all(outs, members_list(parts, outputs, lead(parts).tensors.size() - outputs), g);
  };
  meet(p, m, group);
}

void all_to_all_single(const world::RunningProgram& p, Tensor& output, const Tensor& input,
                       const std::vector<SymInt>& output_splits, const std::vector<SymInt>& input_splits,
                       const ProcessGroup& group) {
  Meeting m;
  m.collective = "all_to_all_single";
  m.tensors = {&usable(m, p.rank, output, "the output", true), &usable(m, p.rank, input, "the input", false)};
  // Shapes may differ between members (uneven splits); the local-tensor collective checks that what
  // each member sends matches what its peer expects.
  m.agreed = {static_cast<int64_t>(output.dtype()), static_cast<int64_t>(input.dtype()),
              static_cast<int64_t>(output_splits.size()), static_cast<int64_t>(input_splits.size())};
  for (const SymInt& s : output_splits) m.splits_out.push_back(s.as_int());
  for (const SymInt& s : input_splits) m.splits_in.push_back(s.as_int());
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    Tensor out = members_tensor(parts, 0);
    dist::all_to_all_single(out, members_tensor(parts, 1), members_splits(parts, true),
                            members_splits(parts, false), g);
  };
  meet(p, m, group);
}

void scatter(const world::RunningProgram& p, Tensor& output, const std::vector<Tensor>& inputs, int src,
             const ProcessGroup& group) {
  Meeting m;
  m.collective = "scatter";
  m.tensors = {&usable(m, p.rank, output, "the output", true)};
  agree_on_tensor(m.agreed, *m.tensors[0]);
  m.root = src;
  m.agreed.push_back(src);
  for (const Tensor& in : inputs)  // the root's; other ranks' are not read
    m.tensors.push_back(&usable(m, p.rank, in, "an input", false));
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    const int root = lead(parts).root;
    const std::vector<Tensor> ins = roots_list(parts, root);
    Tensor out = members_tensor(parts, 0);
    dist::scatter(out, ins, root, g);
  };
  meet(p, m, group);
}

void gather(const world::RunningProgram& p, std::vector<Tensor>& outputs, const Tensor& tensor, int dst,
            const ProcessGroup& group) {
  Meeting m;
  m.collective = "gather";
  m.tensors = {&usable(m, p.rank, tensor, "the tensor", false)};
  agree_on_tensor(m.agreed, *m.tensors[0]);
  m.root = dst;
  m.agreed.push_back(dst);
  for (const Tensor& out : outputs)  // the root's; other ranks' stay unchanged
    m.tensors.push_back(&usable(m, p.rank, out, "an output", true));
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    const int root = lead(parts).root;
    std::vector<Tensor> outs = roots_list(parts, root);
    dist::gather(outs, members_tensor(parts, 0), root, g);
  };
  meet(p, m, group);
}

void barrier(const world::RunningProgram& p, const ProcessGroup& group) {
  Meeting m;
  m.collective = "barrier";
  m.run = [](const std::vector<Meeting*>& parts, const ProcessGroup& g) {
    const Tensor none = empty({0});
    std::vector<std::pair<int, Tensor>> shards;
    const std::vector<int>& fibre = *lead(parts).fibre;
    for (size_t k = 0; k < parts.size(); ++k)
      if (parts[k] != nullptr) shards.emplace_back(fibre[k], none);
    dist::barrier(local_tensor(RankMap<Tensor>(std::move(shards))), g);
  };
  meet(p, m, group);
}

}  // namespace program
}  // namespace tessera::comm

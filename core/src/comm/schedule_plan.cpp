#include "comm/schedule_plan.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "comm/schedule_runner.hpp"

namespace tessera::comm {
namespace {

// The value at a run's position `delta` elements further on.
PlanRun advanced(const PlanRun& run, int64_t delta, int64_t length) {
  return {length, run.value, run.value == kUndefined ? 0 : run.offset + delta};
}

// Whether `next` continues `run` (so the two are one run): the same value, at the next offset.
bool continues(const PlanRun& run, const PlanRun& next) {
  return run.value == next.value && (run.value == kUndefined || run.offset + run.length == next.offset);
}

// One buffer of one rank as runs: a map from run start to the value and offset there; a run lasts
// to the next start (the last to the buffer's end). Adjacent runs that continue each other are kept
// merged, so equal contents have equal run lists (what finds equal outputs and shared nodes).
class RunBuffer {
 public:
  RunBuffer(int64_t size, int32_t value) : size_(size) {
    if (size > 0) runs_.emplace(0, Entry{value, 0});
  }

  std::vector<PlanRun> read(int64_t offset, int64_t count) const {
    std::vector<PlanRun> runs;
    if (count == 0) return runs;
    const int64_t end = offset + count;
    for (auto it = containing(offset); offset < end; ++it) {
      const int64_t stop = std::min(end_of(it), end);
      runs.push_back(advanced({0, it->second.value, it->second.offset}, offset - it->first, stop - offset));
      offset = stop;
    }
    return runs;
  }

  // Replaces the elements from `offset` by `runs` (chunks were checked to be in bounds).
  void write(int64_t offset, const std::vector<PlanRun>& runs) {
    int64_t end = offset;
    for (const PlanRun& r : runs) end += r.length;
    if (end == offset) return;
    split(offset);
    split(end);
    runs_.erase(runs_.lower_bound(offset), runs_.lower_bound(end));
    // The run before `offset`, if any, to merge the first written run into.
    auto last = offset > 0 ? std::prev(runs_.lower_bound(offset)) : runs_.end();
    for (const PlanRun& r : runs) {
      if (r.length == 0) continue;
      if (last != runs_.end() && continues(run_at(last, offset), r)) {
        offset += r.length;
        continue;
      }
      last = runs_.emplace_hint(runs_.lower_bound(offset), offset, Entry{r.value, r.offset});
      offset += r.length;
    }
    if (const auto next = runs_.find(end);
        next != runs_.end() && last != runs_.end() &&
        continues(run_at(last, end), {0, next->second.value, next->second.offset}))
      runs_.erase(next);
  }

  std::vector<PlanRun> all() const { return read(0, size_); }

 private:
  struct Entry {
    int32_t value;
    int64_t offset;
  };
  using Map = std::map<int64_t, Entry>;

  Map::const_iterator containing(int64_t position) const { return std::prev(runs_.upper_bound(position)); }
  int64_t end_of(Map::const_iterator it) const {
    const auto next = std::next(it);
    return next == runs_.end() ? size_ : next->first;
  }
  // The run `it` starts, as ending at `end`.
  static PlanRun run_at(Map::const_iterator it, int64_t end) {
    return {end - it->first, it->second.value, it->second.offset};
  }
  void split(int64_t position) {
    if (position <= 0 || position >= size_) return;
    const auto it = containing(position);
    if (it->first == position) return;
    const PlanRun moved = advanced({0, it->second.value, it->second.offset}, position - it->first, 0);
    runs_.emplace_hint(std::next(it), position, Entry{moved.value, moved.offset});
  }

  int64_t size_;
  Map runs_;
};

struct NodeKey {
  int32_t left;
  int32_t right;
  int64_t left_offset;
  int64_t right_offset;
  int64_t length;
  bool operator==(const NodeKey&) const = default;
};

struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const {
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (uint64_t v : {uint64_t(uint32_t(k.left)), uint64_t(uint32_t(k.right)), uint64_t(k.left_offset),
                       uint64_t(k.right_offset), uint64_t(k.length)})
      h = (h ^ v) * 0x100000001b3ULL + (h >> 29);
    return static_cast<size_t>(h);
  }
};

// The model schedule_runner.hpp drives: it replays the schedule with run lists for data. A message
// holds the runs its source held when it was sent, which is what a replay delivers too (the
// executor copies a message before its sender overwrites the region it reads).
class PlanModel {
 public:
  struct Payload {
    int64_t count;
    std::vector<PlanRun> runs;
  };

  explicit PlanModel(const Schedule& schedule)
      : p_(schedule.group_size()), commutes_(commutes_bitwise(schedule.request.reduce_op)) {
    buffers_.resize(static_cast<size_t>(p_));
    for (int r = 0; r < p_; ++r) {
      const RankProgram& program = schedule.ranks[static_cast<size_t>(r)];
      auto& buffers = buffers_[static_cast<size_t>(r)];
      buffers.reserve(program.buffer_sizes.size());
      for (size_t b = 0; b < program.buffer_sizes.size(); ++b)
        buffers.emplace_back(program.buffer_sizes[b], b == TESSERA_BUFFER_INPUT ? r : kUndefined);
    }
  }

  Payload capture(int rank, const tessera_chunk& c) {
    return {c.count, buffer(rank, c).read(c.offset, c.count)};
  }
  void deliver(int rank, const tessera_chunk& c, Payload& payload, bool reduce) {
    if (reduce)
      reduce_into(rank, c, payload.runs);
    else
      buffer(rank, c).write(c.offset, payload.runs);
  }
  // Every read happens before the write, as the executor stages overlapping chunks.
  void copy(int rank, const tessera_chunk& dst, const tessera_chunk& src) {
    buffer(rank, dst).write(dst.offset, buffer(rank, src).read(src.offset, src.count));
  }
  void reduce(int rank, const tessera_chunk& dst, const tessera_chunk& src) {
    reduce_into(rank, dst, buffer(rank, src).read(src.offset, src.count));
  }

  std::vector<PlanRun> output(int rank) const {
    return buffers_[static_cast<size_t>(rank)][TESSERA_BUFFER_OUTPUT].all();
  }
  std::vector<PlanNode> take_nodes() { return std::move(nodes_); }

 private:
  RunBuffer& buffer(int rank, const tessera_chunk& c) {
    return buffers_[static_cast<size_t>(rank)][static_cast<size_t>(c.buffer)];
  }

  // destination = destination op source, run by run: the executor's kernel call has the
  // destination's old value as its left operand and the incoming one as its right.
  void reduce_into(int rank, const tessera_chunk& dst, const std::vector<PlanRun>& source) {
    const std::vector<PlanRun> left = buffer(rank, dst).read(dst.offset, dst.count);
    std::vector<PlanRun> result;
    size_t a = 0, b = 0;
    int64_t used_a = 0, used_b = 0;  // elements of left[a] and source[b] already consumed
    while (a < left.size() && b < source.size()) {
      const PlanRun& l = left[a];
      const PlanRun& s = source[b];
      const int64_t length = std::min(l.length - used_a, s.length - used_b);
      if (length > 0) {
        const PlanRun x = advanced(l, used_a, length), y = advanced(s, used_b, length);
        // A value nobody wrote stays unspecified whatever it is combined with (the checker
        // accepts a schedule only if no output the collective defines depends on one).
        if (x.value == kUndefined || y.value == kUndefined)
          result.push_back({length, kUndefined, 0});
        else
          result.push_back({length, node({x.value, y.value, x.offset, y.offset, length}), 0});
      }
      used_a += length;
      used_b += length;
      if (used_a == l.length) ++a, used_a = 0;
      if (used_b == s.length) ++b, used_b = 0;
    }
    buffer(rank, dst).write(dst.offset, result);
  }

  // The node for `left op right`, hash-consed. Under an op that commutes bitwise the operands are
  // put in one order first, so ranks that combine the same two values in opposite orders (recursive
  // doubling: rank r computes x_r + x_{r^1}, its partner x_{r^1} + x_r) share one node, and a
  // result every rank reaches that way is computed once.
  int32_t node(NodeKey key) {
    if (commutes_ && std::pair(key.right, key.right_offset) < std::pair(key.left, key.left_offset)) {
      std::swap(key.left, key.right);
      std::swap(key.left_offset, key.right_offset);
    }
    const auto [it, added] = ids_.try_emplace(key, p_ + static_cast<int32_t>(nodes_.size()));
    if (added) {
      PlanNode& node = nodes_.emplace_back();
      node.left = key.left;
      node.left_offset = key.left_offset;
      node.right = key.right;
      node.right_offset = key.right_offset;
      node.length = key.length;
    }
    return it->second;
  }

  int p_;
  bool commutes_;
  std::vector<std::vector<RunBuffer>> buffers_;
  std::vector<PlanNode> nodes_;
  std::unordered_map<NodeKey, int32_t, NodeKeyHash> ids_;
};

// Group ranks by their outputs' runs, looked up where they lie: a key copied out per rank would
// copy every run (an all_to_all over a thousand ranks has a million).
struct RunsOfRank {
  const std::vector<std::vector<PlanRun>>* outputs;
  size_t operator()(int32_t r) const {
    const std::vector<PlanRun>& runs = (*outputs)[static_cast<size_t>(r)];
    uint64_t h = runs.size();
    for (const PlanRun& run : runs)
      for (uint64_t v : {uint64_t(run.length), uint64_t(uint32_t(run.value)), uint64_t(run.offset)})
        h = (h ^ v) * 0x100000001b3ULL + (h >> 31);
    return static_cast<size_t>(h);
  }
  bool operator()(int32_t r, int32_t s) const {
    return (*outputs)[static_cast<size_t>(r)] == (*outputs)[static_cast<size_t>(s)];
  }
};

// Drops nodes no output needs (a partial result overwritten before anyone read it) and renumbers
// the rest, keeping their order.
void prune(SchedulePlan& plan) {
  const int32_t p = plan.group_size;
  std::vector<bool> needed(plan.nodes.size(), false);
  auto need = [&](int32_t value) {
    if (value >= p) needed[static_cast<size_t>(value - p)] = true;
  };
  for (int r = 0; r < p; ++r)
    if (plan.output_class[static_cast<size_t>(r)] == r)
      for (const PlanRun& run : plan.outputs[static_cast<size_t>(r)]) need(run.value);
  for (size_t i = plan.nodes.size(); i-- > 0;)
    if (needed[i]) {
      need(plan.nodes[i].left);
      need(plan.nodes[i].right);
    }
  // A plan written in closed form needs every node: nothing to drop, nothing to renumber.
  if (std::all_of(needed.begin(), needed.end(), [](bool b) { return b; })) return;
  std::vector<int32_t> renamed(plan.nodes.size(), kUndefined);
  std::vector<PlanNode> kept;
  kept.reserve(static_cast<size_t>(std::count(needed.begin(), needed.end(), true)));
  auto rename = [&](int32_t value) { return value >= p ? renamed[static_cast<size_t>(value - p)] : value; };
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    if (!needed[i]) continue;
    PlanNode n = plan.nodes[i];
    n.left = rename(n.left);
    n.right = rename(n.right);
    renamed[i] = p + static_cast<int32_t>(kept.size());
    kept.push_back(n);
  }
  plan.nodes = std::move(kept);
  for (auto& runs : plan.outputs)
    for (PlanRun& run : runs) run.value = rename(run.value);
}

// Nodes longer than this go alone: a kernel call is cheap next to their work, and gathering them
// would only copy more.
constexpr int64_t kBatchedLength = 4096;
constexpr int64_t kBatchElements = int64_t{1} << 16;

// Within each depth of `order` (sorted by depth), puts the nodes by length and, within a length,
// the nodes with an operand of the depth before in that operand's order (the left one if both
// are), the others after them as they were: node i of one wave then continues node i of the wave
// before (a ring's chains, which the schedule creates in an order rotating by one rank per wave),
// as PlanBatch::continues asks, and blocks of two lengths make one batch per length and depth.
void align_chains(const SchedulePlan& plan, const std::vector<int32_t>& depth, std::vector<size_t>& order) {
  const int32_t p = plan.group_size;
  constexpr size_t kAfterChains = std::numeric_limits<size_t>::max();
  std::vector<size_t> position(order.size(), kAfterChains);  // of a node within its depth
  std::vector<std::pair<size_t, size_t>> keyed;              // (operand's position, node)
  for (size_t first = 0; first < order.size();) {
    const int32_t d = depth[order[first]];
    size_t end = first;
    while (end < order.size() && depth[order[end]] == d) ++end;
    const auto previous_wave = [&](int32_t value) {
      return value >= p && depth[static_cast<size_t>(value - p)] == d - 1;
    };
    keyed.clear();
    for (size_t k = first; k < end; ++k) {
      const PlanNode& node = plan.nodes[order[k]];
      const int32_t operand = previous_wave(node.left)    ? node.left
                              : previous_wave(node.right) ? node.right
                                                          : -1;
      keyed.emplace_back(operand >= 0 ? position[static_cast<size_t>(operand - p)] : kAfterChains, order[k]);
    }
    const auto before = [&](const auto& a, const auto& b) {
      const int64_t a_length = plan.nodes[a.second].length, b_length = plan.nodes[b.second].length;
      return a_length != b_length ? a_length > b_length : a.first < b.first;
    };
    if (!std::is_sorted(keyed.begin(), keyed.end(), before))
      std::stable_sort(keyed.begin(), keyed.end(), before);
    for (size_t k = first; k < end; ++k) {
      order[k] = keyed[k - first].second;
      position[order[k]] = k - first;
    }
    first = end;
  }
}

// Puts the nodes in `order` (nodes[k] = old nodes[order[k]]) and renumbers every operand and
// output run.
void move_into_order(SchedulePlan& plan, const std::vector<size_t>& order) {
  const int32_t p = plan.group_size;
  const size_t n = plan.nodes.size();
  std::vector<int32_t> renamed(n);
  for (size_t k = 0; k < n; ++k) renamed[order[k]] = p + static_cast<int32_t>(k);
  auto rename = [&](int32_t value) { return value >= p ? renamed[static_cast<size_t>(value - p)] : value; };
  for (PlanNode& node : plan.nodes) {
    node.left = rename(node.left);
    node.right = rename(node.right);
  }
  // In place, cycle by cycle: a sorted copy would double the peak memory of a plan of p^2 nodes (a
  // reduce_scatter over a thousand ranks). Each cycle is listed first, so that its moves can be
  // fetched ahead rather than waiting on one another.
  std::vector<bool> placed(n, false);
  std::vector<size_t> cycle;
  for (size_t start = 0; start < n; ++start) {
    if (placed[start] || order[start] == start) continue;
    cycle.clear();
    for (size_t k = start; !placed[k]; k = order[k]) {
      placed[k] = true;
      cycle.push_back(k);
    }
    const PlanNode first = plan.nodes[start];
    constexpr size_t kAhead = 8;
    for (size_t j = 0; j + 1 < cycle.size(); ++j) {
      if (j + kAhead < cycle.size()) __builtin_prefetch(&plan.nodes[cycle[j + kAhead]]);
      plan.nodes[cycle[j]] = plan.nodes[cycle[j + 1]];
    }
    plan.nodes[cycle.back()] = first;
  }
  for (auto& runs : plan.outputs)
    for (PlanRun& run : runs) run.value = rename(run.value);
}

// The batches, over nodes in their final order: runs of one depth and one length (batching), or
// each node alone. `depth` and `order` as order_by_depth made them (depth by the old numbers).
void make_batches(SchedulePlan& plan, const std::vector<int32_t>& depth, const std::vector<size_t>& order,
                  bool batching) {
  const size_t n = plan.nodes.size();
  for (size_t k = 0; k < n;) {
    const int64_t length = plan.nodes[k].length;
    const int32_t d = depth[order[k]];
    size_t end = k + 1;
    if (batching)
      while (end < n && depth[order[end]] == d && plan.nodes[end].length == length &&
             static_cast<int64_t>(end - k + 1) * length <= kBatchElements)
        ++end;
    plan.batches.push_back({k, end - k, length});
    if (end - k > 1)
      plan.staging_size = std::max(plan.staging_size, 2 * static_cast<int64_t>(end - k) * length);
    k = end;
  }
}

// Orders the nodes by depth (stable: within a depth, as created, but for align_chains), renumbers
// them and cuts them into batches.
void order_by_depth(SchedulePlan& plan) {
  const int32_t p = plan.group_size;
  const size_t n = plan.nodes.size();
  std::vector<int32_t> depth(n, 0);
  auto depth_of = [&](int32_t value) { return value >= p ? depth[static_cast<size_t>(value - p)] : 0; };
  // Long nodes keep the order the schedule made them in: it is the replay's, and so is the space
  // live values take; ordering them by depth could hold more of them at once for no gain. (One
  // pass finds both: each pass over a million nodes reads ~80 MB.)
  bool batching = true;
  for (size_t i = 0; i < n; ++i) {
    const PlanNode& node = plan.nodes[i];
    depth[i] = 1 + std::max(depth_of(node.left), depth_of(node.right));
    batching = batching && orders_by_depth(node.length);
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (batching) {
    const auto shallower = [&](size_t a, size_t b) { return depth[a] < depth[b]; };
    if (!std::is_sorted(order.begin(), order.end(), shallower))
      std::stable_sort(order.begin(), order.end(), shallower);
    align_chains(plan, depth, order);
  }
  // Nodes made in this order already (the bundled algorithms' closed forms make them so) keep
  // their numbers: nothing to rename or move.
  bool in_order = true;
  for (size_t k = 0; k < n && in_order; ++k) in_order = order[k] == k;
  if (!in_order) move_into_order(plan, order);
  make_batches(plan, depth, order, batching);
}

// Scratch space for the nodes, reused once a value is dead: best fit over free intervals.
class ArenaAllocator {
 public:
  int64_t allocate(int64_t length) {
    auto fit = by_size_.lower_bound({length, 0});
    if (fit == by_size_.end()) {
      // Grow the arena, starting inside a free interval that touches its end.
      int64_t start = size_;
      if (!by_offset_.empty() &&
          std::prev(by_offset_.end())->first + std::prev(by_offset_.end())->second == size_) {
        const auto tail = std::prev(by_offset_.end());
        start = tail->first;
        by_size_.erase({tail->second, tail->first});
        by_offset_.erase(tail);
      }
      size_ = start + length;
      return start;
    }
    const auto [free_length, start] = *fit;
    by_size_.erase(fit);
    by_offset_.erase(start);
    if (free_length > length) insert(start + length, free_length - length);
    return start;
  }

  void release(int64_t start, int64_t length) {
    if (length == 0) return;
    // Coalesce with the neighbours, so that the free list stays as short as the live values are few.
    auto next = by_offset_.lower_bound(start);
    if (next != by_offset_.end() && next->first == start + length) {
      length += next->second;
      by_size_.erase({next->second, next->first});
      next = by_offset_.erase(next);
    }
    if (next != by_offset_.begin()) {
      const auto before = std::prev(next);
      if (before->first + before->second == start) {
        start = before->first;
        length += before->second;
        by_size_.erase({before->second, before->first});
        by_offset_.erase(before);
      }
    }
    insert(start, length);
  }

  int64_t size() const { return size_; }

 private:
  void insert(int64_t start, int64_t length) {
    by_offset_.emplace(start, length);
    by_size_.emplace(length, start);
  }
  int64_t size_ = 0;
  std::map<int64_t, int64_t> by_offset_;
  std::set<std::pair<int64_t, int64_t>> by_size_;
};

// Gives every node its slot. A node with an operand that is a node used nowhere else is computed in
// place over it (a chain of reductions into one buffer, as replay does it, needs no copies); other
// nodes start a region of fresh space. A region whose last node is exactly one run of one assembled
// output, and used nowhere else, lives in that output buffer (an all_reduce's result is computed
// where it is returned, not copied there); the others live in the arena, released after the last
// use of the last node living there. Within a batch every operand is read before any result is
// written, so space a batch's node frees may hold a later node of the same batch.
void assign_slots(SchedulePlan& plan) {
  const int32_t p = plan.group_size;
  const size_t n = plan.nodes.size();
  constexpr size_t kForever = SIZE_MAX;
  std::vector<int32_t> uses(n, 0);
  std::vector<size_t> last_use(n, 0);
  auto use = [&](int32_t value, size_t at) {
    if (value < p) return;
    const size_t i = static_cast<size_t>(value - p);
    ++uses[i];
    last_use[i] = std::max(last_use[i], at);
  };
  for (size_t i = 0; i < n; ++i) {
    use(plan.nodes[i].left, i);
    use(plan.nodes[i].right, i);
  }
  for (int r = 0; r < p; ++r)
    if (plan.output_class[static_cast<size_t>(r)] == r)
      for (const PlanRun& run : plan.outputs[static_cast<size_t>(r)]) use(run.value, kForever);

  struct Region {
    int64_t length;
    size_t last;        // the node living there last
    int32_t home = -1;  // the output it lives in, or -1: the arena
    int64_t start = 0;  // in that output or the arena
  };
  std::vector<Region> regions;
  std::vector<size_t> region_of(n);
  std::vector<int64_t> within(n, 0);  // a node's offset inside its region
  for (size_t i = 0; i < n; ++i) {
    PlanNode& node = plan.nodes[i];
    // The operand it may overwrite: a node nothing else uses, the left one first (the executor's
    // in-place call); a chain that reduces incoming partial results into local ones (a ring's
    // `mine op incoming`) continues over the right one.
    auto only_use = [&](int32_t value) { return value >= p && uses[static_cast<size_t>(value - p)] == 1; };
    node.over = only_use(node.left)    ? PlanNode::kOverLeft
                : only_use(node.right) ? PlanNode::kOverRight
                                       : PlanNode::kFresh;
    if (node.over != PlanNode::kFresh) {
      const bool left = node.over == PlanNode::kOverLeft;
      const size_t o = static_cast<size_t>((left ? node.left : node.right) - p);
      region_of[i] = region_of[o];
      within[i] = within[o] + (left ? node.left_offset : node.right_offset);
      regions[region_of[i]].last = i;
    } else {
      region_of[i] = regions.size();
      regions.push_back({node.length, i});
    }
  }
  for (int r = 0; r < p; ++r) {
    if (plan.output_class[static_cast<size_t>(r)] != r) continue;
    int64_t at = 0;
    for (const PlanRun& run : plan.outputs[static_cast<size_t>(r)]) {
      if (run.value >= p) {
        const size_t v = static_cast<size_t>(run.value - p);
        Region& region = regions[region_of[v]];
        if (region.last == v && uses[v] == 1 && within[v] == 0 && run.offset == 0 &&
            run.length == region.length) {
          region.home = r;
          region.start = at;
        }
      }
      at += run.length;
    }
  }

  ArenaAllocator arena;
  auto release = [&](size_t region) {
    if (regions[region].home < 0) arena.release(regions[region].start, regions[region].length);
  };
  for (size_t i = 0; i < n; ++i) {
    PlanNode& node = plan.nodes[i];
    Region& region = regions[region_of[i]];
    if (node.over == PlanNode::kFresh && region.home < 0) region.start = arena.allocate(node.length);
    node.home = region.home;
    node.slot = region.start + within[i];
    // Operands dead after this node give their space back (after this node's slot was taken, so
    // it never overlaps what it reads).
    auto release_if_dead = [&](int32_t operand) {
      if (operand < p) return;
      const size_t o = static_cast<size_t>(operand - p);
      if (last_use[o] == i && region_of[o] != region_of[i]) release(region_of[o]);
    };
    release_if_dead(node.left);
    if (node.right != node.left) release_if_dead(node.right);
    if (uses[i] == 0) release(region_of[i]);
  }
  plan.arena_size = arena.size();
}

// Sets PlanBatch::continues, from and continued_by, lists the continued batches' other operands
// (after assign_slots, which decides what is computed in place, and place_operands, which resolves
// the places) and marks the chains that may be computed ahead.
void mark_continued_batches(SchedulePlan& plan) {
  const int32_t p = plan.group_size;
  std::vector<size_t> batch_of(plan.nodes.size());
  for (size_t b = 0; b < plan.batches.size(); ++b)
    for (size_t i = 0; i < plan.batches[b].count; ++i) batch_of[plan.batches[b].first + i] = b;
  const auto carried = [](const PlanNode& node, uint8_t side) {
    return side == PlanNode::kOverLeft ? std::pair{node.left, node.left_offset}
                                       : std::pair{node.right, node.right_offset};
  };
  for (size_t b = 0; b < plan.batches.size(); ++b) {
    PlanBatch& batch = plan.batches[b];
    const uint8_t side = plan.nodes[batch.first].over;
    if (batch.count < 2 || side == PlanNode::kFresh) continue;
    const int32_t head = carried(plan.nodes[batch.first], side).first;
    if (head < p) continue;
    const size_t f = batch_of[static_cast<size_t>(head - p)];
    PlanBatch& from = plan.batches[f];
    if (from.count != batch.count || from.length != batch.length || from.continued_by != PlanBatch::kNone)
      continue;
    bool continues = true;
    for (size_t i = 0; continues && i < batch.count; ++i) {
      const PlanNode& node = plan.nodes[batch.first + i];
      const std::pair<int32_t, int64_t> whole_previous{p + static_cast<int32_t>(from.first + i), 0};
      continues = node.over == side && carried(node, side) == whole_previous;
    }
    if (!continues) continue;
    batch.continues = side;
    batch.from = f;
    from.continued_by = b;
  }
  // The chains' other operands, one per node of every link: counted first, so that a plan of a
  // million chained nodes fills them in place rather than growing them copy by copy.
  size_t others = 0;
  for (const PlanBatch& link : plan.batches)
    if (link.continues != PlanNode::kFresh) others += link.count;
  plan.others.reserve(others);
  for (PlanBatch& start : plan.batches) {
    if (start.continues != PlanNode::kFresh || start.continued_by == PlanBatch::kNone) continue;
    // The chain's other operands, link after link (one gather covers any run of its links), and
    // whether all are inputs or values computed before the chain.
    const int32_t before = p + static_cast<int32_t>(start.first);
    bool ahead = true;
    for (size_t c = start.continued_by; c != PlanBatch::kNone; c = plan.batches[c].continued_by) {
      PlanBatch& link = plan.batches[c];
      link.others = plan.others.size();
      for (size_t i = 0; i < link.count; ++i) {
        const PlanNode& node = plan.nodes[link.first + i];
        const bool over_left = link.continues == PlanNode::kOverLeft;
        plan.others.push_back(over_left ? node.right_place : node.left_place);
        ahead = ahead && (over_left ? node.right : node.left) < before;
      }
    }
    if (!ahead) continue;
    start.chain_ahead = true;
    for (size_t c = start.continued_by; c != PlanBatch::kNone; c = plan.batches[c].continued_by)
      plan.batches[c].chain_ahead = true;
  }
}

// Resolves every node's operands to (base, element) once, so that an evaluation
// finds them with one table lookup (plan_evaluator's batches touch each node every call).
void place_operands(SchedulePlan& plan) {
  for (PlanNode& node : plan.nodes) {
    node.left_place = place_of(plan, node.left, node.left_offset);
    node.right_place = place_of(plan, node.right, node.right_offset);
  }
}

}  // namespace

bool orders_by_depth(int64_t length) { return length <= kBatchedLength; }

// Whether `reduce_op` gives the same bits with its operands swapped, on every backend (KERNELS.md):
// IEEE addition and multiplication commute, signed zeros included, and a NaN result is the one
// positive quiet NaN whatever NaNs went in; integers wrap alike either way; bool add and mul are or
// and and; the bitwise ops commute. Not minimum and maximum: the first NaN operand wins, and of +0
// and -0 the comparison keeps the first.
bool commutes_bitwise(int32_t reduce_op) {
  switch (reduce_op) {
    case TESSERA_REDUCE_SUM:
    case TESSERA_REDUCE_PRODUCT:
    case TESSERA_REDUCE_BAND:
    case TESSERA_REDUCE_BOR:
    case TESSERA_REDUCE_BXOR:
      return true;
    default:
      return false;
  }
}

size_t SchedulePlan::distinct_outputs() const {
  size_t count = 0;
  for (size_t r = 0; r < output_class.size(); ++r) count += output_class[r] == static_cast<int32_t>(r);
  return count;
}

PlanPlace place_of(const SchedulePlan& plan, int32_t value, int64_t offset) {
  const int32_t p = plan.group_size;
  if (value == kUndefined) return PlanPlace{kNoBase, 0};
  if (value < p) return PlanPlace{value, offset};
  const PlanPlace node = plan.nodes[static_cast<size_t>(value - p)].out_place(p);
  return PlanPlace{node.base, node.at + offset};
}

SchedulePlan derive_plan(const Schedule& schedule) {
  PlanModel model(schedule);
  run_schedule(schedule, model);
  const size_t p = static_cast<size_t>(schedule.group_size());
  std::vector<std::vector<PlanRun>> outputs(p);
  std::vector<int64_t> output_sizes(p);
  for (size_t r = 0; r < p; ++r) {
    outputs[r] = model.output(static_cast<int>(r));
    output_sizes[r] = schedule.ranks[r].buffer_sizes[TESSERA_BUFFER_OUTPUT];
  }
  return plan_from_values(schedule.group_size(), schedule.request.reduce_op, model.take_nodes(),
                          std::move(outputs), std::move(output_sizes));
}

SchedulePlan plan_from_values(int group_size, int32_t reduce_op, std::vector<PlanNode> nodes,
                              std::vector<std::vector<PlanRun>> outputs, std::vector<int64_t> output_sizes) {
  SchedulePlan plan;
  plan.group_size = group_size;
  plan.reduce_op = reduce_op;
  plan.nodes = std::move(nodes);
  plan.outputs = std::move(outputs);
  plan.output_sizes = std::move(output_sizes);
  const size_t p = static_cast<size_t>(group_size);
  plan.output_class.resize(p);
  const RunsOfRank runs_of{&plan.outputs};
  std::unordered_set<int32_t, RunsOfRank, RunsOfRank> first_with(p, runs_of, runs_of);
  for (size_t r = 0; r < p; ++r) plan.output_class[r] = *first_with.insert(static_cast<int32_t>(r)).first;
  prune(plan);
  order_by_depth(plan);
  assign_slots(plan);
  place_operands(plan);
  mark_continued_batches(plan);
  return plan;
}

}  // namespace tessera::comm

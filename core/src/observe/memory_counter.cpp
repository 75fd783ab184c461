// MemoryCounter, MemoryCategory and tag_memory: the bytes each rank holds, per category, as the
// Storages of the tensor layer report them through its memory hooks (tensor/memory_accounting.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "dispatch/memory_context.hpp"
#include "observe/listeners.hpp"
#include "ranks/local_mode_stack.hpp"
#include "tensor/memory_accounting.hpp"
#include "tessera/errors.hpp"
#include "tessera/observe.hpp"
#include "world/world.hpp"

namespace tessera {

// One Storage's bytes as the counters see them. Changed under its listeners' mutex only.
struct detail::MemoryRecord {
  std::shared_ptr<observe::Listeners> listeners;  // of the world the bytes were made in
  uint64_t seen_below = 0;                        // the counters with a smaller serial see them
  int64_t bytes = 0;
  std::string category;
  std::vector<int> ranks;  // the ranks holding them; none yet: counted once a local tensor holds them
  // Held by the rule for plain tensors (the program's rank): the first local tensor to hold them
  // as a shard says whose they are instead.
  bool by_rule = false;
  bool present = true;  // false while released
};

struct MemoryCounter::State {
  struct Held {
    int64_t current = 0;
    int64_t peak = 0;
  };
  std::shared_ptr<observe::Listeners> listeners;  // its mutex guards what follows
  uint64_t serial = 0;
  std::map<std::string, std::map<int, Held>> by_category;  // category -> rank -> bytes
  std::map<int, Held> total;                               // rank -> bytes of every category
};

namespace {

using detail::MemoryRecord;
using Held = MemoryCounter::State::Held;

const std::string kDefaultCategory = "activations";
// The categories tessera itself names, listed first in that order.
const std::array<std::string, 4> kKnownCategories = {"parameters", "gradients", "optimizer_state",
                                                     "activations"};

void add_to(Held& held, int64_t delta) {
  held.current += delta;
  held.peak = std::max(held.peak, held.current);
}

// Adds `delta` bytes per rank of `ranks` in `category` for every counter that sees `record`.
// The caller holds the listeners' mutex.
void count_locked(const MemoryRecord& record, const std::vector<int>& ranks, const std::string& category,
                  int64_t delta) {
  for (MemoryCounter::State* state : record.listeners->memory_counters) {
    if (state->serial >= record.seen_below) continue;
    std::map<int, Held>& in_category = state->by_category[category];
    for (int rank : ranks) {
      add_to(in_category[rank], delta);
      add_to(state->total[rank], delta);
    }
  }
}

// What `record` counts now: its bytes for each holding rank, while present.
void count_record_locked(const MemoryRecord& record, int sign) {
  if (record.present && !record.ranks.empty())
    count_locked(record, record.ranks, record.category, sign * record.bytes);
}

// The rank a plain tensor made outside every LocalMode counts for: get_rank() there.
int program_rank(const world::WorldState& w) {
  return w.distributed() ? w.process_index() * w.ranks_per_process() : 0;
}

MemoryRecord* record_made(size_t bytes, int rank, const std::string* category) {
  world::WorldState& w = world::current();
  observe::Listeners& listeners = observe::listeners_of(w);
  if (listeners.live_memory_counters.load(std::memory_order_relaxed) == 0) return nullptr;
  auto record = std::make_unique<MemoryRecord>();
  record->listeners = observe::shared_listeners_of(w);
  record->bytes = static_cast<int64_t>(bytes);
  const std::string* scoped = category != nullptr ? category : dispatch::memory_category();
  record->category = scoped != nullptr ? *scoped : kDefaultCategory;
  if (rank >= 0) {
    record->ranks = {rank};
  } else if (rank == -1) {
    if (const int task = dispatch::rank_task_rank(); task >= 0) {
      record->ranks = {task};
    } else if (!detail::inside_local_mode()) {
      record->ranks = {program_rank(w)};
      record->by_rule = true;
    }
  }
  std::lock_guard lock(listeners.mutex);
  record->seen_below = listeners.memory_counters_made;
  count_record_locked(*record, +1);
  return record.release();
}

void record_gone(MemoryRecord* record) {
  {
    std::lock_guard lock(record->listeners->mutex);
    count_record_locked(*record, -1);
  }
  delete record;
}

void record_held_by(MemoryRecord* record, int rank) {
  observe::Listeners& listeners = *record->listeners;
  // No counter alive: none made later sees these bytes, so nothing is left to keep up to date.
  if (listeners.live_memory_counters.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard lock(listeners.mutex);
  if (record->by_rule) {
    count_record_locked(*record, -1);
    record->ranks = {rank};
    record->by_rule = false;
    count_record_locked(*record, +1);
    return;
  }
  if (std::find(record->ranks.begin(), record->ranks.end(), rank) != record->ranks.end()) return;
  record->ranks.push_back(rank);
  if (record->present) count_locked(*record, {rank}, record->category, record->bytes);
}

void record_retagged(MemoryRecord* record, const std::string& category) {
  std::lock_guard lock(record->listeners->mutex);
  if (record->category == category) return;
  count_record_locked(*record, -1);
  record->category = category;
  count_record_locked(*record, +1);
}

void record_present(MemoryRecord* record, bool present) {
  std::lock_guard lock(record->listeners->mutex);
  if (record->present == present) return;
  if (!present) count_record_locked(*record, -1);
  record->present = present;
  if (present) count_record_locked(*record, +1);
}

const bool memory_hooks_installed =
    (detail::install_memory_hooks(
         {&record_made, &record_gone, &record_held_by, &record_retagged, &record_present}),
     true);

// The largest over ranks of `pick` (0 when no rank held any), or rank's own.
template <class Pick>
int64_t over_ranks(const std::map<int, Held>& per_rank, int rank, Pick pick) {
  if (rank >= 0) {
    const auto it = per_rank.find(rank);
    return it == per_rank.end() ? 0 : pick(it->second);
  }
  int64_t largest = 0;
  for (const auto& [r, held] : per_rank) largest = std::max(largest, pick(held));
  return largest;
}

void check_rank(int rank, const char* what) {
  if (rank < -1)
    throw Error(
        fmt::format("MemoryCounter::{}: rank {} is not a rank; pass a rank (0 or more), or -1 for the "
                    "largest over ranks",
                    what, rank));
}

}  // namespace

MemoryCounter::MemoryCounter()
    : state_(new State{observe::shared_listeners_of(world::current()), 0, {}, {}}) {
  observe::Listeners& listeners = *state_->listeners;
  {
    std::lock_guard lock(listeners.mutex);
    state_->serial = listeners.memory_counters_made++;
    listeners.memory_counters.insert(state_);
    listeners.live_memory_counters.store(static_cast<int>(listeners.memory_counters.size()));
  }
  detail::memory_counters_alive.fetch_add(1);
}

MemoryCounter::~MemoryCounter() {
  observe::Listeners& listeners = *state_->listeners;
  {
    std::lock_guard lock(listeners.mutex);
    listeners.memory_counters.erase(state_);
    listeners.live_memory_counters.store(static_cast<int>(listeners.memory_counters.size()));
  }
  detail::memory_counters_alive.fetch_sub(1);
  delete state_;
}

int64_t MemoryCounter::peak_bytes(const std::string& category, int rank) const {
  check_rank(rank, "peak_bytes");
  std::lock_guard lock(state_->listeners->mutex);
  if (category.empty()) return over_ranks(state_->total, rank, [](const Held& h) { return h.peak; });
  const auto it = state_->by_category.find(category);
  return it == state_->by_category.end() ? 0
                                         : over_ranks(it->second, rank, [](const Held& h) { return h.peak; });
}

int64_t MemoryCounter::current_bytes(const std::string& category, int rank) const {
  check_rank(rank, "current_bytes");
  std::lock_guard lock(state_->listeners->mutex);
  if (category.empty()) return over_ranks(state_->total, rank, [](const Held& h) { return h.current; });
  const auto it = state_->by_category.find(category);
  return it == state_->by_category.end()
             ? 0
             : over_ranks(it->second, rank, [](const Held& h) { return h.current; });
}

std::vector<int> MemoryCounter::ranks() const {
  std::lock_guard lock(state_->listeners->mutex);
  std::vector<int> ranks;
  for (const auto& [rank, held] : state_->total) ranks.push_back(rank);
  return ranks;
}

std::vector<MemoryCounter::Entry> MemoryCounter::entries() const {
  std::lock_guard lock(state_->listeners->mutex);
  const auto entry = [](const std::string& category, const std::map<int, Held>& per_rank) {
    return Entry{category, over_ranks(per_rank, -1, [](const Held& h) { return h.peak; }),
                 over_ranks(per_rank, -1, [](const Held& h) { return h.current; })};
  };
  std::vector<Entry> result;
  for (const std::string& known : kKnownCategories)
    if (const auto it = state_->by_category.find(known); it != state_->by_category.end())
      result.push_back(entry(known, it->second));
  for (const auto& [category, per_rank] : state_->by_category)
    if (std::find(kKnownCategories.begin(), kKnownCategories.end(), category) == kKnownCategories.end())
      result.push_back(entry(category, per_rank));
  return result;
}

std::string MemoryCounter::table() const {
  std::vector<std::array<std::string, 3>> cells = {{"category", "peak bytes/rank", "current bytes/rank"}};
  for (const Entry& e : entries())
    cells.push_back({e.category, std::to_string(e.peak_bytes), std::to_string(e.current_bytes)});
  cells.push_back({"total", std::to_string(peak_bytes()), std::to_string(current_bytes())});
  std::array<size_t, 3> widths{};
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  std::string out;
  for (const auto& line : cells)
    out +=
        fmt::format("{:<{}}  {:>{}}  {:>{}}\n", line[0], widths[0], line[1], widths[1], line[2], widths[2]);
  return out;
}

void MemoryCounter::reset_peak() {
  std::lock_guard lock(state_->listeners->mutex);
  for (auto& [category, per_rank] : state_->by_category)
    for (auto& [rank, held] : per_rank) held.peak = held.current;
  for (auto& [rank, held] : state_->total) held.peak = held.current;
}

MemoryCategory::MemoryCategory(std::string category) : category_(std::move(category)) {
  if (category_.empty())
    throw Error(
        "MemoryCategory: the category is empty; name what the bytes are for, e.g. \"parameters\", "
        "\"gradients\", \"optimizer_state\", \"activations\" or a label of yours");
  saved_ = dispatch::exchange_memory_category(&category_);
}

MemoryCategory::~MemoryCategory() { dispatch::exchange_memory_category(saved_); }

void tag_memory(const Tensor& t, const std::string& category) {
  if (category.empty())
    throw Error(
        "tag_memory: the category is empty; name what the bytes are for, e.g. \"parameters\", "
        "\"gradients\", \"optimizer_state\", \"activations\" or a label of yours");
  detail::tag_memory(t, category);
}

}  // namespace tessera

#include "world/world.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "tensor/remote_ranks.hpp"
#include "world/process_link.hpp"
#include "world/observer.hpp"
#include "world/process_topology.hpp"

namespace tessera {
namespace world {
namespace {

constexpr size_t kTopologiesKept = 16;  // a default world sees one per tensor extent it meets
constexpr size_t kRingsKept = 4096;     // distinct groups per topology

// The worlds bound on this thread, innermost last; the thread's default world when none is.
thread_local std::vector<WorldState*> bound;
thread_local std::shared_ptr<WorldState> default_world;
// bound.back(), or null: a plain pointer is one thread-local read, where the vector (a thread_local
// with a constructor) costs a guarded access; current() is asked several times per collective.
thread_local WorldState* innermost = nullptr;
thread_local RunningProgram program_here;
std::atomic<WorldState*> process_world{nullptr};  // set once by init_world, owned there

// The tensor layer asks through these where ranks it does not hold live (tensor/remote_ranks.hpp).
int process_of_remote(int rank) {
  const WorldState& w = current();
  return w.distributed() && rank >= 0 && rank < w.size() && !w.hosts(rank) ? w.process_of(rank) : -1;
}
int ranks_hosted_elsewhere() {
  const WorldState& w = current();
  return w.distributed() ? w.size() - w.ranks_per_process() : 0;
}
const bool remote_ranks_installed =
    (detail::install_remote_ranks({&process_of_remote, &ranks_hosted_elsewhere}), true);

}  // namespace

namespace {

std::shared_ptr<const WorldState::FibreList> one_fibre_of(int size) {
  if (size <= 0) return nullptr;
  std::vector<int> ranks(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) ranks[static_cast<size_t>(r)] = r;
  return std::make_shared<const WorldState::FibreList>(WorldState::FibreList{std::move(ranks)});
}

// A world made inside another shares its slots; any other gets a table of its own.
std::shared_ptr<SlotTable> or_own(std::shared_ptr<SlotTable> shared_slots) {
  return shared_slots ? std::move(shared_slots) : std::make_shared<SlotTable>();
}

}  // namespace

WorldState::WorldState(int size, std::shared_ptr<SlotTable> shared_slots)
    : size_(size), whole_world_(one_fibre_of(size)), shared_slots_(or_own(std::move(shared_slots))) {}

WorldState::WorldState(std::shared_ptr<ProcessLink> link, int ranks_per_process, bool check_collectives)
    : size_(link->process_count() * ranks_per_process),
      link_(std::move(link)),
      ranks_per_process_(ranks_per_process),
      check_collectives_(check_collectives),
      whole_world_(one_fibre_of(size_)),
      shared_slots_(std::make_shared<SlotTable>()) {
  if (const LinkProperties& links = link_->properties(); links.costs_links()) {
    const double costs[] = {links.latency, links.bandwidth};
    // Never 0 (that is "the preset alone"): the digest of a world with some costed links.
    links_key_ = digest(costs, sizeof(costs), static_cast<uint64_t>(ranks_per_process_)) | 1u;
  }
}

WorldState::WorldState(const WorldState& spread, std::shared_ptr<SlotTable> shared_slots)
    : size_(spread.size_),
      link_(spread.link_),
      ranks_per_process_(spread.ranks_per_process_),
      check_collectives_(spread.check_collectives_),
      calls_compared_by_caller_(true),
      links_key_(spread.links_key_),
      whole_world_(spread.whole_world_),
      shared_slots_(or_own(std::move(shared_slots))) {}

WorldState::~WorldState() = default;

std::shared_ptr<void> WorldState::kept(const std::string& key) const {
  std::lock_guard lock(kept_mutex_);
  const auto found = kept_.find(key);
  return found == kept_.end() ? nullptr : found->second;
}

std::shared_ptr<void> WorldState::keep(const std::string& key, std::shared_ptr<void> value) {
  std::lock_guard lock(kept_mutex_);
  std::shared_ptr<void> before = kept_.count(key) ? std::move(kept_[key]) : nullptr;
  if (value)
    kept_[key] = std::move(value);
  else
    kept_.erase(key);
  return before;
}

int WorldState::process_index() const { return link_ ? link_->process_index() : 0; }
int WorldState::process_count() const { return link_ ? link_->process_count() : 1; }

std::vector<int> WorldState::hosted_ranks() const {
  std::vector<int> ranks;
  if (!distributed()) {
    for (int r = 0; r < size_; ++r) ranks.push_back(r);
    return ranks;
  }
  for (int r = process_index() * ranks_per_process_; r < (process_index() + 1) * ranks_per_process_; ++r)
    ranks.push_back(r);
  return ranks;
}

WorldState::Built& WorldState::built_locked(int ranks) {
  const auto key = std::make_pair(default_topology_preset(), ranks);
  if (auto it = topologies_.find(key); it != topologies_.end()) return it->second;
  if (topologies_.size() >= kTopologiesKept) topologies_.clear();
  Topology topology = default_topology(ranks);
  if (distributed())
    topology = with_process_links(topology, ranks_per_process_, link_->properties(), link_->transport_name());
  return topologies_.emplace(key, Built{std::move(topology), {}}).first->second;
}

Topology WorldState::topology(int ranks) {
  std::lock_guard lock(topology_mutex_);
  return built_locked(ranks).topology;
}

std::vector<int32_t> WorldState::ring_order(int ranks, const std::vector<int>& members) {
  Topology topology;
  return ring_order(ranks, members, topology);
}

namespace {

// The members' positions round the topology's ring order, as group ranks; empty when natural.
std::vector<int32_t> ring_positions(const Topology& topology, const std::vector<int>& members) {
  const std::vector<int> order = topology.ring_order(members);
  std::vector<int32_t> ring;
  bool natural = true;
  for (size_t k = 0; k < order.size(); ++k) {
    const auto at = std::find(members.begin(), members.end(), order[k]);
    ring.push_back(static_cast<int32_t>(at - members.begin()));
    natural = natural && ring.back() == static_cast<int32_t>(k);
  }
  if (natural) ring.clear();
  return ring;
}

void remember_ring(std::map<std::vector<int>, std::vector<int32_t>>& rings, const std::vector<int>& members,
                   const std::vector<int32_t>& ring) {
  if (rings.size() >= kRingsKept) rings.clear();
  rings.emplace(members, ring);
}

}  // namespace

std::vector<int32_t> WorldState::ring_order(int ranks, const std::vector<int>& members, Topology& topology) {
  {
    std::lock_guard lock(topology_mutex_);
    Built& built = built_locked(ranks);
    topology = built.topology;
    if (auto it = built.rings.find(members); it != built.rings.end()) return it->second;
  }
  std::vector<int32_t> ring = ring_positions(topology, members);
  std::lock_guard lock(topology_mutex_);
  remember_ring(built_locked(ranks).rings, members, ring);
  return ring;
}

std::vector<int32_t> WorldState::ring_order_on(const Topology& topology, const std::vector<int>& members) {
  const uint64_t key = topology.fingerprint();
  {
    std::lock_guard lock(topology_mutex_);
    if (auto it = given_topologies_.find(key); it != given_topologies_.end())
      if (auto ring = it->second.rings.find(members); ring != it->second.rings.end()) return ring->second;
  }
  std::vector<int32_t> ring = ring_positions(topology, members);
  std::lock_guard lock(topology_mutex_);
  auto it = given_topologies_.find(key);
  if (it == given_topologies_.end()) {
    if (given_topologies_.size() >= kTopologiesKept) given_topologies_.clear();
    // A copy shares the topology's links and paths: the entry keeps them alive, nothing is rebuilt.
    it = given_topologies_.emplace(key, Built{topology, {}}).first;
  }
  remember_ring(it->second.rings, members, ring);
  return ring;
}

std::shared_ptr<WorldState> make_world(int size, std::shared_ptr<SlotTable> shared_slots) {
  return std::make_shared<WorldState>(size, std::move(shared_slots));
}

Observer* observer_of(WorldState& world) { return static_cast<Observer*>(world.slot(Slot::observer)); }

std::shared_ptr<WorldState> current_shared() { return current().shared_from_this(); }

void adopt_process_world(WorldState* world) { process_world.store(world); }

WorldState& current() {
  if (innermost != nullptr) return *innermost;
  if (WorldState* adopted = process_world.load()) return *adopted;
  if (!default_world) default_world = make_world(0);
  return *default_world;
}

void bind(WorldState* world) {
  bound.push_back(world);
  innermost = world;
}

void unbind(WorldState* world) {
  if (bound.empty() || bound.back() != world) {
    // Bindings are scopes (LocalMode, rank tasks); this only happens when one is moved to another
    // thread or destroyed out of order, and the thread's world is then unknowable.
    std::fprintf(stderr, "tessera: world bindings released out of order\n");
    std::abort();
  }
  bound.pop_back();
  innermost = bound.empty() ? nullptr : bound.back();
}

const RunningProgram* running_program() {
  const RunningProgram& program = program_here;
  return program.world != nullptr && program.world == innermost ? &program : nullptr;
}

bool holds_rank(int rank) {
  if (const RunningProgram* program = running_program()) return rank == program->rank;
  return current().hosts(rank);
}

ThreadBindingsAt thread_bindings_at() { return {&bound, &innermost, &program_here}; }

}  // namespace world
}  // namespace tessera

#include "comm/prepared_call.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "dispatch/backend.hpp"
#include "tessera/errors.hpp"
#include "world/world.hpp"

namespace tessera::comm {
namespace {

// A kept preparation and what it was made for. It holds the schedule, so that the schedule's
// address cannot be reused by another schedule while the entry lives.
struct Kept {
  std::shared_ptr<const Schedule> schedule;
  std::vector<int> members;
  std::shared_ptr<const PreparedCall> prepared;
};

struct Signature {
  const Schedule* schedule;
  uint64_t fingerprint;
  bool operator==(const Signature&) const = default;
};
struct SignatureHash {
  size_t operator()(const Signature& s) const {
    return std::hash<const void*>()(s.schedule) ^ static_cast<size_t>(s.fingerprint * 0x9e3779b97f4a7c15ull);
  }
};

// A world's preparations. A training loop makes a few dozen distinct collectives; a program that
// makes ever new ones (shapes that keep changing) starts the table afresh now and then.
class PreparedCalls {
 public:
  static constexpr size_t kMostKept = 1024;

  std::shared_ptr<const PreparedCall> find(const Signature& signature, const std::vector<int>& members) {
    std::lock_guard lock(mutex_);
    const auto it = kept_.find(signature);
    if (it == kept_.end()) return nullptr;
    for (const Kept& kept : it->second)
      if (kept.members == members) {
        replayed_.fetch_add(1, std::memory_order_relaxed);
        return kept.prepared;
      }
    return nullptr;
  }

  void keep(const std::shared_ptr<const Schedule>& schedule, uint64_t fingerprint,
            const std::vector<int>& members, std::shared_ptr<const PreparedCall> prepared) {
    std::lock_guard lock(mutex_);
    if (size_ >= kMostKept) {
      kept_.clear();
      size_ = 0;
    }
    kept_[Signature{schedule.get(), fingerprint}].push_back(Kept{schedule, members, std::move(prepared)});
    ++size_;
  }

  void count_prepared() { prepared_.fetch_add(1, std::memory_order_relaxed); }
  PreparedCounts counts() const { return {prepared_.load(), replayed_.load()}; }

 private:
  std::mutex mutex_;
  std::unordered_map<Signature, std::vector<Kept>, SignatureHash> kept_;
  size_t size_ = 0;
  std::atomic<uint64_t> prepared_{0};
  std::atomic<uint64_t> replayed_{0};
};

PreparedCalls& prepared_calls_of(world::WorldState& w) {
  // The world holds them without knowing their type: this layer makes them on first use.
  constexpr world::SlotMaker make = [] { return std::shared_ptr<void>(std::make_shared<PreparedCalls>()); };
  return *static_cast<PreparedCalls*>(w.slot(world::Slot::prepared_calls, make));
}

// What every envelope of a call says; the algorithm and the members are part of what the call is
// (processes that chose different algorithms send different messages).
Envelope call_envelope(const world::WorldState& w, const Schedule& schedule, const std::vector<int>& members,
                       uint64_t fingerprint) {
  const tessera_collective_request& request = schedule.request;
  Envelope e;
  e.kind = MessageKind::collective;
  e.collective = static_cast<uint8_t>(request.collective);
  e.reduce_op = static_cast<uint8_t>(request.reduce_op);
  DType dtype = DType::Bool;
  if (!dispatch::from_dl(request.dtype, &dtype))
    throw Error("run_across_processes: a schedule of an unknown dtype (internal error)");
  e.dtype = static_cast<uint8_t>(dtype);
  e.root = request.root;
  const uint64_t parts[] = {fingerprint, bytes_digest(schedule.algorithm.data(), schedule.algorithm.size()),
                            bytes_digest(members.data(), members.size() * sizeof(int))};
  e.fingerprint = bytes_digest(parts, sizeof(parts));
  e.has_checksum = w.check_collectives() ? 1 : 0;
  return e;
}

std::shared_ptr<const PreparedCall> prepare(const world::WorldState& w, const Schedule& schedule,
                                            const std::vector<int>& members, uint64_t fingerprint) {
  auto prepared = std::make_shared<PreparedCall>();
  const int p = schedule.group_size();
  const int here = w.process_index();
  prepared->members.resize(static_cast<size_t>(p));
  for (int g = 0; g < p; ++g) {
    const int rank = members[static_cast<size_t>(g)];
    prepared->members[static_cast<size_t>(g)] = {w.process_of(rank), w.position(rank),
                                                 w.process_of(rank) == here};
  }
  prepared->envelope = call_envelope(w, schedule, members, fingerprint);
  // Messages between a pair (key from * p + to) are numbered in the order each hosted rank's
  // program sends or receives them; both sides count the same steps.
  std::map<int64_t, uint32_t> count;
  prepared->ordinals.resize(static_cast<size_t>(p));
  for (int g = 0; g < p; ++g) {
    if (!prepared->members[static_cast<size_t>(g)].hosted) continue;
    const std::vector<Step>& steps = schedule.ranks[static_cast<size_t>(g)].steps;
    std::vector<uint32_t>& ordinals = prepared->ordinals[static_cast<size_t>(g)];
    ordinals.assign(steps.size(), 0);
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& step = steps[i];
      if (step.peer < 0 || prepared->members[static_cast<size_t>(step.peer)].hosted) continue;
      if (step.kind == StepKind::Send)
        ordinals[i] = count[int64_t{g} * p + step.peer]++;
      else if (step.kind == StepKind::Recv || step.kind == StepKind::RecvReduce)
        ordinals[i] = count[int64_t{step.peer} * p + g]++;
    }
  }
  return prepared;
}

}  // namespace

std::shared_ptr<const PreparedCall> prepared_call(world::WorldState& world,
                                                  const std::shared_ptr<const Schedule>* owner,
                                                  const Schedule& schedule, const std::vector<int>& members,
                                                  uint64_t fingerprint) {
  PreparedCalls& calls = prepared_calls_of(world);
  const Signature signature{&schedule, fingerprint};
  if (owner != nullptr)
    if (std::shared_ptr<const PreparedCall> kept = calls.find(signature, members)) return kept;
  std::shared_ptr<const PreparedCall> prepared = prepare(world, schedule, members, fingerprint);
  calls.count_prepared();
  if (owner != nullptr && owner->get() == &schedule) calls.keep(*owner, fingerprint, members, prepared);
  return prepared;
}

PreparedCounts prepared_counts(world::WorldState& world) { return prepared_calls_of(world).counts(); }

}  // namespace tessera::comm

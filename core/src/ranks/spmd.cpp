// The non-template half of detail/spmd.hpp: running ranks, argument rank sets, result combining. It
// is LocalMode's executor (its results are local tensors), so it sits with LocalMode in ranks.
#include "dispatch/user_call.hpp"
#include "tessera/detail/spmd.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "dispatch/backends.hpp"
#include "dispatch/memory_context.hpp"
#include "dispatch/thread_pool.hpp"
#include "tensor/local_tensor_impl.hpp"
#include "tessera/errors.hpp"
#include "tessera/local.hpp"
#include "world/observer.hpp"
#include "world/world.hpp"

namespace tessera {
namespace {

thread_local bool running_rank_task = false;
// The rank of the task running_rank_task marks (-1 when none): memory allocated there is that rank's.
thread_local int running_rank = -1;

// Below this many elements per rank, handing ranks to other threads costs more than it saves.
constexpr int64_t kParallelWorkThreshold = 1 << 15;

// While ranks run in parallel, each kernel call gets one thread (see tessera_backend
// set_num_threads); the first parallel region in sets it, the last one out restores it.
class SingleThreadedKernels {
 public:
  SingleThreadedKernels() {
    std::lock_guard lock(mutex_);
    if (active_++ == 0) dispatch::set_backend_threads(1);
  }
  ~SingleThreadedKernels() {
    std::lock_guard lock(mutex_);
    if (--active_ == 0) dispatch::set_backend_threads(0);
  }

 private:
  static inline std::mutex mutex_;
  static inline int active_ = 0;
};

// Marks the thread as inside `rank`'s task and disables local mode there, restoring both after.
class RankTaskScope {
 public:
  explicit RankTaskScope(int rank) : was_running_(running_rank_task), saved_rank_(running_rank) {
    running_rank_task = true;
    running_rank = rank;
  }
  ~RankTaskScope() {
    running_rank_task = was_running_;
    running_rank = saved_rank_;
  }

 private:
  bool was_running_;
  int saved_rank_;
  DisabledLocalMode disabled_;
};

}  // namespace

bool in_per_rank_region() { return running_rank_task; }

int dispatch::rank_task_rank() { return running_rank; }

Tensor local_tensor(RankMap<Tensor> shards) {
  return Tensor(std::make_shared<const LocalTensorImpl>(std::move(shards)));
}

namespace detail {

const RankSet* SpmdArg<Tensor>::ranks(const Tensor& t) {
  return t.is_local() ? &t.local_impl()->ranks() : nullptr;
}
const RankSet* SpmdArg<Scalar>::ranks(const Scalar& s) { return s.is_local() ? &s.local().ranks() : nullptr; }
const RankSet* SpmdArg<SymInt>::ranks(const SymInt& s) { return s.is_local() ? &s.local().ranks() : nullptr; }

const RankSet* SpmdArg<SymShape>::ranks(const SymShape& s) {
  for (const SymInt& size : s)
    if (size.is_local()) return &size.local().ranks();
  return nullptr;
}

int64_t SpmdArg<SymShape>::work(const SymShape& s) {
  int64_t n = 1;
  for (const SymInt& size : s)
    n *= size.is_local() ? size.local().rank_values().begin()->second : size.as_int();
  return n;
}

const RankSet* SpmdArg<std::vector<Tensor>>::ranks(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (t.is_local()) return &t.local_impl()->ranks();
  return nullptr;
}

std::vector<Tensor> SpmdArg<std::vector<Tensor>>::at(const std::vector<Tensor>& ts, int rank) {
  std::vector<Tensor> values;
  values.reserve(ts.size());
  for (const Tensor& t : ts) values.push_back(SpmdArg<Tensor>::at(t, rank));
  return values;
}

int64_t SpmdArg<std::vector<Tensor>>::work(const std::vector<Tensor>& ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += SpmdArg<Tensor>::work(t);
  return n;
}

const RankSet* SpmdArg<std::vector<SymInt>>::ranks(const std::vector<SymInt>& v) {
  for (const SymInt& s : v)
    if (s.is_local()) return &s.local().ranks();
  return nullptr;
}

std::vector<int64_t> SpmdArg<std::vector<SymInt>>::at(const std::vector<SymInt>& v, int rank) {
  std::vector<int64_t> values;
  for (const SymInt& s : v) values.push_back(s.at(rank));
  return values;
}

void throw_rank_set_mismatch(const char* op, const RankSet& a, const RankSet& b) {
  throw Error(
      fmt::format("{}: arguments are local over different ranks: {} and {}; every local argument must cover "
                  "the same ranks",
                  op, a.to_string(), b.to_string()));
}

// The usual way here is item() on the to_local() of a Partial DTensor: its shards are per-rank
// contributions still to be reduced, so the hint names that case and its fix. Which tensor the op
// read is not known at this point, so the hint says "if".
void throw_ranks_disagree(const char* op, const std::string& values) {
  throw Error(fmt::format(
      "{}: the result differs between ranks ({}); it must be the same on every rank. If the tensor is the "
      "to_local() of a Partial DTensor (Partial(sum), Partial(max), ...: each rank holds its contribution, "
      "not yet reduced), call full_tensor() on the DTensor, or redistribute it to Replicate, first; "
      "otherwise read one rank's value with shard(rank)",
      op, values));
}

namespace {

// Per-rank ops go to the observer of the world they run in (world/observer.hpp): on a pool thread, the
// issuing thread's, which the task has bound.
bool rank_ops_wanted() {
  world::Observer* observer = world::observer_of(world::current());
  return observer != nullptr && observer->wants_rank_ops();
}

void report_rank_op(const char* op, int rank, double seconds) {
  if (world::Observer* observer = world::observer_of(world::current())) observer->rank_op(op, rank, seconds);
}

// One rank's task as run_ranks runs each: inside a rank task (local mode off), timed for the
// trace when one is recorded; what it throws comes back for the caller to report.
template <class Task>
std::exception_ptr run_guarded(const char* op, int rank, bool traced, Task&& task) {
  RankTaskScope scope(rank);
  const auto begin = traced ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
  std::exception_ptr failure;
  try {
    task();
  } catch (...) {
    failure = std::current_exception();
  }
  if (traced)
    report_rank_op(op, rank, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  return failure;
}

// Rethrown with the rank added, as the same tessera error type: a caller that catches
// ConfigError or PluginError must still catch it when it was raised inside a rank's task.
[[noreturn]] void throw_rank_failure(const char* op, int rank, const std::exception_ptr& failure) {
  const auto on_rank = [&](const std::exception& e) {
    return fmt::format("{} on rank {}: {}", op, rank, e.what());
  };
  try {
    std::rethrow_exception(failure);
  } catch (const ConfigError& e) {
    throw ConfigError(on_rank(e));
  } catch (const PluginError& e) {
    throw PluginError(on_rank(e));
  } catch (const std::exception& e) {
    throw Error(on_rank(e));
  }
}

}  // namespace

void run_ranks(const char* op, const RankSet& ranks, int64_t work_per_rank,
               const std::function<void(size_t)>& task) {
  std::vector<std::exception_ptr> failures(ranks.size());
  const bool traced = rank_ops_wanted();
  auto guarded = [&](size_t i) { failures[i] = run_guarded(op, ranks[i], traced, [&] { task(i); }); };
  // The pool is held for the whole job: set_threads on another thread may replace it meanwhile.
  const std::shared_ptr<dispatch::ThreadPool> pool =
      ranks.size() > 1 && work_per_rank >= kParallelWorkThreshold && !running_rank_task
          ? dispatch::rank_pool()
          : nullptr;
  if (pool && pool->size() > 1) {
    SingleThreadedKernels one_thread_per_kernel;
    // Rank tasks run in the issuing thread's world on pool threads too (their trace slices, and
    // anything else that asks for the world, must not land in a pool thread's own default world).
    world::WorldState* const issuer = &world::current();
    const char* const issuers_call = dispatch::UserCall::current();           // for missing-kernel errors
    const std::string* const issuers_category = dispatch::memory_category();  // what its bytes are for
    pool->parallel_for(ranks.size(), [&](size_t i) {
      const world::Bound in_issuers_world(issuer);
      const dispatch::UserCall serving(issuers_call);
      const dispatch::MemoryCategoryBinding allocating_for(issuers_category);
      guarded(i);
    });
  } else {
    for (size_t i = 0; i < ranks.size(); ++i) guarded(i);
  }
  // The lowest failing rank is reported, so the error does not depend on scheduling.
  for (size_t i = 0; i < ranks.size(); ++i)
    if (failures[i]) throw_rank_failure(op, ranks[i], failures[i]);
}

void run_rank(const char* op, int rank, void (*task)(void*), void* context) {
  if (const std::exception_ptr failure = run_guarded(op, rank, rank_ops_wanted(), [&] { task(context); }))
    throw_rank_failure(op, rank, failure);
}

std::vector<Tensor> SpmdResult<std::vector<Tensor>>::combine(
    const char* op, const RankSet& ranks, std::vector<std::optional<std::vector<Tensor>>>& values) {
  const size_t count = values.front()->size();
  for (size_t i = 0; i < ranks.size(); ++i)
    if (values[i]->size() != count)
      throw Error(fmt::format("{}: rank {} produced {} tensors but rank {} produced {}", op, ranks[0], count,
                              ranks[i], values[i]->size()));
  std::vector<Tensor> combined;
  for (size_t k = 0; k < count; ++k) {
    std::vector<std::pair<int, Tensor>> shards;
    for (size_t i = 0; i < ranks.size(); ++i) shards.emplace_back(ranks[i], (*values[i])[k]);
    combined.push_back(local_tensor(RankMap<Tensor>(std::move(shards))));
  }
  return combined;
}

Scalar SpmdResult<Scalar>::combine(const char* op, const RankSet& ranks,
                                   std::vector<std::optional<Scalar>>& values) {
  const Scalar& first = *values.front();
  bool agree = true;
  for (const auto& v : values)
    agree = agree && v->kind() == first.kind() &&
            (first.is_floating()
                 ? v->to_double() == first.to_double() ||
                       (v->to_double() != v->to_double() && first.to_double() != first.to_double())
                 : v->to_int() == first.to_int());
  if (agree) return first;
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i)
    text += fmt::format("{}{}: {}", i ? ", " : "", ranks[i], values[i]->to_string());
  if (first.kind() != Scalar::Kind::Int) throw_ranks_disagree(op, text);
  std::vector<std::pair<int, int64_t>> per_rank;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (values[i]->kind() != Scalar::Kind::Int) throw_ranks_disagree(op, text);
    per_rank.emplace_back(ranks[i], values[i]->to_int());
  }
  return Scalar(SymInt(LocalInt(RankMap<int64_t>(std::move(per_rank)))));
}

}  // namespace detail
}  // namespace tessera

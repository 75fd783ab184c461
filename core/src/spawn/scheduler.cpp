// The run loop: ranks resume in rank order; a pass in which no rank could run while some had not
// finished is a deadlock. Failures end every wait (Aborted) so that every coroutine unwinds.
#include "spawn/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

#include "world/world.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"

namespace tessera::spawned {

Scheduler::Scheduler(int size, const std::function<void(int)>& program, const SpawnOptions& options,
                     const world::WorldState* spread)
    : program_(program),
      options_(options),
      here_(ThreadScopesAt::of_calling_thread()),
      // Observed by the counters and traces of the world spawn is called in, as LocalMode(n) is.
      world_(spread != nullptr ? std::make_shared<world::WorldState>(*spread, world::current().shared_slots())
                               : world::make_world(size, world::current().shared_slots())),
      stacks_(static_cast<size_t>(size), options.stack_bytes),
      ranks_(static_cast<size_t>(size)),
      spread_(spread != nullptr) {
  const Generator start = default_generator();  // where every rank's stream begins, as in LocalMode
  for (int r = 0; r < size; ++r) {
    Rank& rank = ranks_[static_cast<size_t>(r)];
    rank.generator = start;
    rank.scopes.bindings.bind_only(world_.get());
    rank.scopes.bindings.program = {world_.get(), r, this};
    rank.scopes.generator = &rank.generator;
    rank.scopes.scheduler = this;
  }
  collective_scopes_.bindings.bind_only(world_.get());
  collective_scopes_.grad_enabled = false;
}

void Scheduler::run() {
  if (spread_)
    run_across();
  else
    run_here();
}

bool Scheduler::run_pass() {
  bool ran = false;
  for (int r = 0; r < size(); ++r) {
    if (!hosts(r)) continue;
    Rank& rank = ranks_[static_cast<size_t>(r)];
    if (rank.state == State::finished) continue;
    if (rank.state == State::waiting && !aborting_ && !rank.waiting->done()) continue;
    resume(r);
    ran = true;
  }
  return ran;
}

void Scheduler::run_here() {
  for (;;) {
    const bool ran = run_pass();
    bool live = false;
    for (const Rank& rank : ranks_) live = live || rank.state != State::finished;
    if (!live) break;
    if (!ran) {
      // Every rank that has not finished waits on another: report them all, then unwind them.
      deadlock_ = deadlock_report();
      aborting_ = true;
    }
  }
  throw_failure();
  if (!deadlock_.empty()) throw Error(deadlock_);
  require_nothing_left();
}

void Scheduler::throw_failure() const {
  if (!failure_) return;
  std::string what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(failure_);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  throw RankError(failed_rank_, failure_, fmt::format("ts::spawn: rank {} failed: {}", failed_rank_, what));
}

void Scheduler::resume(int r) {
  Rank& rank = ranks_[static_cast<size_t>(r)];
  running_ = r;
  if (r + 1 < size()) prefetch_stack(r + 1);
  rank.scopes.exchange(here_);  // the thread now runs as rank r
  if (rank.state == State::not_started) start(r);
  rank.state = State::runnable;
  start_switch(&scheduler_fake_stack_, rank.stack);
  rank.fiber = std::move(rank.fiber).resume();
  finish_switch(scheduler_fake_stack_, nullptr);
  rank.scopes.exchange(here_);  // and as the scheduler again
  running_ = -1;
  if (std::shared_ptr<Gathering> complete = std::exchange(to_run_, nullptr)) {
    run_gathering(*complete, rank.scopes.labels);
    retire(std::move(complete));
  }
  if (Gathering* ready = std::exchange(just_ready_, nullptr)) set_labels(*ready, rank.scopes.labels);
}

void Scheduler::prefetch_stack(int r) const {
  // Every rank's stack is a mapping of its own, and a pass over many ranks finds each cold (its
  // lines, and its page's translation): a switch into it then waits on memory, once per frame it
  // returns through. The next rank to run is almost always the next one, so the frames it resumes
  // into (the switch's saved registers below where it switched out, and every frame above up to its
  // program's, which a collective's return passes through) are fetched into the nearest cache while
  // this one runs, with the tensor of the collective it waited in (its program's first reads). Only
  // a hint: nothing is read, and an address off the stack or a tensor gone since does no harm. Deep
  // programs are fetched up to kAbove: the frames nearest the switch are the ones needed first.
  const Rank& rank = ranks_[static_cast<size_t>(r)];
  if (rank.suspended_in == nullptr || rank.state == State::finished) return;
  constexpr ptrdiff_t kLine = 64, kBelow = 4 * kLine, kAbove = 64 * kLine;
  const char* top = static_cast<const char*>(rank.stack.bottom) + rank.stack.size;
  const ptrdiff_t above = std::min(kAbove, top - rank.suspended_in);
  for (ptrdiff_t at = -kBelow; at < above; at += kLine) __builtin_prefetch(rank.suspended_in + at, 0, 3);
  if (rank.reads_on_waking != nullptr) {
    __builtin_prefetch(rank.reads_on_waking, 0, 3);
    __builtin_prefetch(static_cast<const char*>(rank.reads_on_waking) + kLine, 0, 3);
  }
}

namespace {

// Rank r's coroutine stack, from the spawn's arena (which frees it with the others), noting where it
// lies (for AddressSanitizer).
class RankStack {
 public:
  RankStack(StackArena& arena, size_t slot, StackBounds& bounds)
      : arena_(&arena), slot_(slot), bounds_(&bounds) {}
  boost::context::stack_context allocate() {
    boost::context::stack_context stack = arena_->take(slot_);
    *bounds_ = {static_cast<const char*>(stack.sp) - stack.size, stack.size};  // sp is the top
    return stack;
  }
  void deallocate(boost::context::stack_context& /*stack*/) noexcept {}

 private:
  StackArena* arena_;
  size_t slot_;
  StackBounds* bounds_;
};

}  // namespace

void Scheduler::start(int r) {
  Rank& rank = ranks_[static_cast<size_t>(r)];
  rank.fiber = boost::context::fiber(
      std::allocator_arg, RankStack(stacks_, static_cast<size_t>(r), rank.stack),
      [this, r](boost::context::fiber&& scheduler) { return run_program(r, std::move(scheduler)); });
}

boost::context::fiber Scheduler::run_program(int r, boost::context::fiber&& scheduler) {
  finish_switch(nullptr, &scheduler_stack_);
  scheduler_ = std::move(scheduler);
  // A rank that had not started when the spawn began failing never runs its program.
  if (!aborting_) {
    try {
      program_(r);
    } catch (const boost::context::detail::forced_unwind&) {
      throw;  // the coroutine library's own unwinding
    } catch (const Aborted&) {
      // unwound because another rank failed or the ranks deadlocked
    } catch (...) {
      fail(r, std::current_exception());
    }
  }
  ranks_[static_cast<size_t>(r)].state = State::finished;
  start_switch(nullptr, scheduler_stack_);  // this stack ends here
  return std::move(scheduler_);
}

void Scheduler::yield_now() {
  if (aborting_) throw Aborted{};
  switch_to_scheduler();
  if (aborting_) throw Aborted{};
}

void Scheduler::fail(int r, std::exception_ptr error) {
  if (!failure_ && deadlock_.empty()) {
    failed_rank_ = r;
    failure_ = std::move(error);
  }
  aborting_ = true;
}

std::string Scheduler::waits() const {
  std::string text;
  for (int r = 0; r < size(); ++r) {
    const Rank& rank = ranks_[static_cast<size_t>(r)];
    if (rank.state != State::waiting) continue;
    text += fmt::format("{}rank {}: {}", text.empty() ? "" : "; ", r, rank.waiting->describe(*this));
  }
  return text;
}

std::string Scheduler::deadlock_report() const {
  return fmt::format("ts::spawn: deadlock: every rank that has not finished is waiting: {}", waits());
}

}  // namespace tessera::spawned

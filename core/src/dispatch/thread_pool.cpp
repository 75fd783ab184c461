#include "dispatch/thread_pool.hpp"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "tessera/errors.hpp"

namespace tessera::dispatch {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

// Runs indices until none are left, then counts this thread as finished.
void ThreadPool::drain() {
  for (size_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) (*task_)(i);
  std::lock_guard lock(mutex_);
  if (++finished_ == workers_.size() + 1) done_.notify_all();
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain();
  }
}

void ThreadPool::parallel_for(size_t count, const std::function<void(size_t)>& task) {
  std::lock_guard job(job_mutex_);
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == workers_.size() + 1; });
  task_ = nullptr;
}

int threads_variable(const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 4096)
    throw ConfigError(
        fmt::format("TESSERA_THREADS='{}' is not a thread count; expected an integer 0..4096 (0 = one "
                    "per hardware thread)",
                    text));
  return static_cast<int>(value);
}

namespace {

int configured_threads = 0;  // 0: not set by configuration

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

int resolve_threads(int requested) {
  if (const char* env = std::getenv("TESSERA_THREADS")) requested = threads_variable(env);
  return requested > 0 ? requested : hardware_threads();
}

std::mutex pool_mutex;
std::shared_ptr<ThreadPool>& pool_slot() {
  static auto* slot = new std::shared_ptr<ThreadPool>();  // outlives static tensors
  return *slot;
}

}  // namespace

std::shared_ptr<ThreadPool> rank_pool() {
  std::lock_guard lock(pool_mutex);
  auto& slot = pool_slot();
  if (!slot) slot = std::make_shared<ThreadPool>(resolve_threads(configured_threads));
  return slot;
}

void set_rank_threads(int threads) {
  if (threads < 0)
    throw Error(fmt::format("thread count must be 0 (automatic) or positive, got {}", threads));
  // Built before taking the lock, and the old pool released after it: a job running on the old
  // pool holds its own reference and finishes there; its workers are joined by whoever lets go last.
  auto replacement = std::make_shared<ThreadPool>(resolve_threads(threads));
  std::shared_ptr<ThreadPool> old;
  {
    std::lock_guard lock(pool_mutex);
    configured_threads = threads;
    old = std::exchange(pool_slot(), std::move(replacement));
  }
}

int rank_threads() { return rank_pool()->size(); }

}  // namespace tessera::dispatch

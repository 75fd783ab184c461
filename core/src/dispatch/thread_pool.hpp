// The pool that runs the ranks of one op in parallel.
//
// One job at a time: parallel_for hands out indices to the workers and to the calling thread,
// and returns when every index ran. Each index writes only its own result slot, so what a job
// computes never depends on how many threads ran it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::dispatch {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads - 1 workers; the caller is the last thread
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  void parallel_for(size_t count, const std::function<void(size_t)>& task);

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex job_mutex_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t)>* task_ = nullptr;
  size_t count_ = 0;
  std::atomic<size_t> next_{0};
  size_t finished_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

// The process-wide rank pool. Its size comes from TESSERA_THREADS, the configuration, or the
// number of hardware threads, in that order of precedence. Callers hold the returned pool for the
// whole job: set_rank_threads may replace the pool meanwhile, and the old one lives until its
// last job lets go of it.
std::shared_ptr<ThreadPool> rank_pool();
void set_rank_threads(int threads);  // 0 = the hardware's count
// TESSERA_THREADS's text as a thread count (0..4096); throws ConfigError naming the variable. The
// one reading of it, for the pool and for configuration alike.
int threads_variable(const char* text);
int rank_threads();

}  // namespace tessera::dispatch

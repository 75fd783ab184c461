// What watching memory costs an allocation:
//   BM_Allocate/0  ts::empty({16}) with no MemoryCounter alive      (one relaxed load per Storage)
//   BM_Allocate/1  with a MemoryCounter alive on this thread's world (each Storage is counted)
//   BM_Allocate/2  with a counter alive on another thread's world only (the hint is set; this
//                  thread's world has no counter, so nothing is counted)
//   BM_LocalAdd/N  one add of local tensors of 16-element shards over 8 ranks, N as above
//   target: /0 no slower than before MemoryCounter existed
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <tessera/tessera.hpp>
#include <thread>

namespace ts = tessera;

namespace {

// A MemoryCounter alive on a thread of its own (its own world) until the object goes.
class CounterElsewhere {
 public:
  CounterElsewhere() {
    thread_ = std::thread([this] {
      ts::MemoryCounter counter;
      std::unique_lock lock(mutex_);
      alive_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return done_; });
    });
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return alive_; });
  }
  ~CounterElsewhere() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool alive_ = false;
  bool done_ = false;
  std::thread thread_;
};

// Whatever the argument asks to be alive while the benchmark runs.
struct Watching {
  explicit Watching(int64_t how) {
    if (how == 1) here.emplace();
    if (how == 2) elsewhere = std::make_unique<CounterElsewhere>();
  }
  std::optional<ts::MemoryCounter> here;
  std::unique_ptr<CounterElsewhere> elsewhere;
};

}  // namespace

static void BM_Allocate(benchmark::State& state) {
  Watching watching(state.range(0));
  for (auto _ : state) {
    ts::Tensor t = ts::empty({16});
    benchmark::DoNotOptimize(t.impl().get());
  }
}
BENCHMARK(BM_Allocate)->Arg(0)->Arg(1)->Arg(2);

static void BM_LocalAdd(benchmark::State& state) {
  ts::LocalMode mode(8);
  ts::Tensor a = ts::rand({16});
  ts::Tensor b = ts::rand({16});
  Watching watching(state.range(0));
  for (auto _ : state) {
    ts::Tensor c = a + b;
    benchmark::DoNotOptimize(c.local_impl().get());
  }
}
BENCHMARK(BM_LocalAdd)->Arg(0)->Arg(1)->Arg(2);

BENCHMARK_MAIN();

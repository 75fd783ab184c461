// User threads: threads with their own modes are independent worlds (messages, counters
// and traces do not cross), threads sharing a World see each other, and set_threads may run while
// another thread's ops use the rank pool. Also run under ThreadSanitizer (scripts/tsan.sh).
#include <doctest/doctest.h>

#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

ts::SymInt per_rank(std::initializer_list<std::pair<int, int64_t>> values) {
  return ts::SymInt(ts::LocalInt(ts::RankMap<int64_t>(std::vector<std::pair<int, int64_t>>(values))));
}

// Runs the bodies on their own threads, released together so that they overlap; returns each
// body's first error ("" when none).
std::vector<std::string> run_together(const std::vector<std::function<void()>>& bodies) {
  std::atomic<int> ready{0};
  std::vector<std::string> errors(bodies.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bodies.size(); ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready.load() < static_cast<int>(bodies.size())) std::this_thread::yield();
      try {
        bodies[i]();
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  return errors;
}

constexpr int kIterations = 200;

// One thread's send -> recv from rank 0 to rank 1 in its own LocalMode(2); returns failed iterations.
int send_recv_loop(std::string& first_error) {
  int failed = 0;
  ts::LocalMode mode(2);
  for (int i = 0; i < kIterations; ++i) {
    try {
      const ts::Tensor message =
          ts::rank_map([i](int r) { return ts::full({4}, static_cast<float>(i * 10 + r)); });
      ts::dist::send(message, per_rank({{0, 1}, {1, -1}}));
      ts::Tensor got = ts::zeros({4});
      ts::dist::recv(got, per_rank({{0, -1}, {1, 0}}));
      // Rank 1 got what rank 0 sent in this iteration; rank 0 received nothing.
      if (got.shard(1).to_vector<float>() != std::vector<float>(4, static_cast<float>(i * 10)) ||
          got.shard(0).to_vector<float>() != std::vector<float>(4, 0.0f))
        throw std::runtime_error("iteration " + std::to_string(i) + ": wrong message received");
      ts::dist::check_messages();
    } catch (const std::exception& e) {
      if (failed++ == 0) first_error = e.what();
    }
  }
  return failed;
}

// One thread's all_reduce in its own LocalMode(2); returns failed iterations.
int all_reduce_loop(std::string& first_error) {
  int failed = 0;
  ts::LocalMode mode(2);
  for (int i = 0; i < kIterations; ++i) {
    try {
      ts::Tensor t = ts::rank_map([i](int r) { return ts::full({4}, static_cast<float>(i + r)); });
      ts::dist::all_reduce(t);
      const std::vector<float> expected(4, static_cast<float>(2 * i + 1));
      if (t.shard(0).to_vector<float>() != expected || t.shard(1).to_vector<float>() != expected)
        throw std::runtime_error("iteration " + std::to_string(i) + ": wrong sum");
    } catch (const std::exception& e) {
      if (failed++ == 0) first_error = e.what();
    }
  }
  return failed;
}

}  // namespace

TEST_CASE("two threads with their own LocalMode(2): send/recv and all_reduce never see each other") {
  int failed_p2p = -1, failed_collective = -1;
  std::string p2p_error, collective_error;
  const std::vector<std::string> errors = run_together({
      [&] { failed_p2p = send_recv_loop(p2p_error); },
      [&] { failed_collective = all_reduce_loop(collective_error); },
  });
  CHECK(errors == std::vector<std::string>{"", ""});
  CAPTURE(p2p_error);
  CAPTURE(collective_error);
  CHECK(failed_p2p == 0);
  CHECK(failed_collective == 0);
}

TEST_CASE("a CommCounter per thread counts exactly its own thread's collectives") {
  std::vector<ts::CommCounter::Entry> seen_a, seen_b;
  const std::vector<std::string> errors = run_together({
      [&] {
        ts::CommCounter counter;
        ts::LocalMode mode(2);
        for (int i = 0; i < kIterations; ++i) {
          ts::Tensor t = ts::ones({8});
          ts::dist::all_reduce(t);
        }
        seen_a = counter.entries();
      },
      [&] {
        ts::CommCounter counter;
        ts::LocalMode mode(3);
        for (int i = 0; i < kIterations / 2; ++i) {
          ts::Tensor t = ts::ones({6});
          ts::dist::broadcast(t, 0);
        }
        seen_b = counter.entries();
      },
  });
  CHECK(errors == std::vector<std::string>{"", ""});
  int64_t a_reduce = 0, a_other = 0, b_broadcast = 0, b_other = 0;
  for (const auto& e : seen_a) (e.collective == "all_reduce" ? a_reduce : a_other) += e.calls;
  for (const auto& e : seen_b) (e.collective == "broadcast" ? b_broadcast : b_other) += e.calls;
  CHECK(a_reduce == kIterations);
  CHECK(a_other == 0);
  CHECK(b_broadcast == kIterations / 2);
  CHECK(b_other == 0);
}

TEST_CASE("a TraceScope per thread records only its own thread's collectives") {
  const std::string dir = TESSERA_TEST_OUTPUT_DIR;
  const std::string path_a = dir + "/concurrency_trace_a.json", path_b = dir + "/concurrency_trace_b.json";
  const int calls_a = 40, calls_b = 25;
  const std::vector<std::string> errors = run_together({
      [&] {
        ts::TraceScope trace(path_a);
        ts::LocalMode mode(2);
        for (int i = 0; i < calls_a; ++i) {
          ts::Tensor t = ts::ones({8});
          ts::dist::all_reduce(t);
        }
        trace.close();
      },
      [&] {
        ts::TraceScope trace(path_b);
        ts::LocalMode mode(3);
        for (int i = 0; i < calls_b; ++i) {
          ts::Tensor t = ts::ones({6});
          ts::dist::broadcast(t, 0);
        }
        trace.close();
      },
  });
  CHECK(errors == std::vector<std::string>{"", ""});
  // Per file: collective slices by name (one slice per member rank per call).
  auto collectives = [](const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in);
    std::map<std::string, int> count;
    const nlohmann::json file = nlohmann::json::parse(in);
    for (const auto& e : file.at("traceEvents"))
      if (e.at("ph") == "X" && e.at("cat") == "collective") {
        const std::string name = e.at("name");
        ++count[name.substr(0, name.find(' '))];
      }
    return count;
  };
  const std::map<std::string, int> a = collectives(path_a), b = collectives(path_b);
  CHECK(a.size() == 1);
  CHECK(a.count("all_reduce") == 1);
  CHECK(a.at("all_reduce") == 2 * calls_a);
  CHECK(b.size() == 1);
  CHECK(b.count("broadcast") == 1);
  CHECK(b.at("broadcast") == 3 * calls_b);
}

TEST_CASE("two threads sharing one World see each other's messages and counters") {
  const ts::World world(2);
  std::atomic<bool> sent{false};
  ts::Tensor received;
  int64_t counted_by_receiver = -1;
  const std::vector<std::string> errors = run_together({
      [&] {
        ts::LocalMode mode(world);
        const ts::Tensor message =
            ts::rank_map([](int r) { return ts::full({3}, static_cast<float>(7 + r)); });
        ts::dist::send(message, per_rank({{0, 1}, {1, -1}}));
        sent = true;
      },
      [&] {
        ts::LocalMode mode(world);
        ts::CommCounter counter;  // on the shared world: it sees the other thread's collectives too
        while (!sent.load()) std::this_thread::yield();
        received = ts::zeros({3});
        ts::dist::recv(received, per_rank({{0, -1}, {1, 0}}));
        ts::dist::check_messages();
        counted_by_receiver = counter.calls();
      },
  });
  CHECK(errors == std::vector<std::string>{"", ""});
  REQUIRE(received.defined());
  CHECK(received.shard(1).to_vector<float>() == std::vector<float>{7, 7, 7});
  CHECK(counted_by_receiver == 0);  // send/recv are not collectives

  // A collective issued in the shared world by one thread is counted by a counter another thread
  // opened on it.
  std::atomic<bool> counting{false}, issued{false};
  int64_t calls = -1;
  const std::vector<std::string> more = run_together({
      [&] {
        ts::LocalMode mode(world);
        while (!counting.load()) std::this_thread::yield();
        ts::Tensor t = ts::ones({4});
        ts::dist::all_reduce(t);
        issued = true;
      },
      [&] {
        ts::LocalMode mode(world);
        ts::CommCounter counter;
        counting = true;
        while (!issued.load()) std::this_thread::yield();
        calls = counter.calls("all_reduce");
      },
  });
  CHECK(more == std::vector<std::string>{"", ""});
  CHECK(calls == 1);
}

TEST_CASE("set_threads while another thread multiplies large shards") {
  // 60k-element shards: above the size at which ranks go to the pool.
  static constexpr int64_t n = 60000;
  auto compute = [] {
    ts::LocalMode mode(4);
    ts::Tensor a =
        ts::rank_map([](int r) { return ts::arange(n).to(ts::kFloat32) * static_cast<float>(r + 1); });
    ts::Tensor b = ts::rank_map([](int r) { return ts::full({n}, static_cast<float>(r) - 1.5f); });
    return a * b;
  };
  ts::set_threads(1);
  const ts::Tensor reference = compute();
  std::atomic<bool> done{false};
  int mismatches = 0;
  const std::vector<std::string> errors = run_together({
      [&] {
        for (int i = 0; i < 60; ++i) {
          const ts::Tensor result = compute();
          for (int r = 0; r < 4; ++r)
            if (!ts::equal(result.shard(r), reference.shard(r))) ++mismatches;
        }
        done = true;
      },
      [&] {
        for (int i = 0; !done.load() && i < 2000; ++i) ts::set_threads(i % 2 + 1);
      },
  });
  ts::set_threads(0);
  CHECK(errors == std::vector<std::string>{"", ""});
  CHECK(mismatches == 0);
}

#include "harness.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <iostream>
#include <sstream>

#include <tessera/tessera.hpp>

// Internal: the kernel (product) thread count is set through the plugin registry, as bench_matmul
// and bench_rng do; the public set_threads only counts the threads that run ranks.
#include "dispatch/backends.hpp"

namespace vs_pytorch {

namespace {
bool cpu_clock = false;

double now_seconds() {
  if (cpu_clock) {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

void use_cpu_time(bool cpu) { cpu_clock = cpu; }

double mean_seconds(int warmup, int reps, const std::function<void(int)>& body) {
  for (int i = 0; i < warmup; ++i) body(i);
  const double start = now_seconds();
  for (int i = 0; i < reps; ++i) body(warmup + i);
  return (now_seconds() - start) / reps;
}

namespace {

const char* const kUsage =
    "usage: bench_vs_pytorch [--quick] [--cases A,B,...] [--case NAME] [--warmup N] [--reps N] [--cpu-time] "
    "[--list]\n"
    "  --quick     fewer timed iterations per case\n"
    "  --cases     run only the cases whose name contains one of the comma-separated words\n"
    "  --case      run only the case named exactly NAME (may be repeated)\n"
    "  --warmup N  untimed iterations before the timed ones (default 1)\n"
    "  --reps N    timed iterations for every chosen case (default: each case's own count)\n"
    "  --cpu-time  time with this process's CPU clock instead of the wall clock\n"
    "  --list      print name, description and iteration counts of every case, run nothing\n"
    "Output: one line per case, name<TAB>seconds per iteration<TAB>timed iterations.\n";

struct Options {
  bool quick = false;
  bool list = false;
  bool cpu_time = false;
  // One untimed call first, --quick or not: the first call at many ranks builds and caches the
  // collective schedules, which costs more than the steady state this program measures.
  int warmup = 1;
  int reps = 0;  // 0: each case's own
  std::vector<std::string> filters;
  // Exact names (--case): compare.py runs one case at a time, between PyTorch's cases, and a word
  // of --cases can be part of several names.
  std::vector<std::string> names;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "bench_vs_pytorch: " << message << "\n" << kUsage;
  std::exit(2);
}

int count_argument(const std::string& flag, const char* text, int minimum) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < minimum || value > 1000000)
    usage_error(flag + " takes an integer >= " + std::to_string(minimum) + ", got '" + text + "'");
  return static_cast<int>(value);
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--cpu-time") {
      options.cpu_time = true;
    } else if (arg == "--list") {
      options.list = true;
    } else if (arg == "--warmup") {
      options.warmup = count_argument(arg, value(), 0);
    } else if (arg == "--reps") {
      options.reps = count_argument(arg, value(), 1);
    } else if (arg == "--cases") {
      std::stringstream words(value());
      for (std::string word; std::getline(words, word, ',');)
        if (!word.empty()) options.filters.push_back(word);
    } else if (arg == "--case") {
      options.names.emplace_back(value());
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  return options;
}

bool chosen(const Case& c, const Options& options) {
  for (const std::string& name : options.names)
    if (c.name == name) return true;
  if (!options.names.empty() && options.filters.empty()) return false;
  if (options.filters.empty()) return true;
  for (const std::string& word : options.filters)
    if (c.name.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

int run_main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const std::vector<Case> cases = all_cases();

  std::vector<const Case*> selected;
  for (const Case& c : cases)
    if (chosen(c, options)) selected.push_back(&c);
  if (selected.empty()) {
    std::string names;
    for (const Case& c : cases) names += " " + c.name;
    usage_error("--cases / --case matched no case; the cases are:" + names);
  }

  if (options.list) {
    for (const Case* c : selected)
      std::cout << c->name << '\t' << c->description << '\t' << c->reps << '\t' << c->quick_reps << '\n';
    return 0;
  }

  // One thread on each side of the comparison: ranks run one after another and every kernel
  // (matmul included) runs on the calling thread. TESSERA_THREADS, when set, still wins for the
  // rank threads; compare.py sets it to 1.
  tessera::set_threads(1);
  tessera::dispatch::set_backend_threads(1);

  const int warmup = options.warmup;
  use_cpu_time(options.cpu_time);
  std::cout << "# bench_vs_pytorch: tessera " << tessera::kVersion << ", rank threads " << tessera::threads()
            << ", kernel threads 1, warm-up " << warmup << (options.quick ? ", quick" : "")
            << (options.cpu_time ? ", CPU time" : ", wall time") << std::endl;
  int failures = 0;
  for (const Case* c : selected) {
    const int reps = options.reps > 0 ? options.reps : (options.quick ? c->quick_reps : c->reps);
    try {
      const auto start = std::chrono::steady_clock::now();
      const double seconds = c->run(warmup, reps);
      const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
      std::printf("%s\t%.9g\t%d\n", c->name.c_str(), seconds, reps);
      // Set-up, warm-up and checks included: where the run's time goes when a case is slow.
      std::printf("# %s: %.3f s wall\n", c->name.c_str(), wall.count());
      std::fflush(stdout);
    } catch (const std::exception& e) {
      ++failures;
      std::printf("# %s failed: %s\n", c->name.c_str(), e.what());
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace vs_pytorch

#include "harness.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

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

// Which program parses: the two print different lines from the same command line.
struct Program {
  const char* name;
  const char* output;  // the usage text's last line
};
const Program kVsPytorch{"bench_vs_pytorch",
                         "Output: one line per case, name<TAB>seconds per iteration<TAB>timed iterations.\n"};
const Program kUniqueWork{"bench_unique_work",
                          "Output: one line per case, name<TAB>program seconds<TAB>unique-work seconds<TAB>"
                          "ratio, then the largest ratio.\n"};

std::string usage(const Program& program) {
  return std::string("usage: ") + program.name +
         " [--quick] [--cases A,B,...] [--case NAME] [--warmup N] [--reps N] [--cpu-time] [--list]\n"
         "  --quick     fewer timed iterations per case\n"
         "  --cases     run only the cases whose name contains one of the comma-separated words\n"
         "  --case      run only the case named exactly NAME (may be repeated)\n"
         "  --warmup N  untimed iterations before the timed ones (default 1)\n"
         "  --reps N    timed iterations for every chosen case (default: each case's own count)\n"
         "  --cpu-time  time with this process's CPU clock instead of the wall clock\n"
         "  --list      print name, description and iteration counts of every case, run nothing\n" +
         program.output;
}

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

// Thrown for a bad command line: the entry points print it with the usage and exit with 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void usage_error(const std::string& message) { throw UsageError(message); }

int count_argument(const std::string& flag, const char* text, int minimum) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < minimum || value > 1000000)
    usage_error(flag + " takes an integer >= " + std::to_string(minimum) + ", got '" + text + "'");
  return static_cast<int>(value);
}

Options parse(int argc, char** argv, const Program& program) {
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
      std::cout << usage(program);
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

namespace {

// The chosen cases of `cases` (none chosen is a usage error naming them all).
std::vector<const Case*> select(const std::vector<Case>& cases, const Options& options) {
  std::vector<const Case*> selected;
  for (const Case& c : cases)
    if (chosen(c, options)) selected.push_back(&c);
  if (selected.empty()) {
    std::string names;
    for (const Case& c : cases) names += " " + c.name;
    usage_error("--cases / --case matched no case; the cases are:" + names);
  }
  return selected;
}

// One thread on each side: ranks run one after another and every kernel (matmul included) runs on
// the calling thread. TESSERA_THREADS, when set, still wins for the rank threads; compare.py sets
// it to 1.
void one_thread(const Program& program, const Options& options) {
  tessera::set_threads(1);
  tessera::dispatch::set_backend_threads(1);
  use_cpu_time(options.cpu_time);
  std::cout << "# " << program.name << ": tessera " << tessera::kVersion << ", rank threads "
            << tessera::threads() << ", kernel threads 1, warm-up " << options.warmup
            << (options.quick ? ", quick" : "") << (options.cpu_time ? ", CPU time" : ", wall time")
            << std::endl;
}

int reps_of(const Case& c, const Options& options) {
  return options.reps > 0 ? options.reps : (options.quick ? c.quick_reps : c.reps);
}

// Runs `body` and turns a usage or configuration error (TESSERA_COLL, TESSERA_CONFIG: they surface
// before any case runs) into a message and exit status 2, instead of terminating.
int guarded(const Program& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << program.name << ": " << e.what() << "\n" << usage(program);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program.name << ": " << e.what() << "\n";
    return 2;
  }
}

int run_cases(const Options& options) {
  const std::vector<Case> cases = all_cases();
  const std::vector<const Case*> selected = select(cases, options);
  if (options.list) {
    for (const Case* c : selected)
      std::cout << c->name << '\t' << c->description << '\t' << c->reps << '\t' << c->quick_reps << '\n';
    return 0;
  }
  one_thread(kVsPytorch, options);
  int failures = 0;
  for (const Case* c : selected) {
    const int reps = reps_of(*c, options);
    try {
      const auto start = std::chrono::steady_clock::now();
      const double seconds = c->run(options.warmup, reps);
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

int run_unique_work(const Options& options) {
  const std::vector<Case> cases = all_cases();
  const std::vector<Case> twins = unique_work_cases();
  const std::vector<const Case*> selected = select(cases, options);
  std::vector<const Case*> unique(selected.size(), nullptr);
  for (size_t i = 0; i < selected.size(); ++i) {
    for (const Case& twin : twins)
      if (twin.name == selected[i]->name) unique[i] = &twin;
    if (unique[i] == nullptr)
      throw std::logic_error("case " + selected[i]->name +
                             " has no unique-work twin in unique_work_cases.cpp");
  }
  if (options.list) {
    for (size_t i = 0; i < selected.size(); ++i)
      std::cout << selected[i]->name << '\t' << unique[i]->description << '\n';
    return 0;
  }
  one_thread(kUniqueWork, options);
  int failures = 0;
  double worst = 0;
  std::string worst_name;
  for (size_t i = 0; i < selected.size(); ++i) {
    const int reps = reps_of(*selected[i], options);
    try {
      const double program = selected[i]->run(options.warmup, reps);
      const double work = unique[i]->run(options.warmup, reps);
      const double ratio = program / work;
      std::printf("%s\t%.9g\t%.9g\t%.2f\n", selected[i]->name.c_str(), program, work, ratio);
      std::fflush(stdout);
      if (ratio > worst) worst = ratio, worst_name = selected[i]->name;
    } catch (const std::exception& e) {
      ++failures;
      std::printf("# %s failed: %s\n", selected[i]->name.c_str(), e.what());
      std::fflush(stdout);
    }
  }
  if (!worst_name.empty())
    std::printf("# largest ratio: %.2f (%s); the target is 1.5\n", worst, worst_name.c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run_main(int argc, char** argv) {
  return guarded(kVsPytorch, [&] { return run_cases(parse(argc, argv, kVsPytorch)); });
}

int run_unique_work_main(int argc, char** argv) {
  return guarded(kUniqueWork, [&] { return run_unique_work(parse(argc, argv, kUniqueWork)); });
}

}  // namespace vs_pytorch

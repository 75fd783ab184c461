// The timing harness of bench_vs_pytorch: a table of named cases, each timed as warm-up iterations
// followed by timed ones, and the command line (--quick, --cases, --warmup, --list) that picks them.
// Output is for bench/vs_pytorch/compare.py to join with PyTorch's numbers, so it is one line per
// case, tab-separated: name, seconds per iteration, timed iterations. Lines starting with '#' are
// comments.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace vs_pytorch {

// Times `warmup + reps` calls body(0), body(1), ... and returns the mean seconds of the last
// `reps`. The index lets a case hand each call fresh inputs it built beforehand, untimed.
// Seconds are wall-clock, or this process's CPU time after use_cpu_time(true) (--cpu-time: on a
// shared machine, time spent waiting for a core is not the program's).
double mean_seconds(int warmup, int reps, const std::function<void(int)>& body);
void use_cpu_time(bool cpu);

struct Case {
  std::string name;         // the key both programs print, e.g. "all_reduce16_r1024"
  std::string description;  // what one iteration is
  int reps;                 // timed iterations in a full run
  int quick_reps;           // timed iterations under --quick
  // Runs the case with the given warm-up and timed iterations; returns seconds per iteration.
  std::function<double(int warmup, int reps)> run;
};

// Every case, in the order they are printed (tessera_cases.cpp).
std::vector<Case> all_cases();

// Each case's unique work (unique_work_cases.cpp): the dense ops its program contains, done once on
// plain tensors (identical shards once), under the same name and in the same unit.
std::vector<Case> unique_work_cases();

// bench_vs_pytorch: parses the command line, runs the chosen cases and prints their lines; returns
// the exit status (2 for a usage or configuration error).
int run_main(int argc, char** argv);
// bench_unique_work: the same command line; runs each chosen case and then its unique work, and
// prints name, program seconds, unique-work seconds and their ratio, then the largest ratio.
int run_unique_work_main(int argc, char** argv);

}  // namespace vs_pytorch

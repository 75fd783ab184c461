// The supervisor of `tessera plugins check`: starts the worker (this executable again, with the
// hidden --worker-fd) in a process group of its own, reads its stage messages, and gives each stage
// at most the timeout. A worker that dies of a signal crashed in the stage it had announced; one
// that stays silent past the timeout hung there and is killed with its whole process group. The
// supervisor itself never loads the plugin, so nothing the plugin does can take it down.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "plugin_check/check_options.hpp"
#include "plugin_check/verdict.hpp"

namespace tessera::cli::check {

struct StageResult {
  std::string stage;  // "load", "collective ring", "unload", "cycles", "exit", ...
  Verdict verdict = Verdict::not_run;
  std::string summary;
  std::vector<std::string> details;
  std::string signal;  // crashed: "SIGSEGV"

  static StageResult named(std::string stage, Verdict verdict = Verdict::not_run, std::string summary = {}) {
    StageResult result;
    result.stage = std::move(stage);
    result.verdict = verdict;
    result.summary = std::move(summary);
    return result;
  }
};

struct CheckResult {
  std::string file;
  int timeout_s = 0;
  std::vector<StageResult> stages;
  bool passed() const;
};

CheckResult supervise(const CheckOptions& options);

}  // namespace tessera::cli::check

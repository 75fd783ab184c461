// A collective being met in a spawn: which members arrived with which call, and (across
// processes) which of the fibre's collectives it is.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "spawn/scheduler.hpp"

namespace tessera::spawned {

struct Scheduler::Gathering final : Wait {
  std::shared_ptr<const std::vector<int>> fibre;
  std::vector<comm::Meeting*> parts;  // by group rank; null until that member arrives (or elsewhere)
  const comm::Meeting* first = nullptr;
  int first_rank = -1;
  bool whole = false;  // the whole world's, in rank order (the scheduler's own table slot)
  size_t arrived = 0;
  size_t inside = 0;          // members waiting in it or not yet gone on after it
  size_t hosted = 0;          // members this process runs: all of them, unless the world spans processes
  bool elsewhere = false;     // some members live in other processes: it runs once every process agrees
  uint64_t ordinal = 0;       // the how-many-th collective of this fibre (across processes: its identity)
  comm::ThreadLabels labels;  // of the member that arrived last (one that waits for other processes)
  bool complete = false;
  std::exception_ptr error;

  bool done() const override { return complete; }
  std::string describe(const Scheduler& scheduler) const override {
    std::vector<int> missing, finished, remote;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (parts[k] != nullptr) continue;
      const int r = (*fibre)[k];
      if (!scheduler.hosts(r))
        remote.push_back(r);
      else
        (scheduler.finished(r) ? finished : missing).push_back(r);
    }
    std::string text = fmt::format("{} over ranks [{}]", first->describe(), fmt::join(*fibre, ", "));
    if (!remote.empty())
      text += fmt::format(" (collective #{} of these ranks; rank(s) {} in other processes)", ordinal,
                          fmt::join(remote, ", "));
    if (!missing.empty()) text += fmt::format(", waiting for rank(s) {}", fmt::join(missing, ", "));
    if (!finished.empty())
      text += fmt::format("{} rank(s) {} finished without calling it", missing.empty() ? ", but" : ", and",
                          fmt::join(finished, ", "));
    return text;
  }
};

}  // namespace tessera::spawned

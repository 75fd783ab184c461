#include "comm/collective_path.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "tessera/errors.hpp"

namespace tessera::comm {
namespace {

bool replay_from_environment() {
  const char* value = std::getenv("TESSERA_COLLECTIVE_REPLAY");
  if (value == nullptr || value[0] == '\0' || std::string(value) == "0") return false;
  if (std::string(value) == "1") return true;
  throw ConfigError(fmt::format(
      "TESSERA_COLLECTIVE_REPLAY='{}': expected 1 (replay simulated collectives message by message) or 0",
      value));
}

std::atomic<int>& replay_setting() {  // -1: not read from the environment yet
  static std::atomic<int> setting{-1};
  return setting;
}
std::atomic<uint64_t> evaluated_runs{0};
std::atomic<uint64_t> replayed_runs{0};

}  // namespace

bool replay_forced() {
  int setting = replay_setting().load(std::memory_order_relaxed);
  if (setting < 0) {
    setting = replay_from_environment() ? 1 : 0;
    int unset = -1;
    replay_setting().compare_exchange_strong(unset, setting);
    setting = replay_setting().load();
  }
  return setting == 1;
}

void force_replay(bool on) { replay_setting().store(on ? 1 : 0); }

PathCounts path_counts() { return {evaluated_runs.load(), replayed_runs.load()}; }

void count_path(bool evaluated) {
  (evaluated ? evaluated_runs : replayed_runs).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace tessera::comm

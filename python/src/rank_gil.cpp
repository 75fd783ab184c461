// The GIL for callbacks inside and outside ts.spawn; see rank_gil.hpp.
#include "rank_gil.hpp"

namespace tessera::python {
namespace {

// The spawn running on this thread: spawns nest only through separate threads, and each rank's
// program runs on the spawning thread, so the innermost scope of this thread is the one.
thread_local const SpawnThreadStates* running_spawn = nullptr;

}  // namespace

SpawnThreadStates::SpawnThreadStates(int n) : previous_(running_spawn) {
  PyInterpreterState* interpreter = PyThreadState_Get()->interp;
  for (int r = 0; r < n; ++r) states_.push_back(PyThreadState_New(interpreter));
  running_spawn = this;
}

SpawnThreadStates::~SpawnThreadStates() {
  running_spawn = previous_;
  for (PyThreadState* state : states_) {
    PyThreadState_Clear(state);
    PyThreadState_Delete(state);
  }
}

const SpawnThreadStates* SpawnThreadStates::current() { return running_spawn; }

CallbackGil::CallbackGil() {
  if (const SpawnThreadStates* spawn = SpawnThreadStates::current()) {
    const SymInt rank = [] {
      const DisabledLocalMode plain;  // the rank's own number, not a LocalMode's ranks
      return get_rank();
    }();
    if (!rank.is_local()) {
      rank_.emplace((*spawn)[static_cast<int>(rank.as_int())]);
      return;
    }
  }
  thread_.emplace();
}

}  // namespace tessera::python

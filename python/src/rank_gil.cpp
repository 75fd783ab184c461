// The GIL for callbacks inside and outside ts.spawn; see rank_gil.hpp.
#include "rank_gil.hpp"

#if PY_VERSION_HEX < 0x030C0000 && defined(__unix__)
#include <limits.h>
#include <pthread.h>
#define TESSERA_REBIND_GILSTATE 1
#endif

namespace tessera::python {
namespace {

// The spawn running on this thread: spawns nest only through separate threads, and each rank's
// program runs on the spawning thread, so the innermost scope of this thread is the one.
thread_local const SpawnThreadStates* running_spawn = nullptr;

#ifdef TESSERA_REBIND_GILSTATE
// PyGILState's slot: the thread-specific key whose value is this thread's own state, checked by
// writing another value into it and reading it back through PyGILState_GetThisThreadState.
long find_gilstate_key(PyThreadState* own) {
  for (pthread_key_t key = 0; key < PTHREAD_KEYS_MAX; ++key) {
    if (pthread_getspecific(key) != own) continue;
    int probe = 0;
    pthread_setspecific(key, &probe);
    const bool found = static_cast<void*>(PyGILState_GetThisThreadState()) == &probe;
    pthread_setspecific(key, own);
    if (found) return static_cast<long>(key);
  }
  return -1;
}
#endif

}  // namespace

void rebind_gilstate() {
  if (const SpawnThreadStates* spawn = running_spawn) spawn->bind(PyThreadState_Get());
}

SpawnThreadStates::SpawnThreadStates(int n) : previous_(running_spawn), caller_(PyThreadState_Get()) {
  PyInterpreterState* interpreter = caller_->interp;
  for (int r = 0; r < n; ++r) {
    PyThreadState* state = PyThreadState_New(interpreter);
#ifdef TESSERA_REBIND_GILSTATE
    // A PyGILState_Release that brings the count to 0 deletes the state: these are the spawn's.
    state->gilstate_counter = 1;
#endif
    states_.push_back(state);
  }
#ifdef TESSERA_REBIND_GILSTATE
  if (PyGILState_GetThisThreadState() == caller_) gilstate_key_ = find_gilstate_key(caller_);
#endif
  running_spawn = this;
}

void SpawnThreadStates::bind(PyThreadState* state) const {
#ifdef TESSERA_REBIND_GILSTATE
  if (gilstate_key_ >= 0) pthread_setspecific(static_cast<pthread_key_t>(gilstate_key_), state);
#else
  (void)state;
#endif
}

SpawnThreadStates::~SpawnThreadStates() {
  bind(caller_);
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

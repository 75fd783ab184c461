// The GIL for Python code the library calls back (a pipeline stage's forward, a loss function, a
// per-rank callback) while the binding has released the GIL.
//
// Inside ts.spawn every rank runs Python with a thread state of its own (spawn.cpp), all on the
// thread that called spawn. A callback must take the GIL with the running rank's state: before
// Python 3.12, PyGILState (what nb::gil_scoped_acquire uses) knows only the thread's own state and
// would wait for a GIL that a suspended rank's state holds. The spawn publishes its states for the
// calling thread while it runs (SpawnThreadStates); elsewhere CallbackGil is gil_scoped_acquire.
//
// Before Python 3.12 nanobind takes the GIL through PyGILState in places no binding controls (the
// deleter of a shared_ptr to a Python-made object, a python_error's destructor). PyGILState
// finds the thread's state in a thread-specific slot, so whenever a rank takes the GIL
// (ThreadStateGil, and after each without_gil) the slot is pointed at that rank's state, and back
// at the caller's when the spawn ends: a PyGILState_Ensure inside a rank then finds its own state
// current and does not wait.
#pragma once

#include <optional>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {

// One thread state per rank of the spawn running on this thread (made and cleared with the GIL
// held), and the scope in which callbacks on this thread find them.
class SpawnThreadStates {
 public:
  explicit SpawnThreadStates(int n);
  ~SpawnThreadStates();
  SpawnThreadStates(const SpawnThreadStates&) = delete;
  SpawnThreadStates& operator=(const SpawnThreadStates&) = delete;

  PyThreadState* operator[](int rank) const { return states_.at(static_cast<size_t>(rank)); }
  // The states of the spawn running on this thread, or null outside one.
  static const SpawnThreadStates* current();
  // Makes `state` (holding the GIL) the one PyGILState sees as this thread's.
  void bind(PyThreadState* state) const;

 private:
  std::vector<PyThreadState*> states_;
  const SpawnThreadStates* previous_;
  PyThreadState* caller_;  // the spawning thread's own state
  // PyGILState's thread-specific slot (Python < 3.12 on POSIX); -1 where none is needed or found.
  long gilstate_key_ = -1;
};

// Holds the GIL with a given thread state (a rank's) for the life of the scope.
class ThreadStateGil {
 public:
  explicit ThreadStateGil(PyThreadState* state) {
    PyEval_RestoreThread(state);
    rebind_gilstate();
  }
  ~ThreadStateGil() { PyEval_SaveThread(); }
  ThreadStateGil(const ThreadStateGil&) = delete;
  ThreadStateGil& operator=(const ThreadStateGil&) = delete;
};

// Takes the GIL for a callback: with the running rank's state inside ts.spawn, else as
// gil_scoped_acquire does.
class CallbackGil {
 public:
  CallbackGil();
  CallbackGil(const CallbackGil&) = delete;
  CallbackGil& operator=(const CallbackGil&) = delete;

 private:
  std::optional<ThreadStateGil> rank_;
  std::optional<nb::gil_scoped_acquire> thread_;
};

}  // namespace tessera::python

// The GIL for Python code the library calls back (a pipeline stage's forward, a loss function, a
// per-rank callback) while the binding has released the GIL.
//
// Inside ts.spawn every rank runs Python with a thread state of its own (spawn.cpp), all on the
// thread that called spawn. A callback must take the GIL with the running rank's state: before
// Python 3.12, PyGILState (what nb::gil_scoped_acquire uses) knows only the thread's own state and
// would wait for a GIL that a suspended rank's state holds. The spawn publishes its states for the
// calling thread while it runs (SpawnThreadStates); elsewhere CallbackGil is gil_scoped_acquire.
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

 private:
  std::vector<PyThreadState*> states_;
  const SpawnThreadStates* previous_;
};

// Holds the GIL with a given thread state (a rank's) for the life of the scope.
class ThreadStateGil {
 public:
  explicit ThreadStateGil(PyThreadState* state) { PyEval_RestoreThread(state); }
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

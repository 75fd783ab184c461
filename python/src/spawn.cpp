// ts.spawn(n, program): program(rank) once per rank of a new simulated world, each rank on a
// coroutine of its own, all on the calling thread (tessera/spawn.hpp).
//
// Python on coroutines: a rank's program may stop in the middle of its Python frames (waiting in a
// collective or a receive) while another rank runs Python code of its own. The interpreter keeps
// the frame stack, the recursion depth and the exception being handled in the thread state, so
// each rank runs with a Python thread state of its own: it takes the GIL with that state when its
// program starts, every Tessera call that may wait releases the GIL (saving the rank's state), and
// the rank that runs next takes the GIL with its own (rank_gil.hpp). The states are made before
// the spawn and cleared after it, with the caller's state back in place.
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "rank_gil.hpp"

namespace tessera::python {
namespace {

// The exception being raised (the error indicator, which is cleared), with its traceback attached.
PyObject* take_raised_exception() {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return value;
#endif
}

void spawn_py(int n, nb::callable program, size_t stack_bytes) {
  if (n < 1) throw nb::value_error(("ts.spawn: n must be at least 1, got " + std::to_string(n)).c_str());
  SpawnThreadStates states(n);
  // Each rank's Python exception. A rank that waits when another fails (or in a deadlock) sees its
  // wait end in an exception too, so only the rank the spawn names as failed counts.
  std::vector<nb::object> raised_by(static_cast<size_t>(n));
  try {
    without_gil([&] {
      tessera::spawn(
          n,
          [&](int rank) {
            ThreadStateGil gil(states[rank]);
            try {
              program(rank);
            } catch (nb::python_error& e) {
              const std::string text = nb::cast<std::string>(nb::repr(e.value()));
              // Moved out of the python_error: the caller raises this exception object itself.
              e.restore();
              raised_by[static_cast<size_t>(rank)] = nb::steal(take_raised_exception());
              throw Error("ts.spawn: program raised " + text + " on rank " + std::to_string(rank));
            }
          },
          SpawnOptions{stack_bytes});
    });
  } catch (const RankError& e) {
    // The failed rank's Python exception reaches the caller as itself (its traceback through the
    // rank's program); a Tessera error, a deadlock, leftover messages as ts.Error.
    nb::object& exception = raised_by.at(static_cast<size_t>(e.rank()));
    if (!exception.is_valid()) throw;
    PyObject* traceback = PyException_GetTraceback(exception.ptr());  // a new reference
    PyObject* type = nb::handle(exception.type()).inc_ref().ptr();
    PyErr_Restore(type, exception.release().ptr(), traceback);
    throw nb::python_error();
  }
}

}  // namespace

void bind_spawn(nb::module_& m) {
  m.def("spawn", &spawn_py, nb::arg("n"), nb::arg("program"), nb::kw_only(),
        nb::arg("stack_bytes") = size_t{8} << 20,
        "Runs program(rank) for every rank 0..n-1 of a new simulated world, each as a torchrun process would "
        "run "
        "(ts.dist.get_rank() is its rank, its tensors are its own, collectives and send/recv wait for the "
        "peers); "
        "returns when all have finished. A rank that raises ends the spawn with its exception; every rank "
        "waiting is a deadlock, reported with what each waits in. stack_bytes: each rank's stack.");
  m.def(
      "yield_rank", [] { without_gil([] { yield_rank(); }); },
      "Inside a rank's program: lets the other ranks that can run do so first. Outside one, does nothing.");
}

}  // namespace tessera::python

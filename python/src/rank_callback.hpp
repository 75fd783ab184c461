// Python callbacks called per rank (by ts.rank_map, ts.tensor_map and ts.run_per_rank).
//
// They run inside the library's rank loop, which turns whatever a rank throws into a ts.Error
// naming the rank. A Python exception raised by the callback must reach the caller as itself, so it
// is recorded on the way out and raised again after the loop.
#pragma once

#include <nanobind/stl/string.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "local_scopes.hpp"
#include "rank_gil.hpp"

namespace tessera::python {

// Runs a Python callback for one rank (with the GIL, which the caller released: ranks may run on
// other threads) and records the Python exception it raises, so that the binding can raise that
// exception rather than the ts.Error the rank loop would make of it. The lowest failing rank's
// exception wins, as the rank loop reports the lowest failing rank: the result does not depend on
// scheduling.
class Callback {
 public:
  Callback(nb::callable fn, std::string what) : fn_(std::move(fn)), what_(std::move(what)) {}

  // `body` calls fn_ and converts its result; called from a rank task.
  template <class Body>
  decltype(auto) call(int rank, Body&& body) {
    const CallbackGil gil;
    // A scope the callback entered and never exited would sit on top of the rank loop's own
    // scope and make it abort when it unwinds: close it and say so.
    const size_t depth = open_scope_depth();
    try {
      auto result = body(fn_);
      if (open_scope_depth() > depth)
        throw Error(what_ + ": fn(" + std::to_string(rank) + ") left scopes open (" + close_above(depth) +
                    "); they were closed. Use `with` so that each is exited");
      return result;
    } catch (nb::python_error& e) {
      close_above(depth);
      if (!failed_rank_ || rank < *failed_rank_) {
        failed_rank_ = rank;
        exception_ = nb::borrow(e.value());
      }
      throw Error(what_ + ": fn raised " + nb::cast<std::string>(nb::repr(e.value())) + " on rank " +
                  std::to_string(rank));
    }
  }

  // Runs `loop` without the GIL; a Python exception a callback raised is raised again as itself.
  template <class Loop>
  decltype(auto) run(Loop&& loop) {
    try {
      return without_gil(loop);
    } catch (const Error&) {
      if (!exception_.is_valid()) throw;
      nb::object exception = std::move(exception_);
      PyObject* traceback = PyException_GetTraceback(exception.ptr());  // a new reference
      PyObject* type = nb::handle(exception.type()).inc_ref().ptr();
      PyErr_Restore(type, exception.release().ptr(), traceback);
      throw nb::python_error();
    }
  }

 private:
  nb::callable fn_;
  std::string what_;
  std::optional<int> failed_rank_;
  nb::object exception_;  // touched with the GIL held only
};

// A callback's result that must be a tensor (or None where `none_allowed`: the rank is dropped).
inline Tensor tensor_result(nb::handle value, const std::string& what, int rank, bool none_allowed) {
  if (none_allowed && value.is_none()) return Tensor();
  if (!nb::isinstance<Tensor>(value))
    throw Error(
        what + ": fn(" + std::to_string(rank) + ", ...) returned " + nb::cast<std::string>(nb::repr(value)) +
        (none_allowed ? "; expected a ts.Tensor (or None to drop the rank)" : "; expected a ts.Tensor"));
  return nb::cast<Tensor>(value);
}

}  // namespace tessera::python

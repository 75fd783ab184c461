// The scopes opened from Python: ts.LocalMode as a context manager, mode.disable() and
// ts.maybe_disable_local_mode() (PyTorch: LocalTensorMode), and the queries about them
// (ts.active_local_mode, ts.in_per_rank_region).
//
// The C++ scopes (LocalMode, DisabledLocalMode) are RAII objects on a per-thread stack that aborts
// the process when they are destroyed out of order. Python's `with` gives no such guarantee (a
// scope can be entered by hand and exited never, or twice, or from another thread), so each Python
// scope keeps its C++ object on a stack of our own, which checks the order and reports a mistake as
// ts.Error instead.
#include "local_scopes.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tessera::python {
namespace {

class PyLocalMode;

// One scope opened from Python: a local mode or a disabled scope (exactly one of the two).
struct OpenScope {
  std::string name;  // for errors, e.g. "ts.LocalMode(4)"
  std::unique_ptr<LocalMode> mode;
  std::unique_ptr<DisabledLocalMode> disabled;
  PyLocalMode* owner = nullptr;  // the Python object of a mode, while it lives (for active_local_mode)
  std::thread::id thread = std::this_thread::get_id();
  bool open() const { return mode || disabled; }
  void close() {
    mode.reset();
    disabled.reset();
  }
};

// The scopes this thread opened from Python, innermost last. The C++ stack underneath must see
// them destroyed in reverse order, which this stack enforces.
struct OpenScopes {
  std::vector<std::shared_ptr<OpenScope>> stack;
  // At thread exit the library's own per-thread stack may already be gone, so closing scopes
  // then would touch freed memory: scopes still open are left to the end of the process instead.
  ~OpenScopes() {
    for (auto& scope : stack) {
      (void)scope->mode.release();
      (void)scope->disabled.release();
    }
  }
};

std::vector<std::shared_ptr<OpenScope>>& open_scopes() {
  thread_local OpenScopes scopes;
  return scopes.stack;
}

}  // namespace

// Shared with rank_callback.hpp (declared in local_scopes.hpp).
size_t open_scope_depth() { return open_scopes().size(); }

std::string close_above(size_t depth) {
  auto& stack = open_scopes();
  std::string names;
  while (stack.size() > depth) {
    names += (names.empty() ? "" : ", ") + stack.back()->name;
    stack.back()->close();
    stack.pop_back();
  }
  return names;
}

namespace {

void enter_scope(const std::shared_ptr<OpenScope>& scope) { open_scopes().push_back(scope); }

// Leaves `scope`. Scopes opened after it and still open are closed first (as leaving a `with`
// block by an exception would have), and reported: leaving out of order is a mistake.
void exit_scope(const std::shared_ptr<OpenScope>& scope, const std::string& what) {
  if (!scope || !scope->open())
    throw Error(what + ": the scope is not active (it was never entered, or already exited)");
  if (scope->thread != std::this_thread::get_id())
    throw Error(what + ": the scope was entered on another thread; exit it on the thread that entered it");
  auto& stack = open_scopes();
  size_t index = stack.size();
  for (size_t i = 0; i < stack.size(); ++i)
    if (stack[i] == scope) index = i;
  if (index == stack.size()) throw Error(what + ": the scope is not on this thread's stack of open scopes");
  const std::string inner = close_above(index + 1);
  stack.back()->close();
  stack.pop_back();
  if (!inner.empty())
    throw Error(what + ": exited while scopes entered after it were still open (" + inner +
                "); they were closed too. Exit scopes in the reverse order of entering them");
}

// `with ts.LocalMode(4) as mode:` -- the C++ mode exists between __enter__ and __exit__ only, so
// a LocalMode object can be entered again after it is exited (a fresh mode with a fresh world).
class PyLocalMode {
 public:
  explicit PyLocalMode(RankSet ranks) : ranks_(std::move(ranks)) {
    if (ranks_.empty()) throw Error("ts.LocalMode needs at least one rank, got an empty rank list");
  }
  PyLocalMode(const PyLocalMode&) = delete;
  PyLocalMode& operator=(const PyLocalMode&) = delete;
  // A mode still open when its Python object goes (entered by hand, never exited) stays open on
  // its thread's stack: closing it here could break the order of the scopes around it.
  ~PyLocalMode() {
    if (scope_) scope_->owner = nullptr;
  }

  const RankSet& ranks() const { return ranks_; }
  bool active() const { return scope_ && scope_->open(); }

  std::string repr() const {
    if (ranks_ == RankSet::range(static_cast<int>(ranks_.size())))
      return "LocalMode(" + std::to_string(ranks_.size()) + ")";
    std::string text;
    for (int r : ranks_) text += (text.empty() ? "" : ", ") + std::to_string(r);
    return "LocalMode([" + text + "])";
  }

  void enter() {
    if (active())
      throw Error(repr() + ".__enter__: the mode is already active; a mode can be entered once at a time");
    auto scope = std::make_shared<OpenScope>();
    scope->name = "ts." + repr();
    scope->mode = std::make_unique<LocalMode>(ranks_);
    scope->owner = this;
    scope_ = scope;
    enter_scope(scope);
  }
  void exit() { exit_scope(scope_, repr() + ".__exit__"); }

  LocalMode& mode(const char* what) const {
    if (!active())
      throw Error(repr() + "." + what + ": the mode is not active; call it inside `with ts." + repr() +
                  " as mode:`");
    return *scope_->mode;
  }
  // The mode's methods that run in the active mode (rank_map, tensor_map) refuse to run while another
  // mode, or a disabled scope, is innermost: they would use the wrong ranks.
  void innermost(const char* what) const {
    if (active_local_mode() != &mode(what))
      throw Error(repr() + "." + what +
                  ": the mode is active but not the innermost enabled scope; call it "
                  "directly inside `with ts." +
                  repr() + " as mode:`, outside any nested mode or disable()");
  }

 private:
  RankSet ranks_;
  std::shared_ptr<OpenScope> scope_;
};

// `with mode.disable():` / `with ts.maybe_disable_local_mode():` -- factories make plain tensors.
class PyDisabledScope {
 public:
  void enter() {
    if (scope_ && scope_->open()) throw Error("DisabledLocalMode.__enter__: the scope is already active");
    scope_ = std::make_shared<OpenScope>();
    scope_->name = "ts.maybe_disable_local_mode()";
    scope_->disabled = std::make_unique<DisabledLocalMode>();
    enter_scope(scope_);
  }
  void exit() { exit_scope(scope_, "DisabledLocalMode.__exit__"); }

 private:
  std::shared_ptr<OpenScope> scope_;
};

RankSet ranks_from(nb::handle ranks) {
  if (PyLong_Check(ranks.ptr())) {
    const auto n = nb::cast<int64_t>(ranks);
    if (n < 1 || n > std::numeric_limits<int>::max())
      throw Error("ts.LocalMode(n): n is the number of ranks and must be at least 1, got " +
                  std::to_string(n));
    return RankSet::range(static_cast<int>(n));
  }
  // Any iterable of ints: a list, a tuple, a range, a set or a frozenset (PyTorch's LocalTensorMode
  // takes frozenset(ranks)); the order given does not matter, a mode's ranks are kept ascending.
  if (PyUnicode_Check(ranks.ptr()) || PyBytes_Check(ranks.ptr()) || !nb::hasattr(ranks, "__iter__"))
    throw nb::type_error(
        ("ts.LocalMode: expected a number of ranks (int) or an iterable of ranks (e.g. [0, 2, 3] "
         "or frozenset({0, 1})), got " +
         describe(ranks))
            .c_str());
  std::vector<int> list;
  for (nb::handle r : nb::iter(ranks)) {
    if (!PyLong_Check(r.ptr()) || PyBool_Check(r.ptr()))
      throw nb::type_error(("ts.LocalMode: ranks must be ints, got " + describe(r)).c_str());
    const auto rank = nb::cast<int64_t>(r);
    if (rank < 0 || rank > std::numeric_limits<int>::max())
      throw Error("ts.LocalMode: a rank must be a non-negative int, got " + std::to_string(rank));
    list.push_back(static_cast<int>(rank));
  }
  return RankSet(std::move(list));
}

}  // namespace

void bind_local_scopes(nb::module_& m) {
  nb::class_<PyLocalMode>(
      m, "LocalMode",
      "A scope in which factories make local tensors over its ranks (PyTorch: LocalTensorMode).\n\n"
      "    with ts.LocalMode(4) as mode:       # ranks 0..3; or ts.LocalMode([0, 2, 3])\n"
      "        x = ts.ones(2, 3)               # a local tensor over the mode's ranks\n\n"
      "Modes nest; leaving one restores the outer. Each entry makes a fresh simulated world.")
      .def(
          "__init__", [](PyLocalMode* self, nb::handle ranks) { new (self) PyLocalMode(ranks_from(ranks)); },
          nb::arg("ranks"))
      .def("__enter__",
           [](nb::object self) {
             nb::cast<PyLocalMode&>(self).enter();
             return self;
           })
      .def("__exit__", [](PyLocalMode& self, nb::args) { self.exit(); })
      .def_prop_ro(
          "ranks", [](const PyLocalMode& self) { return self.ranks().ranks(); },
          "The mode's ranks, ascending.")
      .def_prop_ro("active", &PyLocalMode::active, "Whether the mode is entered (and not yet exited).")
      .def(
          "disable", [](const PyLocalMode&) { return PyDisabledScope(); },
          "A scope in which factories make plain tensors; ops on local tensors still run per rank.")
      .def(
          "rank_map",
          [m](const PyLocalMode& self, nb::callable fn) {
            self.innermost("rank_map");
            return m.attr("rank_map")(fn);
          },
          nb::arg("fn"), "ts.rank_map(fn) in this mode, which must be the innermost active one.")
      .def(
          "tensor_map",
          [m](const PyLocalMode& self, nb::handle tensor, nb::callable fn) {
            self.innermost("tensor_map");
            return m.attr("tensor_map")(tensor, fn);
          },
          nb::arg("tensor"), nb::arg("fn"),
          "ts.tensor_map(tensor, fn) in this mode, which must be the innermost active one.")
      .def(
          "manual_seed",
          [](const PyLocalMode& self, nb::handle seed) {
            self.mode("manual_seed").manual_seed(sym_int_from(seed));
          },
          nb::arg("seed"), "Reseeds every rank (an int) or each rank with its own seed (a ts.LocalInt).")
      .def("__repr__", &PyLocalMode::repr);

  nb::class_<PyDisabledScope>(m, "DisabledLocalMode",
                              "A scope in which factories make plain tensors even inside a ts.LocalMode.")
      .def("__enter__",
           [](nb::object self) {
             nb::cast<PyDisabledScope&>(self).enter();
             return self;
           })
      .def("__exit__", [](PyDisabledScope& self, nb::args) { self.exit(); });

  m.def(
      "maybe_disable_local_mode", [] { return PyDisabledScope(); },
      "A scope in which factories make plain tensors, whether or not a mode is active.");
  m.def(
      "active_local_mode",
      []() -> nb::object {
        LocalMode* active = active_local_mode();
        if (active == nullptr) return nb::none();
        for (const auto& scope : open_scopes())
          if (scope->mode.get() == active && scope->owner != nullptr) return nb::find(scope->owner);
        return nb::none();
      },
      "The innermost enabled ts.LocalMode on this thread, or None (also while it is disabled).");
  m.def("in_per_rank_region", &in_per_rank_region,
        "Whether this thread runs a per-rank function (of run_per_rank or rank_map), where collectives are "
        "refused.");
}

}  // namespace tessera::python

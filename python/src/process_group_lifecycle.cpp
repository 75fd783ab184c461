// PyTorch's default-process-group lifecycle (dist.init_process_group("fake", rank=, world_size=),
// dist.is_initialized, dist.destroy_process_group, distributed_c10d._get_default_group), so that
// programs written for PyTorch's simulated ("fake") backend run as they are.
//
// Tessera needs no process group to run collectives: inside a ts.LocalMode a collective runs over
// the ranks of its argument. init_process_group therefore only records that a default group exists
// (and checks its arguments as PyTorch does), and _get_default_group returns ts.ProcessGroup(), the
// group of every rank of the collective's argument. The record belongs to the functions bound here
// (their shared capture), not to a process-global variable.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

struct DefaultGroup {
  bool initialized = false;
  std::string backend;
  int rank = 0;
  int world_size = 0;
};

[[noreturn]] void not_initialized(const char* what) {
  throw nb::value_error((std::string(what) +
                         ": Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
                            .c_str());
}

}  // namespace

void bind_process_group_lifecycle(nb::module_& dist) {
  using namespace nb::literals;
  auto state = std::make_shared<DefaultGroup>();

  dist.def(
      "init_process_group",
      [state](std::optional<std::string> backend, nb::handle /*init_method*/, nb::handle /*timeout*/,
              int world_size, int rank, nb::handle /*store*/, const std::string& /*group_name*/,
              nb::handle /*pg_options*/, nb::handle /*device_id*/) {
        const std::string name = backend.value_or("fake");
        if (name != "fake")
          throw Error("ts.dist.init_process_group: backend '" + name +
                      "' is not available; Tessera simulates every rank in this process, which is PyTorch's "
                      "'fake' backend: pass backend=\"fake\"");
        if (state->initialized)
          throw nb::value_error("trying to initialize the default process group twice!");
        if (world_size < 1)
          throw Error("ts.dist.init_process_group: world_size must be at least 1, got " +
                      std::to_string(world_size));
        if (rank < 0 || rank >= world_size)
          throw Error("ts.dist.init_process_group: rank must be in [0, world_size) = [0, " +
                      std::to_string(world_size) + "), got " + std::to_string(rank));
        *state = DefaultGroup{true, name, rank, world_size};
      },
      "backend"_a = nb::none(), "init_method"_a = nb::none(), "timeout"_a = nb::none(), "world_size"_a = -1,
      "rank"_a = -1, "store"_a = nb::none(), "group_name"_a = "", "pg_options"_a = nb::none(),
      "device_id"_a = nb::none(),
      "Records the default process group of the simulated ('fake') backend: rank `rank` of `world_size`. "
      "Collectives do not need it; programs written for PyTorch call it. A second call before "
      "destroy_process_group() raises ValueError.");
  dist.def(
      "is_initialized", [state] { return state->initialized; },
      "Whether init_process_group() was called and destroy_process_group() not since.");
  dist.def(
      "destroy_process_group",
      [state](nb::handle group) {
        if (!group.is_none() && !nb::isinstance<ProcessGroup>(group))
          throw nb::type_error(
              ("ts.dist.destroy_process_group: group must be None or a ts.ProcessGroup, got " +
               describe(group))
                  .c_str());
        if (!state->initialized) not_initialized("ts.dist.destroy_process_group");
        // Groups made by new_group() hold no resources; only the default group's record goes.
        if (group.is_none() || nb::cast<const ProcessGroup&>(group).is_default()) *state = DefaultGroup{};
      },
      "group"_a = nb::none(),
      "Forgets the default process group (group None or the default group); ValueError when there is none.");
  dist.def(
      "_get_default_group",
      [state] {
        if (!state->initialized) not_initialized("ts.dist._get_default_group");
        return ProcessGroup();
      },
      "The default process group: ts.ProcessGroup(), every rank of the collective's argument. ValueError "
      "before init_process_group().");
  dist.def(
      "get_backend",
      [state](nb::handle /*group*/) {
        if (!state->initialized) not_initialized("ts.dist.get_backend");
        return state->backend;
      },
      "group"_a = nb::none(), "The default group's backend name ('fake').");
}

}  // namespace tessera::python

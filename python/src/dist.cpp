// ts.dist: the collectives and point-to-point messages (PyTorch: torch.distributed), ts.ReduceOp
// and ts.ProcessGroup, with PyTorch's keyword names.
//
// The collectives work in place: the C++ functions take Tensor& (and std::vector<Tensor>&) and may
// rebind the handle to a new tensor. A tensor argument is therefore bound to the C++ Tensor inside
// the Python object, and a list argument's results are written back into the list's own objects,
// so the caller's variables see the result, as in PyTorch. Every collective runs without the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {
namespace {

// `group=`: None (every rank of the argument), a ts.ProcessGroup, or a list of global ranks (one
// fibre, as dist.new_group(ranks) would make).
ProcessGroup group_from(nb::handle group, const char* what) {
  if (group.is_none()) return {};
  if (nb::isinstance<ProcessGroup>(group)) return nb::cast<ProcessGroup>(group);
  if (PySequence_Check(group.ptr()) && !PyUnicode_Check(group.ptr())) {
    std::vector<int> ranks;
    for (nb::handle r : group) {
      if (!PyLong_Check(r.ptr()))
        throw nb::type_error((std::string(what) + ": group= lists ranks, which must be ints, got " +
                              nb::cast<std::string>(nb::repr(r)))
                                 .c_str());
      ranks.push_back(nb::cast<int>(r));
    }
    return ProcessGroup(std::move(ranks));
  }
  throw nb::type_error((std::string(what) +
                        ": group= must be None, a ts.ProcessGroup or a list of ranks, got " +
                        nb::cast<std::string>(nb::repr(group)))
                           .c_str());
}

// The C++ tensors of a list of ts.Tensor objects (handles to the same data).
std::vector<Tensor> tensors_of(nb::handle list, const char* what, const char* param) {
  if (!PySequence_Check(list.ptr()) || PyUnicode_Check(list.ptr()))
    throw nb::type_error((std::string(what) + ": " + param + " must be a list of ts.Tensor, got " +
                          nb::cast<std::string>(nb::repr(list)))
                             .c_str());
  std::vector<Tensor> tensors;
  size_t i = 0;
  for (nb::handle item : list) {
    if (!nb::isinstance<Tensor>(item))
      throw nb::type_error((std::string(what) + ": " + param + "[" + std::to_string(i) + "] is " +
                            nb::cast<std::string>(nb::repr(item)) + "; expected a ts.Tensor")
                               .c_str());
    tensors.push_back(nb::cast<const Tensor&>(item));
    ++i;
  }
  return tensors;
}

// Puts a collective's results into the Python objects the list holds (the caller's variables
// for those tensors see them), growing or shrinking a list whose length the collective changed.
void write_back(nb::handle list, const std::vector<Tensor>& results, const char* what, const char* param) {
  const size_t size = nb::len(list);
  for (size_t i = 0; i < results.size() && i < size; ++i) nb::cast<Tensor&>(list[i]) = results[i];
  if (results.size() == size) return;
  if (!PyList_Check(list.ptr()))
    throw Error(std::string(what) + ": " + param + " has " + std::to_string(size) +
                " tensors but the result has " + std::to_string(results.size()) +
                "; pass a list so that it can be resized");
  nb::list as_list = nb::borrow<nb::list>(list);
  for (size_t i = size; i < results.size(); ++i) as_list.append(nb::cast(results[i]));
  if (results.size() < size)
    PyList_SetSlice(list.ptr(), static_cast<Py_ssize_t>(results.size()), static_cast<Py_ssize_t>(size),
                    nullptr);
}

// The participants of a barrier given none: every rank of the active mode, each with an empty shard.
Tensor mode_participants() {
  LocalMode* mode = active_local_mode();
  if (mode == nullptr)
    throw Error(
        "ts.dist.barrier: outside a ts.LocalMode there are no ranks to synchronise; call it inside a mode "
        "or pass participants= (a local tensor over the ranks that take part)");
  const DisabledLocalMode plain;  // empty plain shards, not local tensors
  std::vector<std::pair<int, Tensor>> shards;
  for (int r : mode->ranks()) shards.emplace_back(r, zeros({0}));
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

// What an async_op=True call returns: the simulated collective has already completed.
struct Work {
  bool wait(nb::handle /*timeout*/) const { return true; }
  bool is_completed() const { return true; }
};

nb::object finished(bool async_op) { return async_op ? nb::cast(Work()) : nb::none(); }

}  // namespace

void bind_dist(nb::module_& m) {
  nb::module_ py_dist = m.def_submodule("dist", "The collectives (PyTorch: torch.distributed).");
  using namespace nb::literals;

  // As in PyTorch, ts.ReduceOp.SUM is a value of the nested enum ReduceOp.RedOpType, which converts
  // implicitly to a ReduceOp (the class that also carries premul_sum's factor). Instances of a class
  // kept in its own attributes would form a reference cycle that outlives the interpreter.
  nb::class_<ReduceOp> reduce_op(
      m, "ReduceOp",
      "How a collective combines ranks' values: ts.ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, "
      "BAND, BOR, BXOR, or ts.ReduceOp.premul_sum(factor).");
  nb::enum_<ReduceOp::Kind>(reduce_op, "RedOpType")
      .value("SUM", ReduceOp::SUM)
      .value("AVG", ReduceOp::AVG)
      .value("PRODUCT", ReduceOp::PRODUCT)
      .value("MIN", ReduceOp::MIN)
      .value("MAX", ReduceOp::MAX)
      .value("BAND", ReduceOp::BAND)
      .value("BOR", ReduceOp::BOR)
      .value("BXOR", ReduceOp::BXOR)
      .value("PREMUL_SUM", ReduceOp::PREMUL_SUM)
      .export_values();
  reduce_op.def(nb::init_implicit<ReduceOp::Kind>(), "op"_a)
      .def_static("premul_sum", &ReduceOp::premul_sum, "factor"_a, "SUM of each rank's value times factor.")
      .def_prop_ro("op", &ReduceOp::kind)
      .def_prop_ro("factor", &ReduceOp::factor)
      .def("__repr__", [](const ReduceOp& op) { return "ReduceOp." + op.to_string(); })
      .def("__str__", &ReduceOp::to_string)
      .def("__eq__",
           [](const ReduceOp& a, nb::handle b) {
             if (!nb::isinstance<ReduceOp>(b) && !nb::isinstance<ReduceOp::Kind>(b)) return false;
             const ReduceOp other = nb::cast<ReduceOp>(b);
             return a.kind() == other.kind() && a.factor() == other.factor();
           })
      .def("__hash__", [](const ReduceOp& op) { return std::hash<std::string>()(op.to_string()); });

  nb::class_<ProcessGroup>(
      m, "ProcessGroup",
      "The ranks a collective runs over: one fibre (an ordered list of global ranks), or "
      "several sibling fibres of equal size that run at once (a mesh dimension's groups).")
      .def(nb::init<>(), "The default group: every rank of the collective's argument, in rank order.")
      .def(nb::init<std::vector<int>>(), "ranks"_a, "One fibre: group rank i is ranks[i].")
      .def_static("from_fibres", &ProcessGroup::from_fibres, "fibres"_a,
                  "Several sibling fibres of equal size that run at once (a mesh dim's groups); no rank may "
                  "appear twice.")
      .def_prop_ro("fibres", &ProcessGroup::fibres)
      .def_prop_ro("is_default", &ProcessGroup::is_default)
      .def("size", &ProcessGroup::size, "The size of each fibre (an error for the default group).")
      .def("__repr__", [](const ProcessGroup& g) { return "ProcessGroup(" + g.to_string() + ")"; })
      .def("__eq__",
           [](const ProcessGroup& a, nb::handle b) {
             return nb::isinstance<ProcessGroup>(b) && a == nb::cast<const ProcessGroup&>(b);
           })
      .def("__hash__", [](const ProcessGroup& g) { return std::hash<std::string>()(g.to_string()); });

  nb::class_<Work>(py_dist, "Work",
                   "The handle of an async_op=True collective; the simulation completes it at once.")
      .def("wait", &Work::wait, "timeout"_a = nb::none(),
           "Returns True once the collective has completed: at once, since the call already did it.")
      .def("is_completed", &Work::is_completed, "True: the collective completed when it was called.");

  // PyTorch spells these dist.ReduceOp, dist.ProcessGroup.
  py_dist.attr("ReduceOp") = m.attr("ReduceOp");
  py_dist.attr("ProcessGroup") = m.attr("ProcessGroup");
  py_dist.def(
      "new_group", [](std::vector<int> ranks) { return ProcessGroup(std::move(ranks)); }, "ranks"_a,
      "A group of one fibre: group rank i is ranks[i].");
  py_dist.def(
      "get_rank", [] { return to_python(get_rank()); },
      "Inside a mode a ts.LocalInt {r: r} over its ranks; outside, this process's rank (0 in simulation).");
  py_dist.def("get_world_size", &get_world_size, "The size of the calling thread's world.");
  bind_process_group_lifecycle(py_dist);

  const ReduceOp::Kind sum = ReduceOp::SUM;

  py_dist.def(
      "all_reduce",
      [](Tensor& tensor, const ReduceOp& op, nb::handle group, bool async_op) {
        const ProcessGroup g = group_from(group, "ts.dist.all_reduce");
        without_gil([&] { dist::all_reduce(tensor, op, g); });
        return finished(async_op);
      },
      "tensor"_a, "op"_a = sum, "group"_a = nb::none(), "async_op"_a = false,
      "Every member gets op over all members' tensor, in place.");
  py_dist.def(
      "broadcast",
      [](Tensor& tensor, int src, nb::handle group, bool async_op) {
        const ProcessGroup g = group_from(group, "ts.dist.broadcast");
        without_gil([&] { dist::broadcast(tensor, src, g); });
        return finished(async_op);
      },
      "tensor"_a, "src"_a, "group"_a = nb::none(), "async_op"_a = false,
      "Every member gets group rank src's tensor, in place.");
  py_dist.def(
      "reduce",
      [](Tensor& tensor, int dst, const ReduceOp& op, nb::handle group, bool async_op) {
        const ProcessGroup g = group_from(group, "ts.dist.reduce");
        without_gil([&] { dist::reduce(tensor, dst, op, g); });
        return finished(async_op);
      },
      "tensor"_a, "dst"_a, "op"_a = sum, "group"_a = nb::none(), "async_op"_a = false,
      "Group rank dst gets op over all members' tensor; the others keep theirs.");
  py_dist.def(
      "all_gather",
      [](nb::handle tensor_list, const Tensor& tensor, nb::handle group, bool async_op) {
        const char* what = "ts.dist.all_gather";
        const ProcessGroup g = group_from(group, what);
        std::vector<Tensor> outputs = tensors_of(tensor_list, what, "tensor_list");
        without_gil([&] { dist::all_gather(outputs, tensor, g); });
        write_back(tensor_list, outputs, what, "tensor_list");
        return finished(async_op);
      },
      "tensor_list"_a, "tensor"_a, "group"_a = nb::none(), "async_op"_a = false,
      "tensor_list[i] (one per group rank) receives group rank i's tensor, on every member.");
  py_dist.def(
      "all_gather_into_tensor",
      [](Tensor& output_tensor, const Tensor& input_tensor, nb::handle group, bool async_op) {
        const ProcessGroup g = group_from(group, "ts.dist.all_gather_into_tensor");
        without_gil([&] { dist::all_gather_into_tensor(output_tensor, input_tensor, g); });
        return finished(async_op);
      },
      "output_tensor"_a, "input_tensor"_a, "group"_a = nb::none(), "async_op"_a = false,
      "Every member's input_tensor concatenated along dim 0 in group-rank order.");
  py_dist.def(
      "reduce_scatter",
      [](Tensor& output, nb::handle input_list, const ReduceOp& op, nb::handle group, bool async_op) {
        const char* what = "ts.dist.reduce_scatter";
        const ProcessGroup g = group_from(group, what);
        const std::vector<Tensor> inputs = tensors_of(input_list, what, "input_list");
        without_gil([&] { dist::reduce_scatter(output, inputs, op, g); });
        return finished(async_op);
      },
      "output"_a, "input_list"_a, "op"_a = sum, "group"_a = nb::none(), "async_op"_a = false,
      "Group rank i gets op over every member's input_list[i].");
  // PyTorch has both spellings of the one collective.
  for (const char* name : {"reduce_scatter_tensor", "reduce_scatter_single"}) {
    py_dist.def(
        name,
        [name](Tensor& output, const Tensor& input, const ReduceOp& op, nb::handle group, bool async_op) {
          const ProcessGroup g = group_from(group, (std::string("ts.dist.") + name).c_str());
          without_gil([&] { dist::reduce_scatter_tensor(output, input, op, g); });
          return finished(async_op);
        },
        "output"_a, "input"_a, "op"_a = sum, "group"_a = nb::none(), "async_op"_a = false,
        "input's dim 0 is split into one block per group rank; group rank i gets op over block i.");
  }
  py_dist.def(
      "all_to_all",
      [](nb::handle output_tensor_list, nb::handle input_tensor_list, nb::handle group, bool async_op) {
        const char* what = "ts.dist.all_to_all";
        const ProcessGroup g = group_from(group, what);
        std::vector<Tensor> outputs = tensors_of(output_tensor_list, what, "output_tensor_list");
        const std::vector<Tensor> inputs = tensors_of(input_tensor_list, what, "input_tensor_list");
        without_gil([&] { dist::all_to_all(outputs, inputs, g); });
        write_back(output_tensor_list, outputs, what, "output_tensor_list");
        return finished(async_op);
      },
      "output_tensor_list"_a, "input_tensor_list"_a, "group"_a = nb::none(), "async_op"_a = false,
      "Member j's output_tensor_list[i] = member i's input_tensor_list[j].");
  py_dist.def(
      "all_to_all_single",
      [](Tensor& output, const Tensor& input, nb::handle output_split_sizes, nb::handle input_split_sizes,
         nb::handle group, bool async_op) {
        const char* what = "ts.dist.all_to_all_single";
        const ProcessGroup g = group_from(group, what);
        auto splits = [&](nb::handle sizes) {
          std::vector<SymInt> out;
          if (sizes.is_none()) return out;  // equal splits
          for (nb::handle s : sizes) out.push_back(sym_int_from(s));
          return out;
        };
        const std::vector<SymInt> out_splits = splits(output_split_sizes),
                                  in_splits = splits(input_split_sizes);
        without_gil([&] { dist::all_to_all_single(output, input, out_splits, in_splits, g); });
        return finished(async_op);
      },
      "output"_a, "input"_a, "output_split_sizes"_a = nb::none(), "input_split_sizes"_a = nb::none(),
      "group"_a = nb::none(), "async_op"_a = false,
      "Splits along dim 0 (None: equal splits; sizes may be ts.LocalInt); member j's block i comes from "
      "member i.");
  py_dist.def(
      "scatter",
      [](Tensor& tensor, nb::handle scatter_list, int src, nb::handle group, bool async_op) {
        const char* what = "ts.dist.scatter";
        const ProcessGroup g = group_from(group, what);
        const std::vector<Tensor> inputs = tensors_of(scatter_list, what, "scatter_list");
        without_gil([&] { dist::scatter(tensor, inputs, src, g); });
        return finished(async_op);
      },
      "tensor"_a, "scatter_list"_a, "src"_a = 0, "group"_a = nb::none(), "async_op"_a = false,
      "Group rank i receives group rank src's scatter_list[i].");
  py_dist.def(
      "gather",
      [](const Tensor& tensor, nb::handle gather_list, int dst, nb::handle group, bool async_op) {
        const char* what = "ts.dist.gather";
        const ProcessGroup g = group_from(group, what);
        std::vector<Tensor> outputs = tensors_of(gather_list, what, "gather_list");
        without_gil([&] { dist::gather(outputs, tensor, dst, g); });
        write_back(gather_list, outputs, what, "gather_list");
        return finished(async_op);
      },
      "tensor"_a, "gather_list"_a, "dst"_a = 0, "group"_a = nb::none(), "async_op"_a = false,
      "Group rank dst's gather_list[i] receives group rank i's tensor; other ranks' entries are unchanged.");
  py_dist.def(
      "barrier",
      [](nb::handle group, bool async_op, nb::handle /*device_ids*/, std::optional<Tensor> participants) {
        const ProcessGroup g = group_from(group, "ts.dist.barrier");
        without_gil([&] { dist::barrier(participants ? *participants : mode_participants(), g); });
        return finished(async_op);
      },
      "group"_a = nb::none(), "async_op"_a = false, "device_ids"_a = nb::none(),
      "participants"_a = nb::none(),
      "No data; orders the ranks (and marks a point in traces). The participants are the active mode's ranks "
      "unless given (a local tensor over them).");

  py_dist.def(
      "send",
      [](const Tensor& tensor, nb::handle dst, int tag) {
        const SymInt peer = sym_int_from(dst);
        without_gil([&] { dist::send(tensor, peer, tag); });
      },
      "tensor"_a, "dst"_a, "tag"_a = 0,
      "Each rank sends its shard to global rank dst (a ts.LocalInt when it differs; -1: this rank sends "
      "nothing); "
      "in a rank's program (ts.spawn), its own tensor.");
  py_dist.def(
      "recv",
      [](Tensor& tensor, nb::handle src, int tag) {
        const SymInt peer = sym_int_from(src);
        without_gil([&] { dist::recv(tensor, peer, tag); });
      },
      "tensor"_a, "src"_a, "tag"_a = 0,
      "Each rank receives into its shard the oldest message from global rank src with this tag (-1: receives "
      "nothing); in a rank's program, waits for it.");
  bind_p2p(py_dist);
  py_dist.def(
      "check_messages", [] { without_gil([] { dist::check_messages(); }); },
      "Raises ts.Error if a sent message was never received (and drops such messages).");

  py_dist.def(
      "set_algorithms", &dist::set_algorithms, "rules"_a,
      "Which algorithm computes each collective, e.g. \"all_reduce:ring;all_gather[0-64K]:rd;*:direct\".");
  py_dist.def("algorithms", &dist::algorithms, "The algorithm rules in force.");
  py_dist.def("algorithm_names", &dist::algorithm_names, "Every loaded algorithm.");
  py_dist.def("algorithm_for", &dist::algorithm_for, "collective"_a, "group_size"_a, "bytes"_a,
              "The algorithm the rules pick for a collective over group_size ranks moving `bytes` per rank.");
  py_dist.def(
      "verify_schedule",
      [](const std::string& algorithm, const std::string& collective, int group_size, int64_t count, int root,
         const ReduceOp& op, const std::vector<int>& ring_order) {
        return without_gil([&] {
          return dist::verify_schedule(algorithm, collective, group_size, count, root, op, ring_order);
        });
      },
      "algorithm"_a, "collective"_a, "group_size"_a, "count"_a, "root"_a = 0, "op"_a = sum,
      "ring_order"_a = std::vector<int>(),
      "Builds and symbolically verifies an algorithm's schedule; returns '' when valid, else what is wrong.");
}

}  // namespace tessera::python

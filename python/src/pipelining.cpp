// ts.distributed.pipelining (PyTorch: torch.distributed.pipelining): PipelineStage and the
// schedules (ScheduleGPipe, Schedule1F1B, ScheduleInterleaved1F1B, ScheduleInterleavedZeroBubble,
// ScheduleZBVZeroBubble), run inside rank programs (ts.spawn). A step runs without the GIL; the
// stage's module and the loss function are Python callables, called back with the running rank's
// GIL (rank_gil.hpp).
#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "nn_values.hpp"
#include "rank_gil.hpp"

namespace tessera::python {
namespace {

namespace pp = tessera::pipelining;

// A Python object shared by the copies of a stage's or a schedule's std::function. Copies are made
// and dropped by the bound constructors and destructors, which run with the GIL held (a step only
// reads them), so the last reference goes with the GIL held.
std::shared_ptr<nb::object> shared_object(nb::handle object) {
  return std::make_shared<nb::object>(nb::borrow(object));
}

// Runs a callback's Python with the GIL; a Python exception becomes a ts.Error naming `what` (it
// cannot cross the library's step as itself: other ranks may be waiting on this one).
template <class Body>
auto call_python(const char* what, Body&& body) {
  const CallbackGil gil;
  try {
    return body();
  } catch (nb::python_error& e) {
    const std::string text = nb::cast<std::string>(nb::repr(e.value()));
    e.restore();
    PyErr_Clear();
    throw Error(std::string(what) + " raised " + text);
  }
}

pp::PipelineStage make_stage(nb::handle submodule, int stage_index, int num_stages, nb::handle group) {
  // The stage owns the module through the Python object (released with the GIL held, as the
  // stage is); nanobind's own shared_ptr would release it through PyGILState, which inside
  // ts.spawn before Python 3.12 waits for the GIL the rank holds.
  auto callable = shared_object(submodule);
  std::shared_ptr<nn::Module> module(callable, &nb::cast<nn::Module&>(submodule));
  pp::PipelineStage::Forward forward = [callable](const nn::Value& x) {
    return call_python("the pipeline stage's module", [&] {
      nb::object out = (*callable)(to_python(x));
      nn::Value value;
      if (!nb::try_cast(out, value) || !value.defined())
        throw Error("the pipeline stage's module returned " + describe(out) +
                    "; expected a ts.Tensor or ts.DTensor");
      return value;
    });
  };
  ProcessGroup g = group.is_none() ? ProcessGroup() : nb::cast<ProcessGroup>(group);
  return pp::PipelineStage(std::move(module), std::move(forward), stage_index, num_stages, std::move(g));
}

pp::LossFn loss_fn_from(nb::handle loss_fn) {
  if (loss_fn.is_none()) return {};
  auto callable = shared_object(loss_fn);
  return [callable](const Tensor& output, const Tensor& target) {
    return call_python("loss_fn", [&] {
      nb::object loss = (*callable)(output, target);
      if (!nb::isinstance<Tensor>(loss))
        throw Error("loss_fn returned " + describe(loss) + "; expected a ts.Tensor (the micro-batch's loss)");
      return nb::cast<Tensor>(loss);
    });
  };
}

std::vector<pp::PipelineStage> stages_from(nb::handle stages, const char* what) {
  std::vector<pp::PipelineStage> out;
  if (!nb::try_cast(stages, out) || out.empty())
    throw nb::type_error(
        (std::string(what) + ": stages must be a non-empty list of PipelineStage, got " + describe(stages))
            .c_str());
  return out;
}

std::vector<std::string> action_texts(const std::vector<pp::Action>& actions) {
  std::vector<std::string> out;
  for (const pp::Action& a : actions) out.push_back(a.to_string());
  return out;
}

// step(*args, target=None, losses=None): x on the first stage's rank, target and a list to append
// each micro-batch's loss to on the last stage's; returns the outputs on the last, else None.
template <class Schedule>
nb::object step_of(Schedule& schedule, nb::args args, nb::handle target, nb::handle losses) {
  if (args.size() > 1)
    throw nb::type_error(
        ("step: takes the batch as its one positional argument, got " + std::to_string(args.size())).c_str());
  const Tensor x = args.size() == 1 ? nb::cast<Tensor>(args[0]) : Tensor();
  const Tensor y = target.is_none() ? Tensor() : nb::cast<Tensor>(target);
  if (!losses.is_none() && !PyList_Check(losses.ptr()))
    throw nb::type_error(("step: losses must be a list to append to, got " + describe(losses)).c_str());
  std::vector<Tensor> micro_losses;
  const Tensor out =
      without_gil([&] { return schedule.step(x, y, losses.is_none() ? nullptr : &micro_losses); });
  if (!losses.is_none())
    for (const Tensor& l : micro_losses) nb::borrow<nb::list>(losses).append(nb::cast(l));
  return out.defined() ? nb::cast(out) : nb::none();
}

template <class Cls>
void def_schedule_common(Cls& cls) {
  using Schedule = typename Cls::Type;
  cls.def("step", &step_of<Schedule>, nb::arg("args"), nb::kw_only(), nb::arg("target") = nb::none(),
          nb::arg("losses") = nb::none(),
          "One step: step(x) on the first stage's rank, step(target=y, losses=list) on the last (returns the "
          "outputs joined along dim 0), step() elsewhere. Gradients are left in the parameters' grad.")
      .def(
          "actions", [](const Schedule& s, int rank) { return action_texts(s.actions(rank)); },
          nb::arg("rank"), "Rank's actions in PyTorch's spelling ('0F1', '1RECV_F0', ...).")
      .def("table", &Schedule::table,
           "The plan as PyTorch prints a pipeline order: steps down, ranks across.")
      .def(
          "bubble_fraction", [](const Schedule& s) { return s.bubble_fraction(); },
          "The share of rank-time idle under unit costs.");
}

}  // namespace

void bind_pipelining(nb::module_& m) {
  nb::module_ p = m.def_submodule("pipelining", "Pipeline parallelism inside rank programs (ts.spawn).");
  nb::class_<pp::PipelineStage>(p, "PipelineStage", "One stage of the pipeline on the calling rank.")
      .def(
          "__init__",
          [](pp::PipelineStage* self, nb::handle submodule, int stage_index, int num_stages,
             nb::handle group) {
            new (self) pp::PipelineStage(make_stage(submodule, stage_index, num_stages, group));
          },
          nb::arg("submodule"), nb::arg("stage_index"), nb::arg("num_stages"), nb::kw_only(),
          nb::arg("group") = nb::none(),
          "submodule: the stage's module (called on each micro-batch); group: the pipeline's ranks (default "
          "the "
          "whole world).")
      .def_prop_ro("stage_index", &pp::PipelineStage::stage_index)
      .def_prop_ro("num_stages", &pp::PipelineStage::num_stages)
      .def_prop_ro("is_first", &pp::PipelineStage::is_first)
      .def_prop_ro("is_last", &pp::PipelineStage::is_last);

  nb::class_<pp::ScheduleGPipe> gpipe(p, "ScheduleGPipe", "All forwards, then all backwards.");
  gpipe.def(
      "__init__",
      [](pp::ScheduleGPipe* self, pp::PipelineStage& stage, int n_microbatches, nb::handle loss_fn) {
        new (self) pp::ScheduleGPipe(stage, n_microbatches, loss_fn_from(loss_fn));
      },
      nb::arg("stage"), nb::arg("n_microbatches"), nb::arg("loss_fn") = nb::none(), nb::keep_alive<1, 2>(),
      "loss_fn(output, target) -> the micro-batch's loss, on the last stage.");
  def_schedule_common(gpipe);
  nb::class_<pp::Schedule1F1B> one_f_one_b(
      p, "Schedule1F1B", "Warm-up forwards, then one backward and one forward alternately.");
  one_f_one_b.def(
      "__init__",
      [](pp::Schedule1F1B* self, pp::PipelineStage& stage, int n_microbatches, nb::handle loss_fn) {
        new (self) pp::Schedule1F1B(stage, n_microbatches, loss_fn_from(loss_fn));
      },
      nb::arg("stage"), nb::arg("n_microbatches"), nb::arg("loss_fn") = nb::none(), nb::keep_alive<1, 2>(),
      "Needs n_microbatches >= the number of stages.");
  def_schedule_common(one_f_one_b);

  nb::class_<pp::ScheduleInterleaved1F1B> interleaved(p, "ScheduleInterleaved1F1B",
                                                      "Interleaved 1F1B: several stages per rank in a loop.");
  interleaved.def(
      "__init__",
      [](pp::ScheduleInterleaved1F1B* self, nb::handle stages, int n_microbatches, nb::handle loss_fn) {
        new (self) pp::ScheduleInterleaved1F1B(stages_from(stages, "ScheduleInterleaved1F1B"), n_microbatches,
                                               loss_fn_from(loss_fn));
      },
      nb::arg("stages"), nb::arg("n_microbatches"), nb::arg("loss_fn") = nb::none(),
      "stages: the stages this rank holds (stage s on rank s % ranks).");
  def_schedule_common(interleaved);
  nb::class_<pp::ScheduleInterleavedZeroBubble> zb(p, "ScheduleInterleavedZeroBubble",
                                                   "Interleaved zero bubble: backwards split into I and W.");
  zb.def(
      "__init__",
      [](pp::ScheduleInterleavedZeroBubble* self, nb::handle stages, int n_microbatches, nb::handle loss_fn) {
        new (self) pp::ScheduleInterleavedZeroBubble(stages_from(stages, "ScheduleInterleavedZeroBubble"),
                                                     n_microbatches, loss_fn_from(loss_fn));
      },
      nb::arg("stages"), nb::arg("n_microbatches"), nb::arg("loss_fn") = nb::none(),
      "stages: the stages this rank holds.");
  def_schedule_common(zb);
  nb::class_<pp::ScheduleZBVZeroBubble> zbv(
      p, "ScheduleZBVZeroBubble", "Zero bubble in a V: two stages per rank, the first and last on rank 0.");
  zbv.def(
      "__init__",
      [](pp::ScheduleZBVZeroBubble* self, nb::handle stages, int n_microbatches, nb::handle loss_fn) {
        new (self) pp::ScheduleZBVZeroBubble(stages_from(stages, "ScheduleZBVZeroBubble"), n_microbatches,
                                             loss_fn_from(loss_fn));
      },
      nb::arg("stages"), nb::arg("n_microbatches"), nb::arg("loss_fn") = nb::none(),
      "stages: this rank's two stages (s and 2 * ranks - 1 - s).");
  def_schedule_common(zbv);
}

}  // namespace tessera::python

// ts.optim (PyTorch: torch.optim): SGD and AdamW over module.parameters() (or tensors, or
// DTensors), and ts.optim.lr_scheduler: LinearLR, CosineAnnealingLR, LambdaLR, SequentialLR.
// A scheduler keeps its optimizer alive; a step may run collectives (DTensor state), so it runs
// without the GIL.
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>

#include "nn_values.hpp"

namespace tessera::python {
namespace {

using optim::Optimizer;
namespace sched = optim::lr_scheduler;

void bind_schedulers(nb::module_& optim) {
  nb::module_ s =
      optim.def_submodule("lr_scheduler", "ts.optim.lr_scheduler (PyTorch: torch.optim.lr_scheduler).");
  nb::class_<sched::LRScheduler>(s, "LRScheduler", "The base of the learning-rate schedulers.")
      .def(
          "step", [](sched::LRScheduler& self) { self.step(); }, "Advances one epoch and writes its lr.")
      .def("get_last_lr", &sched::LRScheduler::get_last_lr,
           "The lr written last (one entry per parameter group).")
      .def_prop_ro("last_epoch", &sched::LRScheduler::last_epoch)
      .def_prop_ro("base_lrs", &sched::LRScheduler::base_lrs)
      .def_prop_ro("optimizer", &sched::LRScheduler::optimizer, nb::rv_policy::reference_internal);

  nb::class_<sched::LinearLR, sched::LRScheduler>(
      s, "LinearLR",
      "Scales the initial lr by a factor going linearly from start_factor "
      "to end_factor over total_iters epochs.")
      .def(
          "__init__",
          [](sched::LinearLR* self, Optimizer& optimizer, double start_factor, double end_factor,
             int64_t total_iters) {
            new (self) sched::LinearLR(optimizer, {start_factor, end_factor, total_iters});
          },
          nb::arg("optimizer"), nb::arg("start_factor") = 1.0 / 3, nb::arg("end_factor") = 1.0,
          nb::arg("total_iters") = 5, nb::keep_alive<1, 2>(), "PyTorch's defaults.");
  nb::class_<sched::CosineAnnealingLR, sched::LRScheduler>(
      s, "CosineAnnealingLR", "eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.")
      .def(nb::init<Optimizer&, int64_t, double>(), nb::arg("optimizer"), nb::arg("T_max"),
           nb::arg("eta_min") = 0.0, nb::keep_alive<1, 2>(), "T_max >= 1, eta_min >= 0.");
  nb::class_<sched::LambdaLR, sched::LRScheduler>(s, "LambdaLR", "lr = base_lr * lr_lambda(epoch).")
      .def(
          "__init__",
          [](sched::LambdaLR* self, Optimizer& optimizer, nb::callable lr_lambda) {
            // Called from step() and the constructor, which run with the GIL held (LRScheduler.step
            // does not release it), so no acquire here: inside ts.spawn, before Python 3.12, one
            // would wait for the GIL the rank holds.
            new (self) sched::LambdaLR(
                optimizer, [lr_lambda](int64_t epoch) { return nb::cast<double>(lr_lambda(epoch)); });
          },
          nb::arg("optimizer"), nb::arg("lr_lambda"), nb::keep_alive<1, 2>(), "lr_lambda(epoch) -> factor.");
}

template <class Cls>
void def_optimizer_common(Cls& cls) {
  cls.def(
         "step", [](Optimizer& self) { without_gil([&] { self.step(); }); },
         "Updates every parameter with a grad.")
      .def("zero_grad", &Optimizer::zero_grad, nb::arg("set_to_none") = true,
           "Clears every parameter's gradient (set_to_none=False zeroes it).")
      .def_prop_rw("lr", &Optimizer::lr, &Optimizer::set_lr, "The learning rate (param_groups[0]['lr']).")
      .def_prop_ro(
          "param_groups",
          [](const Optimizer& self) {
            nb::dict group;
            group["lr"] = self.lr();
            group["initial_lr"] = self.initial_lr();
            group["params"] = nb::cast(self.params());
            nb::list groups;
            groups.append(group);
            return groups;
          },
          "One group's settings, read-only (lr and initial_lr; set lr through .lr or a scheduler).");
}

}  // namespace

void bind_optim(nb::module_& m) {
  nb::module_ optim = m.def_submodule("optim", "ts.optim (PyTorch: torch.optim): SGD and AdamW.");
  nb::class_<Optimizer>(optim, "Optimizer", "The base of the optimizers.");

  nb::class_<optim::SGD, Optimizer> sgd(optim, "SGD",
                                        "Stochastic gradient descent with PyTorch's update rule.");
  sgd.def(
      "__init__",
      [](optim::SGD* self, nb::handle params, double lr, double momentum, double dampening,
         double weight_decay, bool nesterov, bool maximize) {
        new (self) optim::SGD(parameters_from(params, "SGD"),
                              {lr, momentum, dampening, weight_decay, nesterov, maximize});
      },
      nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("momentum") = 0.0, nb::arg("dampening") = 0.0,
      nb::arg("weight_decay") = 0.0, nb::arg("nesterov") = false, nb::kw_only(), nb::arg("maximize") = false,
      "params: module.parameters(), or tensors or DTensors.");
  def_optimizer_common(sgd);

  nb::class_<optim::AdamW, Optimizer> adamw(optim, "AdamW",
                                            "Adam with decoupled weight decay (PyTorch's formulas).");
  adamw.def(
      "__init__",
      [](optim::AdamW* self, nb::handle params, double lr, std::pair<double, double> betas, double eps,
         double weight_decay, bool amsgrad, bool maximize) {
        new (self)
            optim::AdamW(parameters_from(params, "AdamW"), {lr, betas, eps, weight_decay, amsgrad, maximize});
      },
      nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = std::pair<double, double>(0.9, 0.999),
      nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 1e-2, nb::arg("amsgrad") = false, nb::kw_only(),
      nb::arg("maximize") = false, "params: module.parameters(), or tensors or DTensors.");
  def_optimizer_common(adamw);

  bind_schedulers(optim);
}

}  // namespace tessera::python

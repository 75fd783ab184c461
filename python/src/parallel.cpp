// Tensor, sequence and data parallelism with PyTorch's module paths and keyword names:
// ts.distributed.tensor.parallel (ColwiseParallel, RowwiseParallel, SequenceParallel,
// PrepareModuleInput, PrepareModuleOutput, parallelize_module, loss_parallel),
// ts.distributed.fsdp (fully_shard, MixedPrecisionPolicy) and
// ts.distributed._composable.replicate. A plan is a dict of dotted module paths ('*' matches one
// name) to styles, applied in the dict's order.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "nn_values.hpp"

namespace tessera::python {
namespace {

// PrepareModuleInput's layouts: one placement (or None) per input, or a single placement for a
// module with one input.
std::vector<std::optional<Placement>> layouts_from(nb::handle layouts, const char* what) {
  if (layouts.is_none()) return {};
  if (nb::isinstance<Placement>(layouts)) return {nb::cast<Placement>(layouts)};
  std::vector<std::optional<Placement>> out;
  if (!nb::try_cast(layouts, out))
    throw nb::type_error((std::string(what) +
                          ": expected a placement or a sequence of placements (None for an "
                          "input left as it is), got " +
                          describe(layouts))
                             .c_str());
  return out;
}

ParallelizePlan plan_from(nb::handle plan) {
  ParallelStyle style;
  if (nb::try_cast(plan, style)) return {{"", style}};
  if (!nb::isinstance<nb::dict>(plan))
    throw nb::type_error(
        ("parallelize_module: parallelize_plan must be a parallel style or a dict of module paths "
         "to styles, got " +
         describe(plan))
            .c_str());
  ParallelizePlan out;
  for (auto [key, value] : nb::cast<nb::dict>(plan)) {
    if (!nb::isinstance<nb::str>(key))
      throw nb::type_error(
          ("parallelize_module: plan keys must be module paths (str), got " + describe(key)).c_str());
    if (!nb::try_cast(value, style))
      throw nb::type_error(("parallelize_module: the plan's value for '" + nb::cast<std::string>(key) +
                            "' must be a parallel style (ColwiseParallel(), ...), got " + describe(value))
                               .c_str());
    out.emplace_back(nb::cast<std::string>(key), style);
  }
  return out;
}

nb::dict to_python(const ParallelizePlan& plan) {
  nb::dict out;
  for (const auto& [path, style] : plan) out[nb::str(path.c_str(), path.size())] = nb::cast(style);
  return out;
}

// `with loss_parallel():` (PyTorch: torch.distributed.tensor.parallel.loss_parallel).
struct LossParallelScope {
  bool previous = false;
};

void bind_styles(nb::module_& p) {
  nb::class_<ColwiseParallel>(
      p, "ColwiseParallel",
      "Linear: weight and bias Shard(0); Embedding: weight Shard(1). Input Replicate, output "
      "Shard(-1) by default.")
      .def(
          "__init__",
          [](ColwiseParallel* self, std::optional<Placement> input_layouts,
             std::optional<Placement> output_layouts, bool use_local_output) {
            new (self) ColwiseParallel{input_layouts, output_layouts, use_local_output};
          },
          nb::kw_only(), nb::arg("input_layouts") = nb::none(), nb::arg("output_layouts") = nb::none(),
          nb::arg("use_local_output") = true, "PyTorch's keywords and defaults.")
      .def_rw("input_layouts", &ColwiseParallel::input_layouts)
      .def_rw("output_layouts", &ColwiseParallel::output_layouts)
      .def_rw("use_local_output", &ColwiseParallel::use_local_output);
  nb::class_<RowwiseParallel>(
      p, "RowwiseParallel",
      "Linear: weight Shard(1), bias Replicate; Embedding: weight Shard(0). Input Shard(-1) "
      "(Linear) or Replicate (Embedding), output Replicate by default.")
      .def(
          "__init__",
          [](RowwiseParallel* self, std::optional<Placement> input_layouts,
             std::optional<Placement> output_layouts, bool use_local_output) {
            new (self) RowwiseParallel{input_layouts, output_layouts, use_local_output};
          },
          nb::kw_only(), nb::arg("input_layouts") = nb::none(), nb::arg("output_layouts") = nb::none(),
          nb::arg("use_local_output") = true, "PyTorch's keywords and defaults.")
      .def_rw("input_layouts", &RowwiseParallel::input_layouts)
      .def_rw("output_layouts", &RowwiseParallel::output_layouts)
      .def_rw("use_local_output", &RowwiseParallel::use_local_output);
  nb::class_<SequenceParallel>(
      p, "SequenceParallel",
      "For modules acting on each position alone (norms, dropout): parameters Replicate, "
      "input sharded on the sequence dim, no communication.")
      .def(
          "__init__",
          [](SequenceParallel* self, int64_t sequence_dim, bool use_local_output) {
            new (self) SequenceParallel{sequence_dim, use_local_output};
          },
          nb::kw_only(), nb::arg("sequence_dim") = 1, nb::arg("use_local_output") = false,
          "PyTorch's keywords and defaults.")
      .def_rw("sequence_dim", &SequenceParallel::sequence_dim)
      .def_rw("use_local_output", &SequenceParallel::use_local_output);
  nb::class_<PrepareModuleInput>(
      p, "PrepareModuleInput", "Redistributes a module's inputs from input_layouts to desired_input_layouts.")
      .def(
          "__init__",
          [](PrepareModuleInput* self, nb::handle input_layouts, nb::handle desired_input_layouts,
             bool use_local_output) {
            new (self) PrepareModuleInput{
                layouts_from(input_layouts, "PrepareModuleInput(input_layouts=)"),
                layouts_from(desired_input_layouts, "PrepareModuleInput(desired_input_layouts=)"),
                use_local_output};
          },
          nb::kw_only(), nb::arg("input_layouts") = nb::none(), nb::arg("desired_input_layouts") = nb::none(),
          nb::arg("use_local_output") = false, "One placement (or None: left as it is) per input.")
      .def_ro("input_layouts", &PrepareModuleInput::input_layouts)
      .def_ro("desired_input_layouts", &PrepareModuleInput::desired_input_layouts)
      .def_ro("use_local_output", &PrepareModuleInput::use_local_output);
  nb::class_<PrepareModuleOutput>(
      p, "PrepareModuleOutput",
      "Redistributes a module's output from output_layouts to desired_output_layouts.")
      .def(
          "__init__",
          [](PrepareModuleOutput* self, std::optional<Placement> output_layouts,
             std::optional<Placement> desired_output_layouts, bool use_local_output) {
            new (self) PrepareModuleOutput{output_layouts, desired_output_layouts, use_local_output};
          },
          nb::kw_only(), nb::arg("output_layouts") = nb::none(),
          nb::arg("desired_output_layouts") = nb::none(), nb::arg("use_local_output") = true,
          "PyTorch's keywords and defaults.")
      .def_ro("output_layouts", &PrepareModuleOutput::output_layouts)
      .def_ro("desired_output_layouts", &PrepareModuleOutput::desired_output_layouts)
      .def_ro("use_local_output", &PrepareModuleOutput::use_local_output);
}

}  // namespace

void bind_parallel(nb::module_& m) {
  nb::module_ p = m.def_submodule("parallel", "Tensor, sequence and data parallelism of modules.");
  bind_styles(p);
  p.def(
      "parallelize_module",
      [](nb::handle module, const DeviceMesh& device_mesh, nb::handle parallelize_plan) {
        nn::Module& target = nb::cast<nn::Module&>(module);
        const ParallelizePlan plan = plan_from(parallelize_plan);
        without_gil([&] {
          if (plan.size() == 1 && plan.front().first.empty()) {
            parallelize_module(target, device_mesh, plan.front().second);
          } else {
            parallelize_module(target, device_mesh, plan);
          }
        });
        return nb::borrow(module);
      },
      nb::arg("module"), nb::arg("device_mesh"), nb::arg("parallelize_plan"),
      "Applies a style, or a dict of dotted module paths ('layers.*.attention.wq') to styles, on a 1-d mesh "
      "(mesh['tp']); returns the module.");
  p.def(
      "transformer_tp_plan", [](bool loss_parallel) { return to_python(transformer_tp_plan(loss_parallel)); },
      nb::arg("loss_parallel") = true,
      "torchtitan's tensor- and sequence-parallel plan of ts.models.Transformer, as a dict.");

  nb::class_<LossParallelScope>(
      p, "loss_parallel",
      "with loss_parallel(): cross_entropy takes logits sharded on the class dim without "
      "gathering them.")
      .def(nb::init<>(), "Enabled inside the with block.")
      .def("__enter__",
           [](LossParallelScope& scope) {
             scope.previous = tessera::loss_parallel();
             set_loss_parallel(true);
           })
      .def("__exit__", [](LossParallelScope& scope, nb::args) { set_loss_parallel(scope.previous); });

  nb::class_<MixedPrecisionPolicy>(
      p, "MixedPrecisionPolicy",
      "FSDP's dtypes: param_dtype for gathered parameters, reduce_dtype for gradients.")
      .def(
          "__init__",
          [](MixedPrecisionPolicy* self, std::optional<DType> param_dtype,
             std::optional<DType> reduce_dtype) {
            new (self) MixedPrecisionPolicy{param_dtype, reduce_dtype};
          },
          nb::arg("param_dtype") = nb::none(), nb::arg("reduce_dtype") = nb::none(),
          "None keeps the parameters' dtype.")
      .def_rw("param_dtype", &MixedPrecisionPolicy::param_dtype)
      .def_rw("reduce_dtype", &MixedPrecisionPolicy::reduce_dtype);
  p.def(
      "fully_shard",
      [](nb::handle module, const DeviceMesh& mesh, bool reshard_after_forward,
         const MixedPrecisionPolicy& mp_policy) {
        nn::Module& target = nb::cast<nn::Module&>(module);
        const FullyShardOptions options{mesh, reshard_after_forward, mp_policy};
        without_gil([&] { fully_shard(target, options); });
        return nb::borrow(module);
      },
      nb::arg("module"), nb::kw_only(), nb::arg("mesh"), nb::arg("reshard_after_forward") = true,
      nb::arg("mp_policy") = MixedPrecisionPolicy{},
      "FSDP2: shards the module's parameters over the 1-d data-parallel mesh (Shard(0)); gathers them around "
      "forward and backward and reduce-scatters the gradients. Apply to each block, then the root.");
  p.def(
      "replicate",
      [](nb::handle module, const DeviceMesh& device_mesh, double bucket_cap_mb) {
        nn::Module& target = nb::cast<nn::Module&>(module);
        const ReplicateOptions options{device_mesh, bucket_cap_mb};
        without_gil([&] { replicate(target, options); });
        return nb::borrow(module);
      },
      nb::arg("module"), nb::kw_only(), nb::arg("device_mesh"), nb::arg("bucket_cap_mb") = 25.0,
      "DDP: every rank keeps the whole module; backward averages each gradient over the mesh in buckets.");
}

}  // namespace tessera::python

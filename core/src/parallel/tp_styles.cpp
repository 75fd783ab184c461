// ColwiseParallel, RowwiseParallel, SequenceParallel, PrepareModuleInput and PrepareModuleOutput:
// each lays out parameters once and installs forward hooks that lay out inputs and outputs.
#include "parallel/tp_styles.hpp"

#include <fmt/format.h>

#include "parallel/layouts.hpp"
#include "tessera/errors.hpp"
#include "tessera/nn/modules.hpp"

namespace tessera::parallel {
namespace {

// The output redistributed to `desired` when its placement differs (PyTorch compares the
// output's actual placements here).
DTensor output_as(const DTensor& output, const Placement& desired) {
  return lay_out(output, output.placements().at(0), desired);
}

DTensor require_dtensor_output(const nn::Value& output, const std::string& where) {
  if (!output.is_dtensor())
    throw Error(fmt::format("{}: the module returned a {}; the style expects the DTensor its parameters make",
                            where, output.kind()));
  return output.dtensor();
}

// Hooks that lay out input 0 as (given -> desired) and the output as `output_layout`.
void install_linear_hooks(nn::Module& module, const DeviceMesh& mesh, const Placement& given,
                          const Placement& desired, const Placement& output_layout, bool use_local_output,
                          const std::string& where) {
  module.register_forward_pre_hook([=](nn::Module&, std::vector<nn::Value>& inputs) {
    if (inputs.empty()) throw Error(fmt::format("{}: the module's forward got no input", where));
    inputs[0] = lay_out(as_dtensor(inputs[0], mesh, given, where), given, desired);
  });
  module.register_forward_hook([=](nn::Module&, const std::vector<nn::Value>&, nn::Value& output) {
    output = finish(output_as(require_dtensor_output(output, where), output_layout), use_local_output);
  });
}

[[noreturn]] void unsupported_module(const nn::Module& module, const std::string& where) {
  throw Error(fmt::format("{}: the module is a {}; this style applies to Linear and Embedding modules", where,
                          module.name()));
}

}  // namespace

void apply_style(nn::Module& module, const DeviceMesh& mesh, const ColwiseParallel& style,
                 const std::string& where) {
  if (auto* linear = dynamic_cast<nn::LinearImpl*>(&module)) {
    distribute_parameter(linear->weight, mesh, Shard(0), where + " (weight)");
    if (linear->bias.defined()) distribute_parameter(linear->bias, mesh, Shard(0), where + " (bias)");
  } else if (auto* embedding = dynamic_cast<nn::EmbeddingImpl*>(&module)) {
    distribute_parameter(embedding->weight, mesh, Shard(1), where + " (weight)");
  } else {
    unsupported_module(module, where);
  }
  install_linear_hooks(module, mesh, style.input_layouts.value_or(Replicate()), Replicate(),
                       style.output_layouts.value_or(Shard(-1)), style.use_local_output, where);
}

void apply_style(nn::Module& module, const DeviceMesh& mesh, const RowwiseParallel& style,
                 const std::string& where) {
  Placement desired = Shard(-1);
  if (auto* linear = dynamic_cast<nn::LinearImpl*>(&module)) {
    distribute_parameter(linear->weight, mesh, Shard(1), where + " (weight)");
    if (linear->bias.defined()) distribute_parameter(linear->bias, mesh, Replicate(), where + " (bias)");
  } else if (auto* embedding = dynamic_cast<nn::EmbeddingImpl*>(&module)) {
    distribute_parameter(embedding->weight, mesh, Shard(0), where + " (weight)");
    desired = Replicate();  // every rank looks up every index in the rows it holds
  } else {
    unsupported_module(module, where);
  }
  install_linear_hooks(module, mesh, style.input_layouts.value_or(desired), desired,
                       style.output_layouts.value_or(Replicate()), style.use_local_output, where);
}

void apply_style(nn::Module& module, const DeviceMesh& mesh, const SequenceParallel& style,
                 const std::string& where) {
  for (const auto& [name, parameter] : module.named_parameters())
    distribute_parameter(parameter, mesh, Replicate(), where + " (" + name + ")");
  const Placement layout = Shard(style.sequence_dim);
  module.register_forward_pre_hook([=](nn::Module&, std::vector<nn::Value>& inputs) {
    if (inputs.empty()) throw Error(fmt::format("{}: the module's forward got no input", where));
    inputs[0] = as_dtensor(inputs[0], mesh, layout, where);
  });
  module.register_forward_hook([=](nn::Module&, const std::vector<nn::Value>&, nn::Value& output) {
    output = finish(require_dtensor_output(output, where), style.use_local_output);
  });
}

void apply_style(nn::Module& module, const DeviceMesh& mesh, const PrepareModuleInput& style,
                 const std::string& where) {
  if (style.input_layouts.size() != style.desired_input_layouts.size())
    throw Error(
        fmt::format("{}: input_layouts has {} entries but desired_input_layouts has {}; give one of each "
                    "per input",
                    where, style.input_layouts.size(), style.desired_input_layouts.size()));
  module.register_forward_pre_hook([=](nn::Module&, std::vector<nn::Value>& inputs) {
    if (inputs.size() != style.input_layouts.size())
      throw Error(fmt::format("{}: the module's forward got {} inputs but input_layouts names {}", where,
                              inputs.size(), style.input_layouts.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto& given = style.input_layouts[i];
      const auto& desired = style.desired_input_layouts[i];
      if (!given) continue;
      if (!desired)
        throw Error(
            fmt::format("{}: input {} has a layout but no desired layout; give both or neither", where, i));
      inputs[i] = finish(lay_out(as_dtensor(inputs[i], mesh, *given, where), *given, *desired),
                         style.use_local_output);
    }
  });
}

void apply_style(nn::Module& module, const DeviceMesh& mesh, const PrepareModuleOutput& style,
                 const std::string& where) {
  if (!style.output_layouts || !style.desired_output_layouts)
    throw Error(fmt::format("{}: give both output_layouts and desired_output_layouts", where));
  module.register_forward_hook([=](nn::Module&, const std::vector<nn::Value>&, nn::Value& output) {
    const DTensor given = as_dtensor(output, mesh, *style.output_layouts, where);
    output =
        finish(lay_out(given, *style.output_layouts, *style.desired_output_layouts), style.use_local_output);
  });
}

}  // namespace tessera::parallel

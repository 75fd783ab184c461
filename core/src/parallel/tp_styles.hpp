// Applying one parallel style to one module: its parameters become DTensors and its forward
// hooks lay out inputs and outputs. `where` names the module path and style in error messages.
#pragma once

#include <string>

#include "tessera/parallel/style.hpp"

namespace tessera::parallel {

void apply_style(nn::Module& module, const DeviceMesh& mesh, const ColwiseParallel& style,
                 const std::string& where);
void apply_style(nn::Module& module, const DeviceMesh& mesh, const RowwiseParallel& style,
                 const std::string& where);
void apply_style(nn::Module& module, const DeviceMesh& mesh, const SequenceParallel& style,
                 const std::string& where);
void apply_style(nn::Module& module, const DeviceMesh& mesh, const PrepareModuleInput& style,
                 const std::string& where);
void apply_style(nn::Module& module, const DeviceMesh& mesh, const PrepareModuleOutput& style,
                 const std::string& where);

}  // namespace tessera::parallel

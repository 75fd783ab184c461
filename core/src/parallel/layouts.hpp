// What the parallel styles share: wrapping a module's values as DTensors on the tensor-parallel
// mesh, laying them out, and turning parameters into DTensors.
#pragma once

#include <string>

#include "tessera/device_mesh.hpp"
#include "tessera/dtensor.hpp"
#include "tessera/nn/parameter.hpp"
#include "tessera/nn/value.hpp"

namespace tessera::parallel {

// A plain (local) tensor is wrapped as the DTensor each rank's value is a shard of (`given`); a
// DTensor is taken as it is, as PyTorch's styles do. `where` names the module and style for errors.
DTensor as_dtensor(const nn::Value& value, const DeviceMesh& mesh, const Placement& given,
                   const std::string& where);

// Redistributes to `desired` when the declared layout differs from it (PyTorch decides on the
// declared layouts, not on the value's placements).
DTensor lay_out(const DTensor& value, const Placement& given, const Placement& desired);

// The DTensor, or its local tensor with use_local_output.
nn::Value finish(const DTensor& value, bool use_local_output);

// Replaces a plain parameter by a DTensor leaf laid out as `placement` (the full tensor is cut on
// this mesh); its requires_grad is kept.
void distribute_parameter(const nn::Parameter& parameter, const DeviceMesh& mesh, const Placement& placement,
                          const std::string& where);

// Styles run on a 1-d mesh; anything else is an error naming it.
void check_style_mesh(const DeviceMesh& mesh, const std::string& where);

}  // namespace tessera::parallel

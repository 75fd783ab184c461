// The 2-d mesh two orthogonal 1-d meshes span (FSDP's data-parallel mesh and the tensor-parallel
// mesh a parameter already lives on), so a parameter sharded on both is one DTensor.
#pragma once

#include "tessera/device_mesh.hpp"

namespace tessera::parallel {

// A (outer, inner) mesh whose rows are `inner`'s fibres and whose columns are `outer`'s. Every
// rank of one must be in the other, and each row of ranks must be one fibre of `inner`; otherwise
// an Error names the meshes.
DeviceMesh mesh_product(const DeviceMesh& outer, const DeviceMesh& inner);

}  // namespace tessera::parallel

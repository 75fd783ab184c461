// The dropout mask of a global tensor, laid out over a mesh: shared by dropout on DTensors and the
// dropout inside attention on DTensors (ops_random.cpp).
#pragma once

#include <string>

#include "tessera/dtensor.hpp"
#include "tessera/generator.hpp"

namespace tessera::dtensor {

// 1 / (1 - p) where the global element is kept (rand()'s number at offset + global index below
// 1 - p), else 0, placed as `placements` (no Partial); draws from `generator`, or the default one
// (per rank inside a LocalMode, which must stand alike on every rank) when null.
DTensor dropout_mask(const Shape& shape, const DeviceMesh& mesh, const Placements& placements, DType dtype,
                     const std::string& backend, double p, Generator* generator);

}  // namespace tessera::dtensor

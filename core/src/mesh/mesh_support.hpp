// Helpers shared by the DeviceMesh sources: row-major indexing of a fibre and the text of shapes and
// dim names in messages.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor_impl.hpp"
#include "tessera/errors.hpp"

namespace tessera::mesh {

// The coordinate of the index-th rank of a row-major fibre: coord[i] = (index / prod(shape[i+1:])) %
// shape[i].
inline std::vector<int64_t> coordinate_of_index(int64_t index, const std::vector<int64_t>& shape) {
  std::vector<int64_t> coord(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    coord[i] = index % shape[i];
    index /= shape[i];
  }
  return coord;
}

// "('dp', 'tp')", and "('dp',)" for one name, as Python prints a tuple.
inline std::string names_text(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return "(" + text + (names.size() == 1 ? ",)" : ")");
}

inline void check_dim(int64_t dim, const std::vector<int64_t>& shape) {
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    throw Error(fmt::format("DeviceMesh: dim {} is out of range for a {}-d mesh of shape {} (expected 0..{})",
                            dim, shape.size(), shape_text(shape), static_cast<int64_t>(shape.size()) - 1));
}

}  // namespace tessera::mesh

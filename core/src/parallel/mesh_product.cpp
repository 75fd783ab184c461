// Spanning a 2-d mesh from two orthogonal 1-d meshes.
#include "parallel/mesh_product.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "tessera/errors.hpp"

namespace tessera::parallel {
namespace {

std::string dim_name(const DeviceMesh& mesh, const char* fallback) {
  return mesh.dim_names().empty() ? fallback : mesh.dim_names()[0];
}

}  // namespace

DeviceMesh mesh_product(const DeviceMesh& outer, const DeviceMesh& inner) {
  if (outer.ndim() != 1 || inner.ndim() != 1)
    throw Error(fmt::format("mesh_product: both meshes must be 1-d; got {} and {}", outer.to_string(),
                            inner.to_string()));
  std::map<int, const std::vector<int>*> outer_fibre_of;
  for (const auto& fibre : outer.fibres())
    for (int rank : fibre) outer_fibre_of[rank] = &fibre;
  std::set<std::vector<int>> inner_fibres(inner.fibres().begin(), inner.fibres().end());
  std::vector<std::vector<int>> fibres;
  std::set<int> covered;  // ranks of the fibres made so far
  for (const auto& row0 : inner.fibres()) {
    // The product's fibres are disjoint: an inner fibre inside one made already is one of its rows,
    // and would make the same rows again (each row's ranks are one outer fibre apart), so it is
    // neither made again nor checked again.
    if (covered.contains(row0.at(0))) continue;
    std::vector<int> fibre;
    for (int64_t d = 0; d < outer.size(); ++d) {
      std::vector<int> row;
      for (int rank : row0) {
        const auto it = outer_fibre_of.find(rank);
        if (it == outer_fibre_of.end())
          throw Error(
              fmt::format("mesh_product: rank {} of {} is not in {}; the meshes must cover the same ranks",
                          rank, inner.to_string(), outer.to_string()));
        row.push_back((*it->second)[static_cast<size_t>(d)]);
      }
      if (!inner_fibres.count(row))
        throw Error(fmt::format(
            "mesh_product: {} and {} are not orthogonal (ranks {} are one {} coordinate apart but "
            "not one fibre of the inner mesh)",
            outer.to_string(), inner.to_string(), fmt::join(row, ", "), dim_name(outer, "outer")));
      fibre.insert(fibre.end(), row.begin(), row.end());
    }
    covered.insert(fibre.begin(), fibre.end());
    fibres.push_back(std::move(fibre));
  }
  DeviceMesh product(inner.device_type(), {outer.size(), inner.size()},
                     {dim_name(outer, "dp"), dim_name(inner, "tp")}, std::move(fibres));
  return inner.has_own_topology() ? product.with_topology(inner.topology()) : product;
}

}  // namespace tessera::parallel

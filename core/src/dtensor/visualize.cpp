// visualize_sharding: which ranks hold which block of a 1-d or 2-d DTensor, as a text grid (like
// jax.debug.visualize_array_sharding). Ranges are inclusive; replicas list every rank; ranks
// holding an empty shard are named on a last line.
#include <map>
#include <set>

#include <fmt/format.h>

#include "dtensor/layout.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using Range = std::pair<int64_t, int64_t>;  // first, last (inclusive)

std::string range_text(const char* what, const Range& r) {
  return r.first == r.second ? fmt::format("{} {}", what, r.first)
                             : fmt::format("{} {}-{}", what, r.first, r.second);
}

}  // namespace

std::string visualize_sharding(const DTensor& tensor) {
  if (tensor.dim() < 1 || tensor.dim() > 2)
    throw Error(
        fmt::format("visualize_sharding: only 1-d and 2-d DTensors can be drawn, got {} dims", tensor.dim()));
  const DeviceMesh& mesh = tensor.device_mesh();
  const bool two_d = tensor.dim() == 2;
  // (row range, column range) -> ranks holding that block.
  std::map<std::pair<Range, Range>, std::set<int>> blocks;
  std::set<Range> rows, cols;
  std::set<int> empty_ranks;
  for (int rank : mesh.ranks()) {
    const std::vector<int64_t> coord = mesh.coordinate_of(rank);
    auto ranges = [&](int64_t dim) {
      std::vector<Range> result;
      for (const tessera_segment& s :
           dtensor::held(tensor.shape()[static_cast<size_t>(dim)], dim, tensor.placements(), mesh.shape(),
                         coord, tensor.placements().size()))
        if (s.length > 0) result.emplace_back(s.offset, s.offset + s.length - 1);
      return result;  // empty when the shard holds nothing of this dim
    };
    const std::vector<Range> row_ranges = ranges(0);
    const std::vector<Range> col_ranges = two_d ? ranges(1) : std::vector<Range>{{0, 0}};
    // A rank with an empty shard holds no block: it is listed after the grid, not as a row.
    if (row_ranges.empty() || col_ranges.empty()) {
      empty_ranks.insert(rank);
      continue;
    }
    for (const Range& r : row_ranges)
      for (const Range& c : col_ranges) {
        blocks[{r, c}].insert(rank);
        rows.insert(r);
        cols.insert(c);
      }
  }
  const std::string partial = [&] {
    std::string text;
    for (size_t i = 0; i < tensor.placements().size(); ++i)
      if (tensor.placements()[i].is_partial())
        text += fmt::format(" mesh dim {} holds {} terms;", i, tensor.placements()[i].to_string());
    return text;
  }();
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = {""};
  for (const Range& c : cols) header.push_back(two_d ? range_text("cols", c) : "");
  cells.push_back(header);
  for (const Range& r : rows) {
    std::vector<std::string> line = {range_text(two_d ? "rows" : "elements", r)};
    for (const Range& c : cols) {
      auto it = blocks.find({r, c});
      line.push_back(it == blocks.end() ? "-"
                                        : fmt::format("rank{} {}", it->second.size() > 1 ? "s" : "",
                                                      fmt::join(it->second, ",")));
    }
    cells.push_back(line);
  }
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  std::string out =
      fmt::format("{} of shape [{}] placed {} on {}{}\n", "DTensor", fmt::join(tensor.shape(), ", "),
                  placements_text(tensor.placements()), mesh.to_string(),
                  partial.empty() ? "" : " (" + partial.substr(1, partial.size() - 2) + ")");
  for (size_t l = two_d ? 0 : 1; l < cells.size(); ++l) {
    std::string line;
    for (size_t i = 0; i < cells[l].size(); ++i) line += fmt::format("{:<{}}  ", cells[l][i], widths[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (!empty_ranks.empty())
    out += fmt::format("rank{} {} hold{} no elements\n", empty_ranks.size() > 1 ? "s" : "",
                       fmt::join(empty_ranks, ","), empty_ranks.size() > 1 ? "" : "s");
  return out;
}

}  // namespace tessera

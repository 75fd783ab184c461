#include "comm/fibres.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/errors.hpp"

namespace tessera::comm {

std::vector<std::vector<int>> covered_fibres(const char* op, const RankSet& ranks,
                                             const ProcessGroup& group) {
  if (group.is_default()) return {ranks.ranks()};
  std::vector<std::vector<int>> covered;
  for (const std::vector<int>& fibre : group.fibres()) {
    std::vector<int> missing;
    for (int r : fibre)
      if (!ranks.contains(r)) missing.push_back(r);
    if (missing.empty())
      covered.push_back(fibre);
    else if (missing.size() != fibre.size())
      throw Error(fmt::format(
          "{}: the tensor has ranks {} but group fibre {{{}}} also needs ranks {{{}}}; a collective "
          "needs every member of a group",
          op, ranks.to_string(), fmt::join(fibre, ","), fmt::join(missing, ",")));
  }
  if (covered.empty())
    throw Error(fmt::format("{}: the tensor's ranks {} cover no fibre of group {}", op, ranks.to_string(),
                            group.to_string()));
  return covered;
}

}  // namespace tessera::comm

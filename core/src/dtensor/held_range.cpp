#include "dtensor/held_range.hpp"

#include <fmt/format.h>

#include "dtensor/layout.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/local.hpp"

namespace tessera::dtensor {

HeldRange held_range(const DTensor& t, int64_t dim, const char* op) {
  const DeviceMesh& mesh = t.device_mesh();
  const int64_t size = t.shape()[static_cast<size_t>(dim)];
  const TensorOptions options = TensorOptions(kInt64).backend(t.to_local().backend());
  std::vector<std::pair<int, Tensor>> starts, lengths;
  bool some_empty = false;
  DisabledLocalMode plain;
  for (int rank : t.to_local().ranks()) {
    const Segments segments =
        held(size, dim, t.placements(), mesh.shape(), mesh.coordinate_of(rank), t.placements().size());
    int64_t start = 0, length = 0;
    for (const tessera_segment& s : segments) {
      if (s.length == 0) continue;
      if (length > 0 && s.offset != start + length)
        throw Error(
            fmt::format("{}: rank {} holds dim {} of the DTensor (placements {}) in several pieces, expected "
                        "one contiguous range per rank (Shard placements)",
                        op, rank, dim, placements_text(t.placements())));
      if (length == 0) start = s.offset;
      length += s.length;
    }
    some_empty = some_empty || length == 0;
    starts.emplace_back(rank, full({}, start, options));
    lengths.emplace_back(rank, full({}, length, options));
  }
  return {local_tensor(RankMap<Tensor>(std::move(starts))), local_tensor(RankMap<Tensor>(std::move(lengths))),
          some_empty};
}

}  // namespace tessera::dtensor

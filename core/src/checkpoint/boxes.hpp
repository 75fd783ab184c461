// The geometry of checkpoint chunks: boxes (hyper-rectangles) of a global tensor, which boxes a
// DTensor's rank holds, their intersections, the byte runs a box occupies in a row-major chunk, and
// the copy of a region between two row-major buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/placement.hpp"
#include "tessera/tensor.hpp"

namespace tessera::dcp {

struct Box {
  std::vector<int64_t> offsets;
  std::vector<int64_t> sizes;
  int64_t numel() const;
  bool operator==(const Box&) const = default;
  bool operator<(const Box& other) const;
};

// A box a rank holds, and where it starts within the rank's (row-major) shard.
struct HeldBox {
  Box global;
  std::vector<int64_t> local_offsets;
};

// The boxes the rank at mesh coordinate `coord` holds of a tensor of shape `global` placed by
// `placements` (Partial counts as Replicate: the caller reduces first): one box per combination
// of the segments its placements give each dim, in the shard's storage order. Empty boxes are
// left out, so a rank holding nothing gets none (a 0-d tensor gets one box of no dims).
std::vector<HeldBox> held_boxes(const Shape& global, const Placements& placements,
                                const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coord);

std::optional<Box> intersect(const Box& a, const Box& b);

struct ByteRun {
  int64_t begin, end;
};
// The byte runs, ascending and merged where adjacent, that `region` (global coordinates, inside
// `chunk`) occupies in the chunk's row-major bytes.
std::vector<ByteRun> region_runs(const Box& chunk, const Box& region, size_t itemsize);
// Runs widened to whole blocks of `block` bytes (the last block ends at `total`), merged.
std::vector<ByteRun> widen_to_blocks(const std::vector<ByteRun>& runs, int64_t block, int64_t total);

// Copies `region` (global coordinates) from a row-major buffer holding box `src_box` to one
// holding box `dst_box`. `src` holds the source's bytes from byte `src_first_byte` on (a part of it
// read from a file).
void copy_region(const std::byte* src, int64_t src_first_byte, const Box& src_box, std::byte* dst,
                 const Box& dst_box, const Box& region, size_t itemsize);

}  // namespace tessera::dcp

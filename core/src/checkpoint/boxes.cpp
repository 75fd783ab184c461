#include "checkpoint/boxes.hpp"

#include <algorithm>
#include <cstring>

#include "dtensor/layout.hpp"

namespace tessera::dcp {

int64_t Box::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool Box::operator<(const Box& other) const {
  return offsets != other.offsets ? offsets < other.offsets : sizes < other.sizes;
}

std::vector<HeldBox> held_boxes(const Shape& global, const Placements& placements,
                                const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coord) {
  const size_t ndim = global.size();
  // Per dim: the global segments held, each with where it starts in the shard.
  std::vector<std::vector<std::pair<tessera_segment, int64_t>>> per_dim(ndim);
  for (size_t d = 0; d < ndim; ++d) {
    int64_t local = 0;
    for (const tessera_segment& s : dtensor::held(global[d], static_cast<int64_t>(d), placements, mesh_shape,
                                                  coord, placements.size())) {
      if (s.length > 0) per_dim[d].push_back({s, local});
      local += s.length;
    }
    if (per_dim[d].empty()) return {};
  }
  std::vector<HeldBox> boxes;
  std::vector<size_t> index(ndim, 0);
  while (true) {
    HeldBox box;
    for (size_t d = 0; d < ndim; ++d) {
      const auto& [segment, local] = per_dim[d][index[d]];
      box.global.offsets.push_back(segment.offset);
      box.global.sizes.push_back(segment.length);
      box.local_offsets.push_back(local);
    }
    boxes.push_back(std::move(box));
    // Odometer over the segment combinations, last dim fastest.
    size_t d = ndim;
    while (d > 0 && ++index[d - 1] == per_dim[d - 1].size()) index[--d] = 0;
    if (d == 0) break;
  }
  return boxes;
}

std::optional<Box> intersect(const Box& a, const Box& b) {
  Box r;
  for (size_t d = 0; d < a.sizes.size(); ++d) {
    const int64_t lo = std::max(a.offsets[d], b.offsets[d]);
    const int64_t hi = std::min(a.offsets[d] + a.sizes[d], b.offsets[d] + b.sizes[d]);
    if (hi <= lo) return std::nullopt;
    r.offsets.push_back(lo);
    r.sizes.push_back(hi - lo);
  }
  return r;
}

namespace {

// Row-major element strides of a box.
std::vector<int64_t> box_strides(const Box& box) {
  std::vector<int64_t> strides(box.sizes.size(), 1);
  for (size_t d = box.sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * box.sizes[d];
  return strides;
}

// Calls f(element offset in each buffer) for the start of every run of `region`, with the run's
// length in elements.
template <class F>
void for_each_box_run(const Box& region, const std::vector<const Box*>& boxes, F&& f) {
  const size_t ndim = region.sizes.size();
  if (ndim == 0) {
    f(std::vector<int64_t>(boxes.size(), 0), int64_t{1});
    return;
  }
  size_t k = ndim;
  while (k > 0) {
    bool full = true;
    for (const Box* b : boxes) full = full && region.sizes[k - 1] == b->sizes[k - 1];
    if (!full) break;
    --k;
  }
  const size_t cut = k == 0 ? 0 : k - 1;  // dims after `cut` are whole in every buffer
  std::vector<std::vector<int64_t>> strides;
  for (const Box* b : boxes) strides.push_back(box_strides(*b));
  int64_t run = 1;
  for (size_t d = cut; d < ndim; ++d) run *= region.sizes[d];
  std::vector<int64_t> index(cut, 0);  // over dims before `cut`
  std::vector<int64_t> starts(boxes.size());
  while (true) {
    for (size_t b = 0; b < boxes.size(); ++b) {
      int64_t at = 0;
      for (size_t d = 0; d < ndim; ++d) {
        const int64_t i = d < cut ? index[d] : 0;
        at += (region.offsets[d] - boxes[b]->offsets[d] + i) * strides[b][d];
      }
      starts[b] = at;
    }
    f(starts, run);
    size_t d = cut;
    while (d > 0 && ++index[d - 1] == region.sizes[d - 1]) index[--d] = 0;
    if (d == 0) break;
  }
}

}  // namespace

std::vector<ByteRun> region_runs(const Box& chunk, const Box& region, size_t itemsize) {
  std::vector<ByteRun> runs;
  const auto size = static_cast<int64_t>(itemsize);
  for_each_box_run(region, {&chunk}, [&](const std::vector<int64_t>& at, int64_t run) {
    const int64_t begin = at[0] * size, end = (at[0] + run) * size;
    if (!runs.empty() && runs.back().end == begin)
      runs.back().end = end;
    else
      runs.push_back({begin, end});
  });
  return runs;
}

std::vector<ByteRun> widen_to_blocks(const std::vector<ByteRun>& runs, int64_t block, int64_t total) {
  std::vector<ByteRun> wide;
  for (const ByteRun& r : runs) {
    const ByteRun w{r.begin / block * block, std::min(total, (r.end + block - 1) / block * block)};
    if (!wide.empty() && wide.back().end >= w.begin)
      wide.back().end = std::max(wide.back().end, w.end);
    else
      wide.push_back(w);
  }
  return wide;
}

void copy_region(const std::byte* src, int64_t src_first_byte, const Box& src_box, std::byte* dst,
                 const Box& dst_box, const Box& region, size_t itemsize) {
  for_each_box_run(region, {&src_box, &dst_box}, [&](const std::vector<int64_t>& at, int64_t run) {
    std::memcpy(dst + at[1] * static_cast<int64_t>(itemsize),
                src + (at[0] * static_cast<int64_t>(itemsize) - src_first_byte),
                static_cast<size_t>(run) * itemsize);
  });
}

}  // namespace tessera::dcp

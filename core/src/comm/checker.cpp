#include "comm/checker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "comm/checker_terms.hpp"
#include "comm/schedule_runner.hpp"

namespace tessera::comm {
namespace {

using checker::Terms;
using Marker = Terms::Marker;

// Consecutive intervals of a chunk, as read from or written to a buffer.
struct Piece {
  int64_t length;
  Terms terms;
};

// A buffer as a sorted map from interval start to the terms at that start; an interval runs to
// the next start (the last one to the buffer's size). Callers pass chunks checked to be in bounds.
class IntervalBuffer {
 public:
  IntervalBuffer(int64_t size, Terms initial) : size_(size) {
    if (size > 0) intervals_.emplace(0, std::move(initial));
  }

  std::vector<Piece> read(int64_t offset, int64_t count) const {
    std::vector<Piece> pieces;
    if (count == 0) return pieces;  // an empty buffer has no interval to start from
    const int64_t end = offset + count;
    for (auto it = containing(offset); offset < end; ++it) {
      const int64_t stop = std::min(end_of(it), end);
      pieces.push_back({stop - offset, it->second.shifted(offset - it->first)});
      offset = stop;
    }
    return pieces;
  }

  void write(int64_t offset, const std::vector<Piece>& pieces, bool reduce) {
    int64_t end = offset;
    for (const Piece& p : pieces) end += p.length;
    if (offset == end) return;
    const int64_t start = offset;
    split(offset);
    split(end);
    if (!reduce) {
      intervals_.erase(intervals_.lower_bound(offset), intervals_.lower_bound(end));
      for (const Piece& p : pieces) {
        if (p.length > 0) intervals_.emplace(offset, p.terms);
        offset += p.length;
      }
    } else {
      for (const Piece& p : pieces) {
        split(offset + p.length);
        const int64_t stop = offset + p.length;
        for (auto it = intervals_.lower_bound(offset); it != intervals_.end() && it->first < stop; ++it)
          it->second = Terms::combined(it->second,
                                       it->first == offset ? p.terms : p.terms.shifted(it->first - offset));
        offset += p.length;
      }
    }
    merge_from(start, end);
  }

  // The terms at element `at` and where the interval holding it ends.
  std::pair<Terms, int64_t> at(int64_t position) const {
    const auto it = containing(position);
    return {it->second.shifted(position - it->first), end_of(it)};
  }

 private:
  using Map = std::map<int64_t, Terms>;
  Map::const_iterator containing(int64_t position) const {
    return std::prev(intervals_.upper_bound(position));
  }
  int64_t end_of(Map::const_iterator it) const {
    const auto next = std::next(it);
    return next == intervals_.end() ? size_ : next->first;
  }
  void split(int64_t position) {
    if (position <= 0 || position >= size_) return;
    const auto it = containing(position);
    if (it->first != position)
      intervals_.emplace_hint(std::next(it), position, it->second.shifted(position - it->first));
  }
  // Joins each interval starting in [from, to] to the one before it when it continues it (holds
  // what the one before would hold there): a buffer written block by block with parts of one
  // value, as an all-gather does, stays one interval instead of one per block. Only a matter of
  // memory and time: the intervals mean the same either way.
  void merge_from(int64_t from, int64_t to) {
    auto it = intervals_.lower_bound(from);
    if (it == intervals_.begin() && it != intervals_.end()) ++it;
    while (it != intervals_.end() && it->first <= to) {
      const auto before = std::prev(it);
      if (it->second.continues(before->second, it->first - before->first))
        it = intervals_.erase(it);
      else
        ++it;
    }
  }

  int64_t size_;
  Map intervals_;
};

// Which ranks a rank has (transitively) heard from, one bit per rank: only tracked for barriers,
// where every message carries its sender's set and merging costs p / 64 words.
class Heard {
 public:
  Heard() = default;
  explicit Heard(int p) : size_(p), words_((static_cast<size_t>(p) + 63) / 64, 0) {}
  void set(int rank) { words_[static_cast<size_t>(rank) / 64] |= uint64_t{1} << (rank % 64); }
  void merge(const Heard& other) {
    for (size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) words_[i] |= other.words_[i];
  }
  bool everyone() const {
    for (int r = 0; r < size_; ++r)
      if ((words_[static_cast<size_t>(r) / 64] >> (r % 64) & 1) == 0) return false;
    return true;
  }

 private:
  int size_ = 0;
  std::vector<uint64_t> words_;
};

class SymbolicModel {
 public:
  struct Payload {
    int64_t count;
    std::vector<Piece> pieces;
    Heard heard;
  };

  explicit SymbolicModel(const Schedule& schedule)
      : track_heard_(schedule.request.collective == TESSERA_COLL_BARRIER) {
    const int p = schedule.group_size();
    buffers_.resize(static_cast<size_t>(p));
    if (track_heard_) heard_.assign(static_cast<size_t>(p), Heard(p));
    for (int r = 0; r < p; ++r) {
      const RankProgram& program = schedule.ranks[static_cast<size_t>(r)];
      auto& buffers = buffers_[static_cast<size_t>(r)];
      for (size_t b = 0; b < program.buffer_sizes.size(); ++b)
        buffers.emplace_back(program.buffer_sizes[b], b == TESSERA_BUFFER_INPUT
                                                          ? Terms::single(r, 0)
                                                          : Terms::marker(Marker::Unspecified));
      if (track_heard_) heard_[static_cast<size_t>(r)].set(r);
    }
  }

  Payload capture(int rank, const tessera_chunk& c) {
    return {c.count, buffer(rank, c).read(c.offset, c.count),
            track_heard_ ? heard_[static_cast<size_t>(rank)] : Heard{}};
  }
  void deliver(int rank, const tessera_chunk& c, Payload& payload, bool reduce) {
    if (track_heard_) heard_[static_cast<size_t>(rank)].merge(payload.heard);
    buffer(rank, c).write(c.offset, payload.pieces, reduce);
  }
  void copy(int rank, const tessera_chunk& dst, const tessera_chunk& src) {
    buffer(rank, dst).write(dst.offset, buffer(rank, src).read(src.offset, src.count), false);
  }
  void reduce(int rank, const tessera_chunk& dst, const tessera_chunk& src) {
    buffer(rank, dst).write(dst.offset, buffer(rank, src).read(src.offset, src.count), true);
  }

  const IntervalBuffer& output(int rank) const {
    return buffers_[static_cast<size_t>(rank)][TESSERA_BUFFER_OUTPUT];
  }
  bool heard_everyone(int rank) const { return heard_[static_cast<size_t>(rank)].everyone(); }

 private:
  IntervalBuffer& buffer(int rank, const tessera_chunk& c) {
    return buffers_[static_cast<size_t>(rank)][static_cast<size_t>(c.buffer)];
  }

  bool track_heard_;
  std::vector<std::vector<IntervalBuffer>> buffers_;
  std::vector<Heard> heard_;
};

// What rank `rank`'s output must hold, as (start, terms at the start) intervals; false when the
// collective leaves that rank's output unspecified.
bool expected(const tessera_collective_request& q, int rank, std::vector<std::pair<int64_t, Terms>>& out) {
  const int32_t p = q.group_size;
  const int64_t n = q.count;
  out.clear();
  auto every_rank = [&](int64_t index) { return Terms::ranks(0, p, index); };
  switch (q.collective) {
    case TESSERA_COLL_ALL_REDUCE:
      out.emplace_back(0, every_rank(0));
      return true;
    case TESSERA_COLL_BROADCAST:
      out.emplace_back(0, Terms::single(q.root, 0));
      return true;
    case TESSERA_COLL_REDUCE:
      if (rank != q.root) return false;
      out.emplace_back(0, every_rank(0));
      return true;
    case TESSERA_COLL_REDUCE_SCATTER:
      out.emplace_back(0, every_rank(rank * n));
      return true;
    case TESSERA_COLL_SCATTER:
      out.emplace_back(0, Terms::single(q.root, rank * n));
      return true;
    case TESSERA_COLL_GATHER:
      if (rank != q.root) return false;
      [[fallthrough]];
    case TESSERA_COLL_ALL_GATHER:
      for (int32_t i = 0; i < p; ++i) out.emplace_back(i * n, Terms::single(i, 0));
      return true;
    case TESSERA_COLL_ALL_TO_ALL:
      for (int32_t i = 0; i < p; ++i) out.emplace_back(i * n, Terms::single(i, rank * n));
      return true;
    default:
      return false;
  }
}

// The first element of `actual` (of `size` elements) that differs from `want`; empty if none.
std::string first_mismatch(const IntervalBuffer& actual, const std::vector<std::pair<int64_t, Terms>>& want,
                           int64_t size, int rank) {
  size_t w = 0;
  for (int64_t position = 0; position < size;) {
    while (w + 1 < want.size() && want[w + 1].first <= position) ++w;
    const int64_t want_end = w + 1 < want.size() ? want[w + 1].first : size;
    const Terms wanted = want[w].second.shifted(position - want[w].first);
    auto [have, have_end] = actual.at(position);
    // Both sides are affine in the position, so agreeing at the start of an overlap means agreeing
    // throughout it.
    if (have != wanted)
      return fmt::format("rank {} output[{}] holds {} but should hold {}{}", rank, position,
                         checker::terms_text(have), checker::terms_text(wanted),
                         checker::difference_text(have, wanted));
    position = std::min(want_end, have_end);
  }
  return {};
}

std::string check_outputs(const Schedule& schedule, const SymbolicModel& model) {
  const tessera_collective_request& q = schedule.request;
  std::vector<std::pair<int64_t, Terms>> want;
  for (int r = 0; r < schedule.group_size(); ++r) {
    if (q.collective == TESSERA_COLL_BARRIER && !model.heard_everyone(r))
      return fmt::format("rank {} can finish the barrier before hearing from every other rank", r);
    if (!expected(q, r, want)) continue;
    if (std::string problem = first_mismatch(model.output(r), want, io_sizes(q, r).second, r);
        !problem.empty())
      return problem;
  }
  return {};
}

std::string buffer_size_problem(const Schedule& schedule) {
  for (int r = 0; r < schedule.group_size(); ++r) {
    const auto [in, out] = io_sizes(schedule.request, r);
    const auto& sizes = schedule.ranks[static_cast<size_t>(r)].buffer_sizes;
    if (sizes.size() < 2 || sizes[0] != in || sizes[1] != out)
      return fmt::format("rank {} has input and output buffers of other sizes than {} and {}", r, in, out);
    if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; }))
      return fmt::format("rank {} has a buffer of negative size", r);
  }
  return {};
}

}  // namespace

std::string verify(const Schedule& schedule) {
  if (std::string problem = request_problem(schedule.request); !problem.empty())
    return "malformed request: " + problem;
  if (schedule.group_size() != schedule.request.group_size)
    return fmt::format("the schedule has programs for {} ranks, the group has {}", schedule.group_size(),
                       schedule.request.group_size);
  if (std::string problem = buffer_size_problem(schedule); !problem.empty()) return problem;
  if (std::string problem = structure_problem(schedule); !problem.empty()) return problem;
  try {
    SymbolicModel model(schedule);
    run_schedule(schedule, model);
    return check_outputs(schedule, model);
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace tessera::comm

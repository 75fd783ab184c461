#include "comm/checker.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "comm/schedule_runner.hpp"

namespace tessera::comm {
namespace {

// One symbolic element: the multiset of (source rank, input index) it combines, sorted.
using Value = std::vector<std::pair<int32_t, int64_t>>;
// Output and scratch buffers start unspecified; reducing into such an element keeps this marker,
// so a schedule that forgets to initialise before reducing fails verification.
const Value kUnspecified = {{-1, -1}};

class SymbolicModel {
 public:
  struct Payload {
    int64_t count;
    std::vector<Value> values;
    std::vector<bool> heard;
  };

  explicit SymbolicModel(const Schedule& schedule) {
    const int p = schedule.group_size();
    buffers_.resize(static_cast<size_t>(p));
    heard_.assign(static_cast<size_t>(p), std::vector<bool>(static_cast<size_t>(p), false));
    for (int r = 0; r < p; ++r) {
      const RankProgram& program = schedule.ranks[static_cast<size_t>(r)];
      for (int64_t size : program.buffer_sizes)
        buffers_[static_cast<size_t>(r)].emplace_back(static_cast<size_t>(size), kUnspecified);
      auto& input = buffers_[static_cast<size_t>(r)][TESSERA_BUFFER_INPUT];
      for (size_t k = 0; k < input.size(); ++k) input[k] = {{r, static_cast<int64_t>(k)}};
      heard_[static_cast<size_t>(r)][static_cast<size_t>(r)] = true;
    }
  }

  Payload capture(int rank, const tessera_chunk& c) {
    return {c.count, read(rank, c), heard_[static_cast<size_t>(rank)]};
  }
  void deliver(int rank, const tessera_chunk& c, Payload& payload, bool reduce) {
    auto& heard = heard_[static_cast<size_t>(rank)];
    for (size_t i = 0; i < heard.size(); ++i) heard[i] = heard[i] || payload.heard[i];
    write(rank, c, payload.values, reduce);
  }
  void copy(int rank, const tessera_chunk& dst, const tessera_chunk& src) { write(rank, dst, read(rank, src), false); }
  void reduce(int rank, const tessera_chunk& dst, const tessera_chunk& src) { write(rank, dst, read(rank, src), true); }

  const Value& output(int rank, int64_t index) const {
    return buffers_[static_cast<size_t>(rank)][TESSERA_BUFFER_OUTPUT][static_cast<size_t>(index)];
  }
  bool heard_everyone(int rank) const {
    const auto& heard = heard_[static_cast<size_t>(rank)];
    return std::all_of(heard.begin(), heard.end(), [](bool b) { return b; });
  }

 private:
  std::vector<Value> read(int rank, const tessera_chunk& c) const {
    const auto& buffer = buffers_[static_cast<size_t>(rank)][static_cast<size_t>(c.buffer)];
    return {buffer.begin() + c.offset, buffer.begin() + c.offset + c.count};
  }
  void write(int rank, const tessera_chunk& c, const std::vector<Value>& values, bool reduce) {
    auto& buffer = buffers_[static_cast<size_t>(rank)][static_cast<size_t>(c.buffer)];
    for (int64_t i = 0; i < c.count; ++i) {
      Value& target = buffer[static_cast<size_t>(c.offset + i)];
      if (!reduce) {
        target = values[static_cast<size_t>(i)];
        continue;
      }
      target.insert(target.end(), values[static_cast<size_t>(i)].begin(), values[static_cast<size_t>(i)].end());
      std::sort(target.begin(), target.end());
    }
  }

  std::vector<std::vector<std::vector<Value>>> buffers_;
  std::vector<std::vector<bool>> heard_;
};

std::string value_text(const Value& v) {
  std::string text = "{";
  for (size_t i = 0; i < v.size(); ++i)
    text += v[i].first < 0 ? fmt::format("{}<unspecified>", i ? ", " : "")
                           : fmt::format("{}r{}[{}]", i ? ", " : "", v[i].first, v[i].second);
  return text + "}";
}

// What output element `index` of group rank `rank` must hold; nullopt-like (false) when unchecked.
bool expected(const tessera_collective_request& q, int rank, int64_t index, Value& out) {
  const int p = q.group_size;
  const int64_t n = q.count;
  out.clear();
  auto all_ranks = [&](int64_t source_index) {
    for (int i = 0; i < p; ++i) out.emplace_back(i, source_index);
  };
  switch (q.collective) {
    case TESSERA_COLL_ALL_REDUCE: all_ranks(index); return true;
    case TESSERA_COLL_BROADCAST: out.emplace_back(q.root, index); return true;
    case TESSERA_COLL_REDUCE:
      if (rank != q.root) return false;
      all_ranks(index);
      return true;
    case TESSERA_COLL_ALL_GATHER: out.emplace_back(static_cast<int32_t>(index / n), index % n); return true;
    case TESSERA_COLL_REDUCE_SCATTER: all_ranks(rank * n + index); return true;
    case TESSERA_COLL_ALL_TO_ALL: out.emplace_back(static_cast<int32_t>(index / n), rank * n + index % n); return true;
    case TESSERA_COLL_SCATTER: out.emplace_back(q.root, rank * n + index); return true;
    case TESSERA_COLL_GATHER:
      if (rank != q.root) return false;
      out.emplace_back(static_cast<int32_t>(index / n), index % n);
      return true;
    default: return false;
  }
}

}  // namespace

std::string verify(const Schedule& schedule) {
  SymbolicModel model(schedule);
  try {
    run_schedule(schedule, model);
  } catch (const std::exception& e) {
    return e.what();
  }
  const tessera_collective_request& q = schedule.request;
  Value want;
  for (int r = 0; r < schedule.group_size(); ++r) {
    if (q.collective == TESSERA_COLL_BARRIER && !model.heard_everyone(r))
      return fmt::format("schedule '{}' for barrier: rank {} can finish before hearing from every other rank",
                         schedule.algorithm, r);
    const int64_t out_size = io_sizes(q, r).second;
    for (int64_t k = 0; k < out_size; ++k) {
      if (!expected(q, r, k, want)) continue;
      if (model.output(r, k) != want)
        return fmt::format("schedule '{}' for {} (group size {}, count {}, root {}): rank {} output[{}] holds {} but "
                           "should hold {}",
                           schedule.algorithm, collective_name(q.collective), q.group_size, q.count, q.root, r, k,
                           value_text(model.output(r, k)), value_text(want));
    }
  }
  return {};
}

}  // namespace tessera::comm

// libFuzzer target: random requests and random builder calls go through the schedule recorder and
// the symbolic checker, exactly as a collective plugin's build() does (CollectiveAlgorithm::build).
// Neither may crash on any input, and every schedule the checker accepts must execute on real
// buffers without an out-of-bounds access (the sanitizers catch those) or an error.
//
// Input format, byte by byte: collective, group size, count, root, reduce op, then steps of
// (kind, rank, peer, chunk[, source chunk]) until the data runs out. Numbers are small most of the
// time and sometimes the edge values a plugin might hand over (negative, INT64_MAX, 2^62 ...).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm/checker.hpp"
#include "comm/executor.hpp"
#include "comm/schedule_recorder.hpp"
#include "dispatch/backend.hpp"
#include "tessera/tessera.hpp"

namespace {

namespace comm = tessera::comm;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return at_ >= size_; }
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  // Mostly 0..15; one value in eight is an edge case.
  int64_t number() {
    const uint8_t b = byte();
    if ((b & 0x80) == 0) return b & 0x0f;
    static constexpr int64_t kEdges[] = {-1,      INT64_MAX, INT64_MIN, INT64_MAX - 1, int64_t{1} << 62,
                                         1 << 20, 31,        64};
    return kEdges[b & 7];
  }
  // A group rank, one past the group now and then, and from 0xf0 on a small negative number.
  int32_t rank(int32_t group_size) {
    const uint8_t b = byte();
    if (b >= 0xf0) return static_cast<int32_t>(b) - 0xf8;
    return static_cast<int32_t>(b) % std::max(group_size + 1, 1);
  }
  tessera_chunk chunk() {
    tessera_chunk c{};
    const uint8_t buffer = byte();
    c.buffer = buffer < 0xf0 ? buffer % 4 : static_cast<int32_t>(buffer) - 0xf8;  // 0xf0.. name bad ids
    c.offset = number();
    c.count = number();
    return c;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

// Buffers bigger than this are verified but not executed: the checker works on intervals, so a
// huge buffer costs it nothing, while executing would allocate it.
constexpr int64_t kExecutableElements = 1 << 12;

bool executable(const comm::Schedule& schedule) {
  for (const comm::RankProgram& program : schedule.ranks)
    for (int64_t size : program.buffer_sizes)
      if (size > kExecutableElements) return false;
  return true;
}

// Runs an accepted schedule on int64 buffers of distinct values (every reduce op has int64 kernels).
void execute(const comm::Schedule& schedule) {
  std::vector<tessera::Tensor> inputs;
  for (int r = 0; r < schedule.group_size(); ++r) {
    const int64_t size = schedule.ranks[static_cast<size_t>(r)].buffer_sizes[TESSERA_BUFFER_INPUT];
    inputs.push_back(tessera::arange(size).to(tessera::kInt64) + 1000 * r);
  }
  try {
    (void)comm::execute(schedule, inputs);
  } catch (const std::exception& e) {
    // The checker said the schedule runs; an executor error means the two disagree.
    std::fprintf(stderr, "accepted schedule failed to execute: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  tessera_collective_request request{};
  request.struct_size = sizeof(request);
  request.collective = static_cast<int32_t>(in.byte() % (TESSERA_COLL_COUNT + 1));
  const uint8_t group = in.byte();
  request.group_size = group < 0xf0 ? 1 + group % 6 : static_cast<int32_t>(group) - 0xf8;
  request.count = in.number();
  request.dtype = tessera::dispatch::to_dl(tessera::kInt64);
  request.root = in.rank(request.group_size);
  request.reduce_op = static_cast<int32_t>(in.byte() % 8);

  comm::ScheduleRecorder recorder("fuzz", request);
  const tessera_schedule_builder* b = recorder.builder();
  const int32_t p = request.group_size;
  for (int steps = 0; !in.empty() && steps < 512; ++steps) {
    // Fields are read one statement at a time: argument evaluation order is unspecified.
    const uint8_t kind = in.byte() % 6;
    const int32_t rank = in.rank(p);
    if (kind == 0) {
      (void)b->add_buffer(b->context, rank, in.number());
      continue;
    }
    const tessera_chunk chunk = in.chunk();
    if (kind <= 3) {
      const int32_t peer = in.rank(p);
      (kind == 1 ? b->send : kind == 2 ? b->recv : b->recv_reduce)(b->context, rank, chunk, peer);
      continue;
    }
    const tessera_chunk source = in.chunk();
    (kind == 4 ? b->copy : b->reduce)(b->context, rank, chunk, source);
  }
  const std::string problem = recorder.problem();
  const comm::Schedule schedule = recorder.take();
  // The checker must judge any schedule, including the valid prefix of a rejected one.
  const std::string verdict = comm::verify(schedule);
  if (problem.empty() && verdict.empty() && executable(schedule)) execute(schedule);
  return 0;
}

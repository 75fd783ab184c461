// Builds a Schedule from an algorithm's builder calls, checking each step as it arrives (ranks,
// peers, buffers and bounds) so a bad schedule is reported at the step that made it bad. Steps
// that move no element are checked and then dropped (except a barrier's messages): the schedule
// is the one that moves data.
#pragma once

#include <string>

#include "comm/schedule.hpp"

namespace tessera::comm {

class ScheduleRecorder {
 public:
  // A malformed request (see request_problem) records no steps and is the recorder's problem.
  // keep_empty_steps keeps the steps that move nothing too: for tests that compare with them.
  ScheduleRecorder(std::string algorithm, const tessera_collective_request& request,
                   bool keep_empty_steps = false);

  const tessera_schedule_builder* builder() const { return &builder_; }
  // Empty while every call so far was valid; otherwise the first invalid one, with why.
  const std::string& problem() const { return error_; }
  // The recorded schedule (the valid steps only when problem() is not empty).
  Schedule take() { return std::move(schedule_); }

 private:
  static ScheduleRecorder& self(void* context) { return *static_cast<ScheduleRecorder*>(context); }
  bool valid_rank(int32_t rank, const char* what);
  bool valid_peer(int32_t rank, int32_t peer);
  bool valid_chunk(int32_t rank, const tessera_chunk& chunk, bool written);
  void add(int32_t rank, Step step);
  void add_local(int32_t rank, tessera_chunk dst, tessera_chunk src, StepKind kind, const char* what);
  void fail(const std::string& message);

  Schedule schedule_;
  tessera_schedule_builder builder_{};
  std::string error_;
  bool keep_empty_steps_;
};

}  // namespace tessera::comm

#include "comm/in_place.hpp"

namespace tessera::comm {
namespace {

bool reads_input(const Step& step) {
  switch (step.kind) {
    case StepKind::Send:
      return step.chunk.buffer == TESSERA_BUFFER_INPUT;
    case StepKind::Copy:
    case StepKind::Reduce:
      return step.source.buffer == TESSERA_BUFFER_INPUT;
    case StepKind::Recv:
    case StepKind::RecvReduce:
      return false;
  }
  return true;  // an unknown kind: assume the worst
}

bool writes_output(const Step& step) {
  return step.kind != StepKind::Send && step.chunk.buffer == TESSERA_BUFFER_OUTPUT;
}

bool rank_runs_in_place(const RankProgram& program) {
  const std::vector<int64_t>& sizes = program.buffer_sizes;
  if (sizes.size() < 2 || sizes[TESSERA_BUFFER_INPUT] != sizes[TESSERA_BUFFER_OUTPUT]) return false;
  bool output_written = false;  // by a step other than an identity copy
  for (const Step& step : program.steps) {
    if (identity_copy(step)) {
      if (output_written) return false;  // the copy would restore the input's value there
      continue;
    }
    if (reads_input(step)) return false;
    output_written = output_written || writes_output(step);
  }
  return true;
}

}  // namespace

bool identity_copy(const Step& step) {
  return step.kind == StepKind::Copy && step.source.buffer == TESSERA_BUFFER_INPUT &&
         step.chunk.buffer == TESSERA_BUFFER_OUTPUT && step.source.offset == step.chunk.offset &&
         step.source.count == step.chunk.count;
}

bool runs_in_place(const Schedule& schedule) {
  for (const RankProgram& program : schedule.ranks)
    if (!rank_runs_in_place(program)) return false;
  return true;
}

}  // namespace tessera::comm

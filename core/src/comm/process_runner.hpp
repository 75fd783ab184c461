// Runs a schedule in a world spread over processes: this process plays its hosted group ranks.
//
// The replay is schedule_runner.hpp's (hosted ranks take turns, each running until it must wait),
// with one difference: a message to or from a rank of another process goes through the world's
// transport. Sends are posted and never block: a small one (ProcessLink::kStagedBytes) goes from a
// copy the link owns and is never waited for; a larger one reads its bytes in place (a later write
// to that region copies the rank's buffer first) and completes before the call returns. A receive is posted
// when its step is reached and the rank waits until it completes. When no hosted rank can move, the runner
// polls every posted receive until one completes; if none does within the world's timeout it throws an Error
// naming the steps and the peers awaited, never hangs.
//
// What does not change from call to call (where each member lives, the envelopes' shared fields,
// each message's ordinal) comes from the call's preparation (prepared_call.hpp): made by a
// signature's first call, replayed by the later ones.
#pragma once

#include "comm/executor.hpp"
#include "comm/schedule.hpp"
#include "comm/tensor_model.hpp"

namespace tessera::comm {

void run_across_processes(const Schedule& schedule, TensorModel& model, const ExecutionPlace& place);

}  // namespace tessera::comm

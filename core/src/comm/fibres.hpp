// Which fibres of a process group a collective call runs on: shared by every tessera::dist
// collective, so they agree on what a tensor that covers a group only in part (or not at all) means.
#pragma once

#include <vector>

#include "tessera/dist.hpp"
#include "tessera/rank_map.hpp"

namespace tessera::comm {

// The fibres of `group` (global ranks in group-rank order) whose every member the tensor's ranks
// hold; the default group is one fibre of all of them. Throws Error naming `op` when a fibre is
// covered only in part, or when no fibre is covered at all (a call that would do nothing).
std::vector<std::vector<int>> covered_fibres(const char* op, const RankSet& ranks, const ProcessGroup& group);

}  // namespace tessera::comm

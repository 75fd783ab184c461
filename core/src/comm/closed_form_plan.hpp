// Plans known in closed form: what a regular algorithm shipped with the core computes follows from
// the request alone, so its plan is written down rather than derived from a recorded schedule.
//
// A direct collective over p ranks sends p^2 messages (p - 1 per rank for the rooted ones), and a
// ring, recursive-doubling or Bruck all-gather, all-to-all or reduce-scatter moves p^2 blocks in
// p log p or p^2 pieces; recording, verifying and running them symbolically costs seconds at a
// thousand ranks, where the values they produce are chains of p - 1 reductions or one block per
// rank. Only the
// bundled plugins' algorithms are trusted this way (each is tested to give the plan its verified
// schedule gives); every other plugin's schedule, whatever it is named, is recorded, verified and
// derived as always.
#pragma once

#include <string_view>

#include "comm/algorithm.hpp"
#include "comm/schedule_plan.hpp"

namespace tessera::comm {

// Whether `algorithm` is one of the algorithms of the plugins shipped with the core (loaded from
// their bundled plugin folder), it accepts `request`, and its plan for it is known in closed form:
// direct for every collective direct_plan_covers, ring and rd for all_gather and reduce_scatter,
// bruck for all_gather and all_to_all. An all-gather or all-to-all only copies, so every
// correct schedule of one computes what direct_plan writes down; a reduce_scatter's plan follows
// the algorithm's own order of reductions.
bool has_closed_form_plan(const CollectiveAlgorithm& algorithm, const tessera_collective_request& request);

// The plan derive_plan gives the schedule of the algorithm named `algorithm` for `request`, for a
// pair has_closed_form_plan accepts, computed without the schedule.
SchedulePlan closed_form_plan(std::string_view algorithm, const tessera_collective_request& request);

// Whether direct_plan covers a well-formed request's collective: every one but barrier.
bool direct_plan_covers(const tessera_collective_request& request);

// The plan derive_plan gives the bundled direct algorithm's schedule for a well-formed `request`
// that direct_plan_covers, computed without the schedule.
SchedulePlan direct_plan(const tessera_collective_request& request);

}  // namespace tessera::comm

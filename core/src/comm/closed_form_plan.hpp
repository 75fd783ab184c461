// Plans known in closed form: what the direct algorithm shipped with the core computes follows from
// the request alone, so its plan is written down rather than derived from a recorded schedule.
//
// A direct collective over p ranks sends p^2 messages (p - 1 per rank for the rooted ones); recording,
// verifying and running them symbolically costs seconds at a thousand ranks, where the values
// they produce are a chain of p - 1 reductions or one block per rank. Only the bundled plugin's
// algorithm is trusted this way (it is tested to give the plan its verified schedule gives); every
// other plugin's schedule, whatever it is named, is recorded, verified and derived as always.
#pragma once

#include "comm/algorithm.hpp"
#include "comm/schedule_plan.hpp"

namespace tessera::comm {

// Whether `algorithm` is the direct algorithm of the plugin shipped with the core (loaded from its
// bundled plugin folder) and its plan for `request` is known in closed form (direct_plan).
bool has_closed_form_plan(const CollectiveAlgorithm& algorithm, const tessera_collective_request& request);

// Whether direct_plan covers a well-formed request's collective: all_reduce, reduce, broadcast,
// all_gather, gather, scatter and all_to_all.
bool direct_plan_covers(const tessera_collective_request& request);

// The plan derive_plan gives the bundled direct algorithm's schedule for a well-formed `request`
// that direct_plan_covers, computed without the schedule.
SchedulePlan direct_plan(const tessera_collective_request& request);

}  // namespace tessera::comm

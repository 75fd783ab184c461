// The selection rule target "auto" (e.g. TESSERA_COLL="all_reduce:auto"): tuning by estimate, like
// NCCL's tuner plugins. Among the loaded algorithms that offer the request's collective and accept
// it (check), "auto" takes the one with the lowest estimated time: the algorithm's own estimate
// (SDK 1.3) or, for one without a usable one, the host's alpha-beta model of its schedule over the
// request's topology (cost_model.hpp). A tuner in force ([collectives] tuner, TESSERA_TUNER; SDK
// 1.5) may then reprice or veto those costs (tuner.hpp). Equal costs go to the smaller name, so
// the choice is deterministic; a candidate whose schedule does not build is skipped for the next.
#pragma once

#include <cstdint>
#include <memory>

#include "comm/algorithm.hpp"

namespace tessera::comm {

inline constexpr const char* kAutoAlgorithm = "auto";

// The algorithm "auto" picks, or nullptr when no loaded algorithm accepts the request. Chosen once
// per request key (request_key.hpp: shape, ranks, topology) and remembered until the set of
// algorithms changes (algorithms_generation): later calls cost a lookup. Logs the choice and every
// estimate at info, and a warning for each candidate skipped because its check threw or its
// schedule could not be built (its build failed, threw or made a schedule the checker rejects) and
// for a tuner whose answer is unusable. The choice is always one whose schedule was built and verified (and
// is cached for the run). Throws Error naming every applicable candidate and its failure when none builds.
std::shared_ptr<const CollectiveAlgorithm> choose_auto(const tessera_collective_request& request,
                                                       int64_t bytes);

}  // namespace tessera::comm

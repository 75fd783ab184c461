// spmd_fresh: the fan-out for ops that make a fresh result from their arguments alone (*_like
// factories, dtype casts, contiguous copies, sum_to).
#pragma once

#include "tessera/detail/spmd.hpp"

namespace tessera::detail {

// On shapes only (no MemoryCounter watching) no rank can write what another reads, so ranks whose
// arguments are one object share one result (spmd_alias, once per group of such ranks). Elsewhere
// every rank gets its own result, as spmd gives it: on a backend with bytes, a rank writing into
// its result in place must not change another rank's, even when the ranks' inputs were one object.
template <class F, class... Args>
auto spmd_fresh(const char* op, F&& f, const Args&... args) -> decltype(spmd(op, f, args...)) {
  if ((false || ... || shares_results(args))) return spmd_alias(op, f, args...);
  return spmd(op, f, args...);
}

}  // namespace tessera::detail

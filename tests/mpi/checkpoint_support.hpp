// What the MPI checkpoint checks share: a failure tally that names the process, and a tensor's
// values as doubles for comparing with values written out in the check.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace checkpoint_check {

inline int failures = 0;

inline void check(bool ok, const std::string& what, int process) {
  if (!ok) {
    std::printf("FAIL process %d: %s\n", process, what.c_str());
    ++failures;
  }
}

inline std::vector<double> values(const tessera::Tensor& t) {
  const tessera::DisabledLocalMode off = tessera::maybe_disable_local_mode();
  return t.contiguous().to(tessera::kFloat64).to_vector<double>();
}

}  // namespace checkpoint_check

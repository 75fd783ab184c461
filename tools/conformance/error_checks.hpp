// Error paths: calling an op in a dtype the backend has no kernel for must raise a tessera::Error
// naming the op and the backend (never crash, never a wrong result).
#pragma once

#include "cases.hpp"

namespace conformance {

// For every op the backend provides in some key dtypes, each catalogue key dtype it lacks.
void check_missing_dtypes(Context& context);

}  // namespace conformance

// ts.run_per_rank (run_per_rank.cpp), bound by bind_local.
#pragma once

#include "bindings.hpp"

namespace tessera::python {

void bind_run_per_rank(nb::module_& m);

}  // namespace tessera::python

// A check group: the cases of one (op, dtype). Each case makes its inputs on the oracle; the same
// `apply` runs once on the oracle's inputs and once on their copies moved to the tested backend,
// and the two results are compared after the tested one is moved back.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <tessera/backend_info.hpp>
#include <tessera/tensor.hpp>

#include "compare.hpp"
#include "inputs.hpp"
#include "report.hpp"

namespace conformance {

struct Case {
  std::string name;
  std::vector<tessera::Tensor> inputs;  // contiguous, on the oracle
  // The op under test on `inputs` (moved to `backend`), which is also where it makes new tensors.
  std::function<tessera::Tensor(const std::vector<tessera::Tensor>& inputs, const std::string& backend)>
      apply;
};

struct CaseGroup {
  std::vector<Case> cases;
  Exactness exactness = Exactness::kExact;
};

// Shared state of one backend's run.
struct Context {
  std::string backend;
  std::string oracle;
  tessera::BackendCapabilities capabilities;
  Report& report;
  ValueSource& values;
};

// Runs every case of the group and reports: PASS with the count of cases run, or FAIL naming the
// first failing case; plus a SKIP line counting the cases that need a kernel of another op the
// backend lacks.
void run_group(Context& context, const std::string& group, const std::string& op, tessera::DType dtype,
               const CaseGroup& cases);

// Runs one case on the tested backend only (its result moved to the oracle); rethrows its errors.
tessera::Tensor run_on_tested(const Context& context, const Case& c);

}  // namespace conformance

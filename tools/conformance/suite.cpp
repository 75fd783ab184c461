#include "suite.hpp"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>
#include <tessera/backend_info.hpp>

#include "cases.hpp"
#include "error_checks.hpp"
#include "memory_checks.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

const ts::BackendCapabilities::Op* find_op(const ts::BackendCapabilities& capabilities,
                                           const std::string& op) {
  for (const ts::BackendCapabilities::Op& candidate : capabilities.ops)
    if (candidate.name == op) return &candidate;
  return nullptr;
}

bool has_dtype(const ts::BackendCapabilities::Op* op, ts::DType dtype) {
  return op != nullptr && std::find(op->dtypes.begin(), op->dtypes.end(), dtype) != op->dtypes.end();
}

void check_op(Context& context, const OpCheck& check, const ts::BackendCapabilities& oracle) {
  const ts::BackendCapabilities::Op* provided = find_op(context.capabilities, check.op);
  if (provided == nullptr) {
    context.report.skip(check.op, "not provided by " + context.backend);
    return;
  }
  const ts::BackendCapabilities::Op* reference = find_op(oracle, check.op);
  for (ts::DType dtype : provided->dtypes) {
    const std::string group = fmt::format("{} {}", check.op, ts::dtype_name(dtype));
    if (!has_dtype(reference, dtype)) {
      context.report.skip(
          group, fmt::format("the oracle '{}' has no kernel for it to compare with", context.oracle));
      continue;
    }
    run_group(context, group, check.op, dtype, check.make(context.values, check.op, dtype));
  }
}

}  // namespace

SuiteOutcome run_suite(const std::string& backend, const Options& options, std::ostream& out) {
  const auto start = std::chrono::steady_clock::now();
  Report report(out, options.verbose);
  ValueSource values(options.seed, options.oracle);
  Context context{backend, options.oracle, ts::backend_capabilities(backend), report, values};
  const ts::BackendCapabilities oracle = ts::backend_capabilities(options.oracle);
  out << fmt::format("Backend '{}' (plugin {}): {} of the {} catalogue ops; oracle '{}'\n", backend,
                     context.capabilities.plugin, context.capabilities.ops.size(),
                     context.capabilities.catalogue_size, options.oracle);
  for (const OpCheck& check : op_checks()) check_op(context, check, oracle);
  // A newer catalogue than this suite knows: its extra ops are shown, not silently passed.
  for (const ts::BackendCapabilities::Op& op : context.capabilities.ops)
    if (std::none_of(op_checks().begin(), op_checks().end(),
                     [&](const OpCheck& c) { return c.op == op.name; }))
      report.skip(op.name, "this conformance suite has no check for it yet");
  check_memory(context);
  check_missing_dtypes(context);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int status = report.summarize(backend, options.oracle, options.seed);
  out << fmt::format("Result for backend '{}': {} in {:.1f} s\n", backend, status == 0 ? "PASS" : "FAIL",
                     seconds);
  return {status, report.passed(), report.failed(), report.skipped(), report.failures(), seconds};
}

}  // namespace conformance

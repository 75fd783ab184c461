#include "error_checks.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <tessera/errors.hpp>

namespace conformance {

namespace ts = tessera;

namespace {

// Runs the cases until one fails, as each must; returns the empty string when the error is right.
std::string probe(Context& context, const std::string& op, const CaseGroup& cases) {
  for (const Case& c : cases.cases) {
    try {
      (void)run_on_tested(context, c);
    } catch (const ts::Error& e) {
      const std::string message = e.what();
      const bool names_op =
          message.find("'" + op + "'") != std::string::npos || message.find("ts::" + op) != std::string::npos;
      const bool names_backend = message.find("'" + context.backend + "'") != std::string::npos;
      context.report.detail(fmt::format("{} {} case {}: {}", op, c.name,
                                        names_op && names_backend ? "ok" : "wrong message", message));
      if (!names_op || !names_backend)
        return fmt::format("case {}: the error does not name op '{}' and backend '{}': {}", c.name, op,
                           context.backend, message);
      return "";
    } catch (const std::exception& e) {
      return fmt::format("case {}: an exception that is not a tessera::Error escaped: {}", c.name, e.what());
    }
  }
  return "no case failed, yet the backend declares no kernel for this dtype";
}

}  // namespace

void check_missing_dtypes(Context& context) {
  int probes = 0;
  for (const ts::BackendCapabilities::Op& provided : context.capabilities.ops) {
    const auto check = std::find_if(op_checks().begin(), op_checks().end(),
                                    [&](const OpCheck& c) { return c.op == provided.name; });
    if (check == op_checks().end()) continue;
    for (ts::DType dtype : check->key_dtypes) {
      if (std::find(provided.dtypes.begin(), provided.dtypes.end(), dtype) != provided.dtypes.end()) continue;
      ++probes;
      const std::string group =
          fmt::format("error {} {} (dtype not provided)", provided.name, ts::dtype_name(dtype));
      const std::string problem =
          probe(context, provided.name, check->make(context.values, provided.name, dtype));
      if (problem.empty())
        context.report.pass(group, 1);
      else
        context.report.fail(group, problem);
    }
  }
  if (probes == 0)
    context.report.skip("error (dtype not provided)",
                        fmt::format("backend '{}' has every catalogue key dtype of each op it provides, "
                                    "so no call can meet a missing dtype",
                                    context.backend));
}

}  // namespace conformance

#include "check_group.hpp"

#include <exception>
#include <optional>
#include <regex>

#include <fmt/format.h>
#include <tessera/errors.hpp>

namespace conformance {

namespace ts = tessera;

namespace {

// The outcome of one side of a case: a result (on the oracle) or an error message.
struct Outcome {
  ts::Tensor result;
  std::optional<std::string> error;
  bool foreign_exception = false;  // an exception other than ts::Error escaped the public API
};

template <class F>
Outcome attempt(F&& f) {
  Outcome outcome;
  try {
    outcome.result = f();
  } catch (const ts::Error& e) {
    outcome.error = e.what();
  } catch (const std::exception& e) {
    outcome.error = e.what();
    outcome.foreign_exception = true;
  }
  return outcome;
}

// A missing-kernel error of the core: "op 'X' has no kernel for dtype Y on backend 'B' ...".
struct MissingKernel {
  std::string op;
  std::string dtype;
  std::string backend;
};

std::optional<MissingKernel> missing_kernel(const std::string& message) {
  static const std::regex pattern(
      "op '([a-z_0-9]+)' has no kernel for dtype ([a-z0-9]+) on backend '([^']+)'");
  std::smatch match;
  if (!std::regex_search(message, match, pattern)) return std::nullopt;
  return MissingKernel{match[1], match[2], match[3]};
}

}  // namespace

ts::Tensor run_on_tested(const Context& context, const Case& c) {
  std::vector<ts::Tensor> moved;
  moved.reserve(c.inputs.size());
  for (const ts::Tensor& input : c.inputs) moved.push_back(input.to(context.backend));
  ts::Tensor result = c.apply(moved, context.backend);
  return result.to(context.oracle);
}

void run_group(Context& context, const std::string& group, const std::string& op, ts::DType dtype,
               const CaseGroup& cases) {
  if (cases.cases.empty()) {
    context.report.skip(group, "this conformance suite has no case for it");
    return;
  }
  int agreed_errors = 0;
  int ran = 0;
  int needs_other_kernels = 0;
  std::string first_need;  // the first missing kernel of another op, with the case that met it
  for (const Case& c : cases.cases) {
    const Outcome expected = attempt([&] { return c.apply(c.inputs, context.oracle); });
    const Outcome got = attempt([&] { return run_on_tested(context, c); });
    if (got.error) {
      if (got.foreign_exception) {
        context.report.fail(
            group, fmt::format("case {}: an exception that is not a tessera::Error escaped: {}", c.name,
                               *got.error));
        return;
      }
      // A kernel of another op (or dtype) the backend lacks: this case cannot run here. The group
      // goes on with its other cases, and the ones that could not run are reported as a skip
      // naming the missing kernel, so they are never mistaken for passes.
      if (std::optional<MissingKernel> missing = missing_kernel(*got.error);
          missing && missing->backend == context.backend &&
          !(missing->op == op && missing->dtype == ts::dtype_name(dtype))) {
        if (needs_other_kernels++ == 0)
          first_need = fmt::format("op '{}' for {} (first in case {})", missing->op, missing->dtype, c.name);
        context.report.detail(fmt::format("{} case {}: skipped: {}", group, c.name, *got.error));
        continue;
      }
      if (expected.error) {  // both refuse (e.g. max of an empty tensor): the agreed behaviour
        ++ran;
        ++agreed_errors;
        context.report.detail(
            fmt::format("{} case {}: error on both, as expected: {}", group, c.name, *got.error));
        continue;
      }
      context.report.fail(group, fmt::format("case {}: error: {}", c.name, *got.error));
      return;
    }
    if (expected.error) {
      context.report.fail(
          group, fmt::format("case {}: expected an error like the oracle's ({}), got a result", c.name,
                             *expected.error));
      return;
    }
    std::optional<std::string> difference;
    try {
      difference = compare(got.result, expected.result, cases.exactness);
    } catch (const std::exception& e) {
      difference = std::string("the result could not be read back: ") + e.what();
    }
    if (difference) {
      context.report.fail(group, fmt::format("case {}, {}", c.name, *difference));
      return;
    }
    ++ran;
    context.report.detail(fmt::format("{} case {}: ok", group, c.name));
  }
  if (ran > 0) context.report.pass(group, ran, agreed_errors);
  if (needs_other_kernels > 0)
    context.report.skip(group, fmt::format("{} of {} cases need {}, not provided by {}", needs_other_kernels,
                                           cases.cases.size(), first_need, context.backend));
}

}  // namespace conformance

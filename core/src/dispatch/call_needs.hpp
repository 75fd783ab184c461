// Which kernels the calls that use kernels the user never names need, as sdk/KERNELS.md's "What
// each call needs" table lists them (tests/kernel_needs checks the table, this list and the calls
// against each other on a backend lacking each kernel in turn). `tessera plugins --verbose` uses it
// to say which of these calls a backend cannot serve.
#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace tessera::dispatch {

struct CallNeeds {
  std::string_view call;              // as missing-kernel errors name it, e.g. "ts::allclose"
  std::string_view variant;           // which use of the call, e.g. "SUM" for an all_reduce; "" for all
  std::vector<std::string_view> ops;  // every kernel op it may call on its operands' backend
};

std::span<const CallNeeds> call_needs();

}  // namespace tessera::dispatch

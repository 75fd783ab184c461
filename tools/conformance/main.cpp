// tessera-conformance: the backend conformance suite. Runs every kernel of
// sdk/KERNELS.md a backend provides through the public API and compares with the oracle backend.
// Exit status: 0 pass, 1 a check failed, 2 usage error, 77 backend unavailable on this machine.
// No exception escapes main.
#include <exception>
#include <iostream>

#include "exit_codes.hpp"
#include "options.hpp"
#include "suite.hpp"
#include "target.hpp"

int main(int argc, char** argv) {
  using namespace conformance;
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "tessera-conformance: error: " << e.what() << '\n' << usage_text();
    return kExitUsage;
  }
  if (options.help) {
    std::cout << usage_text();
    return kExitPass;
  }
  try {
    check_oracle(options.oracle);
    const std::vector<std::string> backends = resolve_backends(options.backend);
    int status = kExitPass;
    for (const std::string& backend : backends)
      if (run_suite(backend, options, std::cout).status != kExitPass) status = kExitFail;
    return status;
  } catch (const UsageError& e) {
    std::cerr << "tessera-conformance: error: " << e.what() << '\n';
    return kExitUsage;
  } catch (const Unavailable& e) {
    std::cout << "SKIPPED: backend '" << e.backend() << "' is not available: " << e.what() << '\n';
    return kExitUnavailable;
  } catch (const LoadFailure& e) {
    std::cout << "FAIL load: " << e.what() << '\n';
    return kExitFail;
  } catch (const std::exception& e) {
    // Something outside any check group (e.g. the oracle failing to make inputs): a failure.
    std::cout << "FAIL suite: " << e.what() << '\n';
    return kExitFail;
  }
}

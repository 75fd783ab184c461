// What --backend names, resolved to the backends to test: a registered (or loadable) backend name,
// or a plugin file whose backend components are tested.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace conformance {

// The backend exists in principle but cannot run on this machine (exit 77, shown as skipped).
class Unavailable : public std::runtime_error {
 public:
  Unavailable(std::string backend, const std::string& reason)
      : std::runtime_error(reason), backend_(std::move(backend)) {}
  const std::string& backend() const { return backend_; }

 private:
  std::string backend_;
};

// The plugin is there but was rejected (exit 1: a broken plugin fails conformance).
class LoadFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws UsageError (unknown name, missing file, a file without backends), Unavailable or LoadFailure.
std::vector<std::string> resolve_backends(const std::string& argument);

// Throws UsageError when the oracle cannot be used.
void check_oracle(const std::string& oracle);

}  // namespace conformance

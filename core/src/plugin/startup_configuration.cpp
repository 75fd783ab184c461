#include "plugin/startup_configuration.hpp"

#include <atomic>

namespace tessera::plugin {
namespace {

// Set while the library loads and only read after: code, not state a world could change.
// constinit, so that the installer, in another file's static initialization, finds it ready.
constinit std::atomic<void (*)()> startup_configuration{nullptr};

}  // namespace

void install_startup_configuration(void (*apply)()) { startup_configuration.store(apply); }

void apply_startup_configuration() {
  if (void (*apply)() = startup_configuration.load()) apply();
}

}  // namespace tessera::plugin

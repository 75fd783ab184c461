// Backends as the core looks them up: the plugin registry's backend components, typed. The dispatch
// layer owns that kind: it makes a Backend of each backend table the registry registers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dispatch/backend.hpp"

namespace tessera::dispatch {

// The backend called `name`, loading backend-<name> from the plugin search path when no loaded
// plugin provides it; an Error naming the backends available when none can.
std::shared_ptr<const Backend> backend(const std::string& name);
// The configured default backend ("cpu" unless configured otherwise).
std::shared_ptr<const Backend> default_backend();
// Limits the threads one kernel call may use on every loaded backend (0 = each backend's default).
void set_backend_threads(int32_t num_threads);

}  // namespace tessera::dispatch

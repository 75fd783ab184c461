// The start-up configuration (TESSERA_* variables, tessera.toml) is applied on the library's first
// use, and the first use may be a lookup in the plugin registry, or the default topology. Reading
// the configuration is the api layer's work (configure_from_environment), above everything that
// needs it applied first: api installs it here when the library loads, and the layers below call it
// through this hook without naming api.
#pragma once

namespace tessera::plugin {

// Installed once by api while the library loads.
void install_startup_configuration(void (*apply)());
// Applies the start-up configuration once per process (later calls return at once, as does a
// nested call on the thread applying it). Nothing is applied before api has installed it.
void apply_startup_configuration();

}  // namespace tessera::plugin

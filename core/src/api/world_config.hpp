// configure() hands the [world] keys to init_world (api/init_world.cpp), which applies them when it
// makes the process world; after that they cannot change.
#pragma once

#include "tessera/config.hpp"

namespace tessera::api {

// Records `config`'s [world] keys (environment already applied) for init_world; throws ConfigError
// naming the key when the process world exists and the key asks for something else.
void set_world_config(const Config& config);

}  // namespace tessera::api

// Before a world spread over processes computes anything, its processes agree on everything that
// decides how they exchange messages or what their results are: a process started with other
// settings (another TESSERA_RANKS_PER_PROCESS, other collective rules, checks on where the others
// have them off, another build) would otherwise pair its messages with the wrong ones and print a
// wrong result.
#pragma once

#include <map>
#include <string>

#include "tessera/config.hpp"

namespace tessera::world {
class ProcessLink;
}

namespace tessera::api {

// The settings every process of the world must share, by name (values as text).
std::map<std::string, std::string> world_settings(const Config& config, const world::ProcessLink& link,
                                                  bool check_collectives);

// Gathers every process's settings over `link` and throws an Error, on every process alike, naming
// each setting that differs with each process's value.
void require_agreement(world::ProcessLink& link, const std::map<std::string, std::string>& mine);

}  // namespace tessera::api

#include "tensor/remote_ranks.hpp"

namespace tessera::detail {
namespace {

// Written once while the library loads (a static initialiser in the world layer), read after.
constinit RemoteRanks installed{};

}  // namespace

void install_remote_ranks(RemoteRanks answers) { installed = answers; }
int remote_process_of(int rank) { return installed.process_of != nullptr ? installed.process_of(rank) : -1; }
int ranks_elsewhere() { return installed.elsewhere != nullptr ? installed.elsewhere() : 0; }

}  // namespace tessera::detail

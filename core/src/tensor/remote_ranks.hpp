// What the tensor layer may ask about ranks a local tensor does not hold: whether another process
// hosts them (a world spread over processes). The world layer, above this one, knows the calling
// thread's world and installs the answers once, when the library loads; until then (and in a
// simulated world) no rank is elsewhere.
#pragma once

namespace tessera::detail {

struct RemoteRanks {
  int (*process_of)(int rank) = nullptr;  // the process hosting `rank` when not this one, else -1
  int (*elsewhere)() = nullptr;           // how many ranks of the calling thread's world other processes host
};

void install_remote_ranks(RemoteRanks answers);
// -1 when `rank` is not hosted by another process.
int remote_process_of(int rank);
int ranks_elsewhere();

}  // namespace tessera::detail

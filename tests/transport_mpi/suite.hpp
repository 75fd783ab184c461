// The checks of a transport, by theme. Each runs on every process of the world with the same
// arguments and uses tags of its own, so the themes do not see each other's messages.
#pragma once

#include "client.hpp"

namespace transport_test {

// init's report against the world known independently (mpirun's environment, the -np given).
void check_world(const tessera_transport_info& info, const World& expected);
// Ring exchanges: several messages per (peer, tag) in order, sizes 0 / 1 / 1 MiB, dtypes and shapes.
void check_ring(Client& client, const World& world);
// test() gives done = 0 while the matching send is provably not posted, 1 after completion.
void check_test_before_send(Client& client, const World& world);
// allgather of distinct byte strings, in process order; also of 0 bytes.
void check_allgather(Client& client, const World& world);
// allgather timing out on process 0 while the others are held back; they join later, and the
// gather left pending inside process 0's transport completes with them (finalize checks that).
void check_allgather_timeout(Client& client, const World& world);
// wait timing out on a receive never sent, then free_request cancelling it cleanly.
void check_timeout_and_cancel(Client& client, const World& world);
// Messages shorter and longer than the receive buffer.
void check_length_mismatch(Client& client, const World& world);
// Peers, tags and chunks the transport must refuse, each error naming the value.
void check_bad_arguments(Client& client, const World& world);

// All of the above after init, for a world of any size (themes that need a peer skip on 1 process).
void check_all(Client& client, const World& world);

}  // namespace transport_test

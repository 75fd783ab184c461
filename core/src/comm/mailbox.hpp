// Point-to-point messages between simulated ranks: sends are buffered per (source, destination)
// pair; a receive takes the oldest one.
#pragma once

#include "tessera/tensor.hpp"

namespace tessera::comm {

void post(int from, int to, Tensor data);
// The oldest message from `from` to `to`; throws naming both ranks when there is none.
Tensor take(int from, int to);
// Throws (and forgets them) when messages are waiting that nobody received; `where` names the
// call that noticed.
void require_no_pending_messages(const char* where);

}  // namespace tessera::comm

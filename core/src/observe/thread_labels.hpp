// The calling thread's CommLabel labels as a value a coroutine can carry (see comm_counter.cpp).
#pragma once

#include <string>

namespace tessera::observe {

struct ThreadLabels {
  std::string mesh_dim;
  std::string op;
};

// Swaps the calling thread's labels with `other`: a coroutine running a rank's program (ts::spawn)
// keeps its own CommLabel scopes while another rank runs on the thread.
void exchange_labels(ThreadLabels& other);

}  // namespace tessera::observe

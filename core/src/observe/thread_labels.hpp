// The calling thread's CommLabel labels as a value a coroutine can carry (see comm_counter.cpp).
#pragma once

#include <string>

namespace tessera::observe {

struct ThreadLabels {
  std::string mesh_dim;
  std::string op;
};

// The calling thread's labels, by address (fixed for the thread's life): a coroutine running a
// rank's program (ts::spawn) keeps its own CommLabel scopes while another rank runs on the thread,
// and its scheduler, which takes these once per thread, swaps them at every switch.
struct ThreadLabelsAt {
  std::string* mesh_dim = nullptr;
  std::string* op = nullptr;
};
ThreadLabelsAt thread_labels_at();

// Swaps the labels at `here` with `other`; labels are mostly empty on both sides, and two empty
// strings need no swap.
inline void exchange_labels(const ThreadLabelsAt& here, ThreadLabels& other) {
  if (!here.mesh_dim->empty() || !other.mesh_dim.empty()) here.mesh_dim->swap(other.mesh_dim);
  if (!here.op->empty() || !other.op.empty()) here.op->swap(other.op);
}

}  // namespace tessera::observe

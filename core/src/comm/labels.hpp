// The calling thread's communication labels: the mesh dim the communication it issues runs along
// and the op that caused it, which counters and traces report it under. Kept with the collectives
// that carry them, so that DTensor code labels its work with nothing above comm; the public face
// is ts::CommLabel (tessera/observe.hpp).
#pragma once

#include <string>

namespace tessera::comm {

// The labels of the innermost scope on this thread ("" outside every one).
const std::string& current_mesh_dim();
const std::string& current_op();
// Sets both labels; an empty `op` keeps the outer scope's op (a mesh dim of a redistribution it
// caused).
void set_labels(std::string mesh_dim, std::string op);
// Puts back labels saved from current_mesh_dim() and current_op(), as a scope ends.
void restore_labels(std::string mesh_dim, std::string op);

// Labels what the calling thread issues while alive; scopes nest and restore the outer labels.
class LabelScope {
 public:
  explicit LabelScope(std::string mesh_dim, std::string op = "");
  ~LabelScope();
  LabelScope(const LabelScope&) = delete;
  LabelScope& operator=(const LabelScope&) = delete;

 private:
  std::string saved_mesh_dim_;
  std::string saved_op_;
};

// The calling thread's labels as a value a coroutine can carry.
struct ThreadLabels {
  std::string mesh_dim;
  std::string op;
};

// The calling thread's labels, by address (fixed for the thread's life): a coroutine running a
// rank's program (ts::spawn) keeps its own label scopes while another rank runs on the thread, and
// its scheduler, which takes these once per thread, swaps them at every switch.
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

}  // namespace tessera::comm

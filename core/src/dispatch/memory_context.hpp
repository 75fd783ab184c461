// What the memory accounting (tensor/memory_accounting.hpp) asks about the thread that allocates:
// the category its bytes belong to and the rank whose task it runs. Both live here, below the
// tensor layer, because the SPMD runner hands them to the pool threads that run rank tasks, as it
// does the issuing thread's world and user call.
#pragma once

#include <string>

namespace tessera::dispatch {

// The category named by the innermost ts::MemoryCategory scope on this thread (a rank task on a
// pool thread sees its issuing thread's); nullptr when no scope is open.
const std::string* memory_category();

// Makes `category` (which must outlive its use) this thread's memory_category(); returns the one it
// replaces, for the caller to put back.
const std::string* exchange_memory_category(const std::string* category);

// While alive, memory_category() on this thread is `category` (which must outlive the scope);
// scopes nest and restore the outer one.
class MemoryCategoryBinding {
 public:
  explicit MemoryCategoryBinding(const std::string* category);
  ~MemoryCategoryBinding();
  MemoryCategoryBinding(const MemoryCategoryBinding&) = delete;
  MemoryCategoryBinding& operator=(const MemoryCategoryBinding&) = delete;

 private:
  const std::string* saved_;
};

// The rank whose task this thread is running (run_ranks, run_rank in tessera/detail/spmd.hpp);
// -1 outside rank tasks.
int rank_task_rank();

}  // namespace tessera::dispatch

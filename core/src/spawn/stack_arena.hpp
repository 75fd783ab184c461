// The coroutine stacks of one spawn's ranks, cut from one mapping: a stack per rank with a guard
// page below it. One mapping per rank cost a map, a protect and an unmap system call each (and a
// flush of the address translations at every unmap): at a thousand ranks most of a spawn's start
// and end. Here the whole arena is mapped and unmapped once; each rank's guard page is made as the
// rank starts.
#pragma once

#include <boost/context/stack_context.hpp>
#include <cstddef>

namespace tessera::spawned {

class StackArena {
 public:
  // Room for `count` stacks of `stack_bytes` each (rounded up to whole pages); reserves address
  // space only: a page takes memory once a rank touches it.
  StackArena(size_t count, size_t stack_bytes);
  ~StackArena();
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;

  // The stack of slot `index` (each slot is handed out once), its guard page made inaccessible.
  boost::context::stack_context take(size_t index);

 private:
  boost::context::stack_context stack_of(char* slot) const;

  char* base_ = nullptr;
  size_t page_ = 0;
  size_t slot_bytes_ = 0;  // guard page and stack
  size_t count_ = 0;
  bool guard_regions_ = true;  // until the kernel refuses them
};

}  // namespace tessera::spawned

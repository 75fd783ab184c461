#include "spawn/stack_arena.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "tessera/errors.hpp"

namespace tessera::spawned {
namespace {

// madvise's guard-region request (Linux 6.13), which this system's headers may predate.
#ifdef MADV_GUARD_INSTALL
constexpr int kMadviseGuardInstall = MADV_GUARD_INSTALL;
#else
constexpr int kMadviseGuardInstall = 102;
#endif

}  // namespace

StackArena::StackArena(size_t count, size_t stack_bytes) : count_(count) {
  page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t max = std::numeric_limits<size_t>::max();
  if (stack_bytes > max - 2 * page_)
    throw Error(fmt::format("ts::spawn: a stack of {} bytes per rank cannot be mapped", stack_bytes));
  slot_bytes_ = (stack_bytes + page_ - 1) / page_ * page_ + page_;
  if (count_ > max / slot_bytes_)
    throw Error(
        fmt::format("ts::spawn: {} stacks of {} bytes each overflow the address space", count_, stack_bytes));
  const size_t bytes = count_ * slot_bytes_;
  // MAP_NORESERVE: the arena is address space; only the pages ranks touch are ever committed.
  void* mapped =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED)
    throw Error(
        fmt::format("ts::spawn: mapping {} stacks of {} bytes ({} bytes in all) failed: {}; give "
                    "fewer ranks or a smaller SpawnOptions::stack_bytes",
                    count_, slot_bytes_ - page_, bytes, std::strerror(errno)));
  base_ = static_cast<char*>(mapped);
}

StackArena::~StackArena() {
  if (base_ != nullptr) ::munmap(base_, count_ * slot_bytes_);
}

boost::context::stack_context StackArena::take(size_t index) {
  if (index >= count_) throw Error(fmt::format("ts::spawn: stack {} asked of an arena of {}", index, count_));
  char* slot = base_ + index * slot_bytes_;
  // The guard below the stack: an overflow faults here instead of writing into the next rank's
  // stack. A guard region (Linux 6.13 on) marks the page in the page table alone; protecting it
  // instead splits the arena's mapping in three, and a thousand such splits are most of a spawn's
  // start.
  if (guard_regions_ && ::madvise(slot, page_, kMadviseGuardInstall) == 0) return stack_of(slot);
  guard_regions_ = false;  // an older kernel (EINVAL): protect each guard page instead
  if (::mprotect(slot, page_, PROT_NONE) != 0)
    throw Error(fmt::format("ts::spawn: protecting the guard page of rank {}'s stack failed: {}", index,
                            std::strerror(errno)));
  return stack_of(slot);
}

boost::context::stack_context StackArena::stack_of(char* slot) const {
  boost::context::stack_context stack;
  stack.size = slot_bytes_ - page_;
  stack.sp = slot + slot_bytes_;  // the top: stacks grow down
  return stack;
}

}  // namespace tessera::spawned

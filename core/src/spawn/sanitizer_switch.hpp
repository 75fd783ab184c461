// Telling AddressSanitizer about the switches between the scheduler's stack and the ranks'
// coroutine stacks. Without it ASan takes a coroutine stack for a wild region of the thread's own
// and may report false errors (or miss real ones) when an exception unwinds a rank's program. The
// Boost.Context that Debian ships is built for fcontext, which does not tell ASan itself, so the
// scheduler does, around every resume. Outside ASan builds these are empty.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_SPAWN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_SPAWN_ASAN 1
#endif
#endif

#if defined(TESSERA_SPAWN_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace tessera::spawned {

// A stack's lowest address and size, as ASan wants them.
struct StackBounds {
  const void* bottom = nullptr;
  size_t size = 0;
};

// Before switching to the stack `to`. `fake_stack` keeps the leaving side's fake frames (ASan's
// detect_stack_use_after_return) until it is resumed; null when the leaving side ends for good.
inline void start_switch([[maybe_unused]] void** fake_stack, [[maybe_unused]] const StackBounds& to) {
#if defined(TESSERA_SPAWN_ASAN)
  __sanitizer_start_switch_fiber(fake_stack, to.bottom, to.size);
#endif
}

// Right after arriving: `fake_stack` is what this side saved when it left (null on its first
// entry); `from` receives the bounds of the stack that switched here.
inline void finish_switch([[maybe_unused]] void* fake_stack, [[maybe_unused]] StackBounds* from) {
#if defined(TESSERA_SPAWN_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, from ? &from->bottom : nullptr, from ? &from->size : nullptr);
#endif
}

}  // namespace tessera::spawned

// Marks memory a pool holds free as unreadable to AddressSanitizer, and readable again when the
// pool hands it out: a block kept for reuse instead of freed must still report a use after free.
// Without ASan both are no-ops.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_SDK_POISONS_MEMORY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_SDK_POISONS_MEMORY 1
#endif
#endif
#if defined(TESSERA_SDK_POISONS_MEMORY)
#include <sanitizer/asan_interface.h>
#endif

namespace tessera::sdk {

inline void poison_memory(void* bytes, size_t count) {
#if defined(TESSERA_SDK_POISONS_MEMORY)
  ASAN_POISON_MEMORY_REGION(bytes, count);
#else
  static_cast<void>(bytes), static_cast<void>(count);
#endif
}

inline void unpoison_memory(void* bytes, size_t count) {
#if defined(TESSERA_SDK_POISONS_MEMORY)
  ASAN_UNPOISON_MEMORY_REGION(bytes, count);
#else
  static_cast<void>(bytes), static_cast<void>(count);
#endif
}

}  // namespace tessera::sdk

// A thread-local variable's address, computed once per function.
//
// In a shared object (a plugin, libtessera itself) every access to a thread-local variable is a
// call to __tls_get_addr, and GCC recomputes the address at every use rather than keep it in a
// register: an allocator's free path made three such calls. Passing the address through an empty
// asm hides where it came from, so the compiler keeps the one it has.
#pragma once

namespace tessera::sdk {

template <class T>
T& thread_local_address(T& variable) {
  T* address = &variable;
#if defined(__GNUC__)
  asm("" : "+r"(address));
#endif
  return *address;
}

}  // namespace tessera::sdk

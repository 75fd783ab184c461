#include "plugin/readable_memory.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>

namespace tessera::plugin {
namespace {

// process_vm_readv on this very process: the kernel copies the bytes and reports EFAULT for an
// address that is not mapped readable, where a plain load would fault.
bool read_through_kernel(const void* address, void* out, std::size_t bytes, bool& supported) {
  iovec local{out, bytes};
  iovec remote{const_cast<void*>(address), bytes};
  const ssize_t copied = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
  supported = !(copied < 0 && (errno == ENOSYS || errno == EPERM));
  return copied == static_cast<ssize_t>(bytes);
}

// Where process_vm_readv is not allowed (a seccomp profile): write() into a pipe fails with EFAULT
// on unreadable memory as well, and the bytes come back out of the pipe.
bool read_through_pipe(const void* address, void* out, std::size_t bytes) {
  int ends[2];
  if (::pipe(ends) != 0) return false;
  bool ok = true;
  auto* to = static_cast<char*>(out);
  const auto* from = static_cast<const char*>(address);
  constexpr std::size_t kPiece = 4096;  // well under a pipe's capacity: a write never blocks
  for (std::size_t done = 0; ok && done < bytes;) {
    const std::size_t piece = bytes - done < kPiece ? bytes - done : kPiece;
    ok = ::write(ends[1], from + done, piece) == static_cast<ssize_t>(piece) &&
         ::read(ends[0], to + done, piece) == static_cast<ssize_t>(piece);
    done += piece;
  }
  ::close(ends[0]);
  ::close(ends[1]);
  return ok;
}

}  // namespace

bool read_if_readable(const void* address, void* out, std::size_t bytes) {
  if (bytes == 0) return true;
  if (address == nullptr) return false;
  // The range must not wrap around the address space.
  if (reinterpret_cast<std::uintptr_t>(address) > UINTPTR_MAX - bytes) return false;
  bool supported = true;
  if (read_through_kernel(address, out, bytes, supported)) return true;
  return !supported && read_through_pipe(address, out, bytes);
}

bool readable(const void* address, std::size_t bytes) {
  std::array<char, 4096> piece;
  const auto* from = static_cast<const char*>(address);
  for (std::size_t done = 0; done < bytes; done += piece.size()) {
    const std::size_t n = bytes - done < piece.size() ? bytes - done : piece.size();
    if (!read_if_readable(from + done, piece.data(), n)) return false;
  }
  return true;
}

}  // namespace tessera::plugin

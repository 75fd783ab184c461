// A rank whose program runs past its stack must fault at the guard page below it, never write on
// into the stack of the rank below (stacks lie side by side in one mapping). Rank 2 of 3 recurses
// about 16 KiB past its 64 KiB stack: far enough to cross the 4 KiB guard into the next stack, not
// far enough to leave the mapping. Run by tests/mpi/expect_failure.cmake: the process must die.
#include <cstdio>
#include <tessera/tessera.hpp>

namespace {

// About 1 KiB of frame per call, kept by the volatile array and the work after the call.
[[gnu::noinline]] int deepen(int calls) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(calls);
  if (calls == 0) return frame[0];
  return deepen(calls - 1) + frame[0];
}

}  // namespace

int main() {
  tessera::SpawnOptions options;
  options.stack_bytes = 64 * 1024;
  std::puts("deepening");
  std::fflush(stdout);
  tessera::spawn(
      3,
      [](int rank) {
        if (rank == 2) std::printf("%d\n", deepen(80));
      },
      options);
  std::puts("FAIL: rank 2 ran past its stack without a fault");
  return 0;
}

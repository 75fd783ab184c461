// The one-core fused multiply-add peak of this machine, measured: what a matmul kernel is held to.
#pragma once

namespace bench {

// GFLOP/s of independent float32 FMA chains on the calling thread, with the widest vectors the CPU
// has (AVX-512 or AVX2; 0 on a CPU with neither), timed on the thread's CPU clock so another
// process on the machine does not lower it. Best of a few short runs; measured once per process.
double fma_peak_gflops();

}  // namespace bench

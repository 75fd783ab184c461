// TESSERA_CPU_VECTOR_CLONES: a loop function compiled three times, for AVX-512, AVX2 and the
// baseline x86-64 (SSE2), the version the CPU has chosen when the plugin loads (GCC's
// target_clones, an ifunc). The package is built for the baseline, so without this the hot
// element-wise loops ran four floats per instruction on CPUs that take sixteen.
//
// Only loops of one IEEE operation per element (and integer or bool ones) carry it: an add, a
// multiply, a compare, a select or a division rounds the same at every vector width, so every
// clone gives the same bits (the kernels' NaN results are settled to one NaN, sdk::hd::settled).
// The plugin compiles with -ffp-contract=off where a loop could fuse a multiply-add (creation.cpp).
#pragma once

// GCC only: Clang (the fuzzing build's compiler) does not clone function templates, which the
// kernels are; there the loops stay baseline.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define TESSERA_CPU_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TESSERA_CPU_VECTOR_CLONES
#endif

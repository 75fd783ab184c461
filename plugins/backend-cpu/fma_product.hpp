// The CPU backend's floating-point matrix product, c = a b, where every element of c is one chain
// of fused multiply-adds along the inner dim, in order:
//
//   s = +0;  for q = 0 .. k-1:  s = fma(a[i, q], b[q, j], s);  c[i, j] = s
//
// fma rounds once, the same on every CPU, so the bits of c depend on a and b alone: not on the
// CPU's vector unit (AVX-512, AVX2 or none), not on how the product is cut into tiles or threads,
// and not on which other rows share a call. OpenBLAS picked different kernels, with different
// inner sums, on different CPUs (docs/design.md: same bits by design, not by machine).
#pragma once

#include <cstdint>

namespace tessera::cpu {

// c[i, j] sits at c + i * c_row + j; a[i, q] at a + i * a_row + q * a_col; b[q, j] at
// b + q * b_row + j (its rows must have unit stride: the tiles load a row of b as one vector).
template <class T>
struct FmaProduct {
  const T* a;
  int64_t a_row, a_col;
  const T* b;
  int64_t b_row;
  T* c;
  int64_t c_row;
  int64_t m, n, k;
};

// Which instructions compute the tiles. Each gives the same bits; the widest one the CPU has is
// the fastest.
enum class VectorUnit { portable, avx2, avx512 };

const char* name_of(VectorUnit unit);
bool cpu_has(VectorUnit unit);
VectorUnit widest_vector_unit();

// Requires cpu_has(unit). Any of m, n, k may be 0 (k = 0 gives zeros).
void fma_product(const FmaProduct<float>& p, VectorUnit unit = widest_vector_unit());
void fma_product(const FmaProduct<double>& p, VectorUnit unit = widest_vector_unit());

}  // namespace tessera::cpu

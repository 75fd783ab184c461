// What fma_product.cpp hands each vector unit: one tile of the output, at most `rows` x `cols`,
// over `depth` steps of the inner dim. The tile functions live in fma_tiles_<unit>.cpp, each
// compiled for its own instruction set and called only on a CPU that has it.
#pragma once

#include <cstdint>

namespace tessera::cpu {

template <class T>
struct FmaTile {
  const T* a;  // a[i0, q0]
  int64_t a_row, a_col;
  const T* b;  // b[q0, j0]
  int64_t b_row;
  T* c;  // c[i0, j0]
  int64_t c_row;
  int rows, cols;   // of this tile: at most the unit's tile shape
  int64_t depth;    // inner-dim steps in this pass
  bool accumulate;  // continue the chains already in c (a later pass), or start them at +0
};

template <class T>
using FmaTileFunction = void (*)(const FmaTile<T>&);

// Largest tile of each unit: `rows` rows of a times `cols` columns of b. The accumulators of one
// tile fill the unit's register file (AVX-512: 24 of 32 registers, AVX2: 12 of 16), with room
// for one vector of b per column group and a broadcast element of a.
struct FmaTileShape {
  int rows, cols;
};

#if defined(__x86_64__)
void avx512_tile(const FmaTile<float>& t);
void avx512_tile(const FmaTile<double>& t);
void avx2_tile(const FmaTile<float>& t);
void avx2_tile(const FmaTile<double>& t);
template <class T>
inline constexpr FmaTileShape kAvx512Tile{8, 3 * 64 / static_cast<int>(sizeof(T))};
template <class T>
inline constexpr FmaTileShape kAvx2Tile{4, 3 * 32 / static_cast<int>(sizeof(T))};
#endif

}  // namespace tessera::cpu

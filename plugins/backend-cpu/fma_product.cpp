// Cuts a product into tiles and passes over the inner dim, and picks the vector unit. Neither
// choice changes a bit of the result (fma_product.hpp): both are free to follow speed alone.
#include "fma_product.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "checks.hpp"
#include "fma_tiles.hpp"

namespace tessera::cpu {
namespace {

// The portable tile: the same chains, one element at a time, for CPUs without AVX2 and FMA (or not
// x86). std::fma is the exactly rounded operation the vector units perform.
constexpr FmaTileShape kPortableTile{4, 16};

template <class T>
void portable_tile(const FmaTile<T>& t) {
  for (int r = 0; r < t.rows; ++r) {
    T* row = t.c + r * t.c_row;
    T acc[kPortableTile.cols];
    for (int j = 0; j < t.cols; ++j) acc[j] = t.accumulate ? row[j] : T(0);
    const T* a = t.a + r * t.a_row;
    const T* b = t.b;
    for (int64_t q = 0; q < t.depth; ++q, a += t.a_col, b += t.b_row)
      for (int j = 0; j < t.cols; ++j) acc[j] = std::fma(*a, b[j], acc[j]);
    std::copy(acc, acc + t.cols, row);
  }
}

template <class T>
struct TileKind {
  FmaTileFunction<T> function;
  FmaTileShape shape;
};

template <class T>
TileKind<T> tile_kind(VectorUnit unit) {
  if (!cpu_has(unit))
    fail(std::string("fma_product: this CPU has no ") + name_of(unit) + ", expected one of its vector units");
  switch (unit) {
#if defined(__x86_64__)
    case VectorUnit::avx512:
      return {&avx512_tile, kAvx512Tile<T>};
    case VectorUnit::avx2:
      return {&avx2_tile, kAvx2Tile<T>};
#endif
    default:
      return {&portable_tile<T>, kPortableTile};
  }
}

// Inner-dim steps per pass. A pass reloads the tile's accumulators from c, so the step trades that
// against keeping the pass's rows of b in cache; measured on this project's 2-core machine (Zen 5):
// a few rows of a stream all of b once and do best with short passes, many rows reuse each pass.
int64_t depth_per_pass(int64_t m) { return m <= 16 ? 32 : 128; }

// Rows of a from which a pass's column tile of b is first copied into a block of its own: the
// copy is read by every row tile (m / 8 of them), from L1, where b's own rows are a row stride
// apart (a power of two for the usual shapes, so they crowd into a few cache sets). Fewer rows do
// not repay the copy.
constexpr int64_t kPackMinRows = 32;

// Passes over the inner dim; in each, one column tile of b at a time is packed (its rows `width`
// apart) and every row tile runs against the packed copy. Same chains as run_tiles: same bits.
template <class T>
void run_packed_tiles(const FmaProduct<T>& p, const TileKind<T>& kind, int64_t step) {
  const int64_t width = kind.shape.cols;
  std::vector<T> packed(static_cast<size_t>(step * width));
  for (int64_t q0 = 0; q0 < p.k; q0 += step) {
    const int64_t depth = std::min(step, p.k - q0);
    for (int64_t j0 = 0; j0 < p.n; j0 += width) {
      const int cols = static_cast<int>(std::min(width, p.n - j0));
      for (int64_t q = 0; q < depth; ++q) {
        const T* row = p.b + (q0 + q) * p.b_row + j0;
        std::copy(row, row + cols, packed.data() + q * width);
      }
      for (int64_t i0 = 0; i0 < p.m; i0 += kind.shape.rows) {
        const int rows = static_cast<int>(std::min<int64_t>(kind.shape.rows, p.m - i0));
        kind.function({p.a + i0 * p.a_row + q0 * p.a_col, p.a_row, p.a_col, packed.data(), width,
                       p.c + i0 * p.c_row + j0, p.c_row, rows, cols, depth, q0 > 0});
      }
    }
  }
}

template <class T>
void run_tiles(const FmaProduct<T>& p, VectorUnit unit) {
  const TileKind<T> kind = tile_kind<T>(unit);
  if (p.m == 0 || p.n == 0) return;
  if (p.k == 0) {  // an empty sum
    for (int64_t i = 0; i < p.m; ++i) std::fill(p.c + i * p.c_row, p.c + i * p.c_row + p.n, T(0));
    return;
  }
  const int64_t step = depth_per_pass(p.m);
  if (p.m >= kPackMinRows) return run_packed_tiles(p, kind, step);
  for (int64_t q0 = 0; q0 < p.k; q0 += step) {
    const int64_t depth = std::min(step, p.k - q0);
    for (int64_t i0 = 0; i0 < p.m; i0 += kind.shape.rows) {
      const int rows = static_cast<int>(std::min<int64_t>(kind.shape.rows, p.m - i0));
      for (int64_t j0 = 0; j0 < p.n; j0 += kind.shape.cols) {
        const int cols = static_cast<int>(std::min<int64_t>(kind.shape.cols, p.n - j0));
        kind.function({p.a + i0 * p.a_row + q0 * p.a_col, p.a_row, p.a_col, p.b + q0 * p.b_row + j0, p.b_row,
                       p.c + i0 * p.c_row + j0, p.c_row, rows, cols, depth, q0 > 0});
      }
    }
  }
}

}  // namespace

const char* name_of(VectorUnit unit) {
  switch (unit) {
    case VectorUnit::avx512:
      return "AVX-512";
    case VectorUnit::avx2:
      return "AVX2 with FMA";
    case VectorUnit::portable:
      return "portable fma";
  }
  return "an unknown vector unit";
}

bool cpu_has(VectorUnit unit) {
#if defined(__x86_64__)
  switch (unit) {
    case VectorUnit::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    case VectorUnit::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case VectorUnit::portable:
      return true;
  }
  return false;
#else
  return unit == VectorUnit::portable;
#endif
}

VectorUnit widest_vector_unit() {
  static const VectorUnit widest = cpu_has(VectorUnit::avx512) ? VectorUnit::avx512
                                   : cpu_has(VectorUnit::avx2) ? VectorUnit::avx2
                                                               : VectorUnit::portable;
  return widest;
}

void fma_product(const FmaProduct<float>& p, VectorUnit unit) { run_tiles(p, unit); }
void fma_product(const FmaProduct<double>& p, VectorUnit unit) { run_tiles(p, unit); }

}  // namespace tessera::cpu

// float32 <-> bfloat16 / float16 over contiguous buffers, the conversions mixed precision training
// runs most, written with the vector unit's own instructions (AVX-512, or AVX2 with F16C) and
// chosen once for the CPU. They give the bits of sdk/cpp/half_precision.hpp's scalar conversions:
// bfloat16 rounds to nearest even by integer operations; float16 rounds with the F16C instruction,
// whose IEEE rounding is that rule, with NaN lanes set to the one positive quiet NaN first; float16
// infinities and NaNs widen with their payload as it is (the instruction would quiet a signalling
// NaN). Past a few MiB the results are written with non-temporal stores, as a large memcpy's are:
// a buffer that large does not stay in cache for its reader anyway, and streaming it skips reading
// each destination line into the cache before overwriting it (a third more memory traffic).
#pragma once

#include <cstdint>

namespace tessera::cpu {

void narrow_to_bfloat16(const float* x, uint16_t* y, int64_t n);
void narrow_to_float16(const float* x, uint16_t* y, int64_t n);
void widen_from_bfloat16(const uint16_t* x, float* y, int64_t n);
void widen_from_float16(const uint16_t* x, float* y, int64_t n);

}  // namespace tessera::cpu

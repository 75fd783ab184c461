// The reference random-number algorithm every Tessera backend implements bit for bit.
//
// Counter-based (no state to carry between elements): element i of a "uniform" or "normal" kernel
// call with attributes (seed, offset) depends only on (seed, offset + i). That is what makes random
// tensors identical whichever backend, thread count or chunking produced them. The core advances
// a generator's offset by the number of counters a call consumed.
#pragma once

#include <cmath>
#include <cstdint>

namespace tessera::sdk::counter_rng {

// SplitMix64's finaliser over a Weyl sequence: a well-mixed 64-bit value per (seed, counter).
inline uint64_t bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform(uint64_t seed, uint64_t counter) {
  return static_cast<double>(bits(seed, counter) >> 11) * 0x1.0p-53;
}

// Standard normal for element i via Box-Muller on counters 2i and 2i+1 (the cosine branch only,
// so every element costs two counters and no state is shared between elements).
inline double normal(uint64_t seed, uint64_t element_counter) {
  const double u1 = 1.0 - uniform(seed, 2 * element_counter);  // (0, 1]: log stays finite
  const double u2 = uniform(seed, 2 * element_counter + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

}  // namespace tessera::sdk::counter_rng

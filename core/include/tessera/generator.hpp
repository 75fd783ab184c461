// Seedable random-number generator for rand/randn.
//
// A generator is (seed, offset). Every random kernel call consumes a block of counters starting at
// the offset (the counter-based algorithm of tessera/sdk/cpp/counter_rng.hpp), so the numbers
// depend only on the seed and on how many numbers were drawn before, never on threads or backend.
#pragma once

#include <cstdint>

#include "tessera/sym_int.hpp"

namespace tessera {

class Generator {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  // Reserves `count` counters and returns the first.
  uint64_t advance(uint64_t count) {
    const uint64_t first = offset_;
    offset_ += count;
    return first;
  }

  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide default generator used when none is passed (guarded by a mutex inside).
Generator& default_generator();
void manual_seed(uint64_t seed);
// Reseeds: inside a LocalMode every rank's generator (a LocalInt seeds each rank with its own
// value); outside, the default generator (which then needs a plain value).
void manual_seed(const SymInt& seed);

}  // namespace tessera

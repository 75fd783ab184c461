// Bitwise equality of values, for the tests that promise "the same bits" (float == would let
// -0 == 0 and NaN != NaN decide instead).
#pragma once

#include <cstring>
#include <vector>

namespace test {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  // memcmp must not see the null data() of an empty vector.
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace test

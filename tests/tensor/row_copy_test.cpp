// Copies whose rows are contiguous in source and destination but whose outer dims are strided
// (column slices, shards of wider tensors) take the CPU backend's row-by-row memcpy path; rows
// shorter than its threshold (16) take the element loop. Expected values come from index arithmetic.
#include <doctest/doctest.h>

#include <vector>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

// Element (i, j, k) of a [a, b, c] arange is (i * b + j) * c + k.
void check_slice(int64_t a, int64_t b, int64_t c, int64_t start, int64_t length) {
  CAPTURE(a);
  CAPTURE(b);
  CAPTURE(c);
  CAPTURE(start);
  CAPTURE(length);
  const ts::Tensor whole = ts::arange(a * b * c, ts::kFloat32).reshape({a, b, c});
  const ts::Tensor copy = whole.narrow(2, start, length).contiguous();
  std::vector<float> expected;
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = start; k < start + length; ++k)
        expected.push_back(static_cast<float>((i * b + j) * c + k));
  CHECK(copy.to_vector<float>() == expected);
  // Into a strided destination too: the slice of a second tensor, the rest left as it was.
  ts::Tensor target = ts::full({a, b, c}, -1.0);
  ts::Tensor window = target.narrow(2, start, length);
  window.copy_(copy);
  const std::vector<float> after = target.to_vector<float>();
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k) {
        const bool inside = k >= start && k < start + length;
        CHECK(after[static_cast<size_t>((i * b + j) * c + k)] ==
              (inside ? static_cast<float>((i * b + j) * c + k) : -1.f));
      }
}

}  // namespace

TEST_CASE("copies of column slices keep every element in place, row by row or element by element") {
  check_slice(1, 5, 100, 30, 40);  // long rows
  check_slice(3, 4, 50, 7, 20);    // 3-d, long rows
  check_slice(2, 3, 40, 1, 16);    // exactly the threshold
  check_slice(2, 3, 40, 1, 15);    // just under it: element loop
  check_slice(4, 1, 33, 0, 32);    // one row per outer index
  check_slice(2, 2, 20, 0, 0);     // empty rows
}

// Shape arithmetic near the int64 limits: every size, stride, offset and byte count that
// does not fit int64 is a tessera::Error naming the op and the value, never a wrapped number that
// allocates too little, addresses memory outside the storage or silently gives a wrong answer.
// Nothing here allocates more than a few bytes: a huge shape must be refused before the allocator
// sees it (and a test that really asked for exabytes would abort under AddressSanitizer).
#include <cstdint>
#include <limits>

#include "dispatch/backends.hpp"
#include "test_util.hpp"

namespace ts = tessera;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2p60 = int64_t{1} << 60;
constexpr int64_t k2p61 = int64_t{1} << 61;
constexpr int64_t k2p62 = int64_t{1} << 62;
}  // namespace

// Reproducers of overflows once found, as they were reported.

TEST_CASE("zeros of a shape whose numel overflows is refused before it allocates") {
  // Was: numel wrapped to 0, 64 bytes were allocated and t[1000].fill_(7) wrote past them.
  CHECK_THROWS_WITH_AS(ts::zeros({k2p62, 4}),
                       doctest::Contains("shape [4611686018427387904, 4] has too many elements"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros({k2p62, 4}), doctest::Contains("4611686018427387904 * 4 overflows int64"),
                       ts::Error);
  // The element count fits, the byte count does not: 2^61 float32 elements are 2^63 bytes.
  CHECK_THROWS_WITH_AS(ts::zeros({k2p60, 2}),
                       doctest::Contains("the byte size of shape [1152921504606846976, 2] of "
                                         "float32"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::empty({k2p61, 2}, ts::kFloat64), doctest::Contains("overflows int64"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::ones({3, kMax}), doctest::Contains("has too many elements"), ts::Error);
}

TEST_CASE("narrow with a length past the end of the dim is refused") {
  // Was: start + length wrapped, so narrow(0, 5, INT64_MAX) was accepted.
  CHECK_THROWS_WITH_AS(
      ts::arange(10).narrow(0, 5, kMax),
      doctest::Contains("narrow: start 5 and length 9223372036854775807 do not fit dim 0 of size 10"),
      ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(10).narrow(0, kMax, 1), doctest::Contains("start 9223372036854775807"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(10).narrow(0, kMin, 1), doctest::Contains("start -9223372036854775808"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(10).narrow(0, -11, 1), doctest::Contains("do not fit dim 0 of size 10"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(10).narrow(0, 0, -1), doctest::Contains("length -1"), ts::Error);
  // The edges that are allowed.
  test::check_values<int64_t>(ts::arange(10).narrow(0, -1, 1), {1}, {9});
  CHECK(ts::arange(10).narrow(0, 10, 0).numel() == 0);
}

TEST_CASE("expand to a shape whose numel overflows is refused") {
  // Was: the numel wrapped to 0 and sum() returned 0.
  CHECK_THROWS_WITH_AS(ts::ones({1}).expand({k2p62, 4}),
                       doctest::Contains("expand: shape [4611686018427387904, 4] has too many elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::ones({1}).expand({k2p61, 4}),
                       doctest::Contains("2305843009213693952 * 4 overflows"), ts::Error);
  // A huge expanded view that fits int64 is legal (stride 0 addresses one element) ...
  ts::Tensor huge = ts::ones({1}).expand({k2p60, 4});
  CHECK(huge.numel() == k2p62);
  CHECK(huge.strides() == std::vector<int64_t>{0, 0});
  CHECK(huge.select(0, -1).select(0, 3).item<float>() == 1.f);
  // ... but materialising it needs 2^64 bytes: refused with the byte count, never allocated short.
  CHECK_THROWS_WITH_AS(huge.contiguous(),
                       doctest::Contains("the byte size of shape [1152921504606846976, 4]"), ts::Error);
  CHECK_THROWS_WITH_AS(huge.clone(), doctest::Contains("overflows int64"), ts::Error);
}

TEST_CASE("slice with a step larger than the dim takes exactly the first element") {
  // Was: ceil((end - start) / step) was formed as (end - start + step - 1) / step, which overflowed
  // to 0 elements; Python's list(range(10))[0:10:2**63-1] is [0].
  test::check_values<int64_t>(ts::arange(10).slice(0, 0, 10, kMax), {1}, {0});
  test::check_values<int64_t>(ts::arange(10).slice(0, 3, 10, kMax), {1}, {3});
  test::check_values<int64_t>(ts::arange(10).slice(0, -1, kMax, kMax), {1}, {9});
  CHECK(ts::arange(10).slice(0, 10, 10, kMax).numel() == 0);
  test::check_values<int64_t>(ts::arange(20).reshape({2, 10}).slice(1, 0, 10, kMax), {2, 1}, {0, 10});
  // Extreme bounds clamp as in Python.
  test::check_values<int64_t>(ts::arange(5).slice(0, kMin, kMax), {5}, {0, 1, 2, 3, 4});
  test::check_values<int64_t>(ts::arange(5).slice(0, kMin, kMax, kMax - 1), {1}, {0});
  CHECK(ts::arange(5).slice(0, kMax, kMin).numel() == 0);
  CHECK_THROWS_WITH_AS(ts::arange(5).slice(0, 0, 5, kMin),
                       doctest::Contains("step must be positive, got "
                                         "-9223372036854775808"),
                       ts::Error);
}

// Around the reproducers.

TEST_CASE("arange with extreme integer bounds") {
  CHECK_THROWS_WITH_AS(ts::arange(kMin, kMax),
                       doctest::Contains("arange: the range [-9223372036854775808, "
                                         "9223372036854775807) with step 1 is too large"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(0, kMax), doctest::Contains("is too large"), ts::Error);
  // end - start overflows int64 here; the count is ceil((2^64 - 1) / (2^63 - 1)) = 3.
  test::check_values<int64_t>(ts::arange(kMin, kMax, kMax), {3}, {kMin, -1, kMax - 1});
  // A negative step of INT64_MIN: ceil((-2^64 + 1) / -2^63) = 2.
  test::check_values<int64_t>(ts::arange(kMax, kMin, kMin), {2}, {kMax, -1});
  test::check_values<int64_t>(ts::arange(kMax - 2, kMax), {2}, {kMax - 2, kMax - 1});
  test::check_values<int64_t>(ts::arange(kMin, kMin + 3), {3}, {kMin, kMin + 1, kMin + 2});
  test::check_values<int64_t>(ts::arange(kMin + 2, kMin, -1), {2}, {kMin + 2, kMin + 1});
  test::check_values<int64_t>(ts::arange(-5, kMax, kMax), {2}, {-5, kMax - 5});
  CHECK(ts::arange(kMax, kMin).numel() == 0);  // wrong direction for a positive step: empty
  CHECK(ts::arange(kMin, kMax, -1).numel() == 0);
  CHECK_THROWS_WITH_AS(ts::arange(0, 10, 0), doctest::Contains("step must be nonzero"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(0.0, 1.0, 1e-300), doctest::Contains("too large or not finite"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(0.0, std::numeric_limits<double>::infinity()),
                       doctest::Contains("too large or not finite"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::arange(0.0, std::numeric_limits<double>::quiet_NaN()),
                       doctest::Contains("too large or not finite"), ts::Error);
}

TEST_CASE("cat whose output size overflows is refused") {
  // Expanded views of 2^62 elements are legal; two of them side by side are not.
  ts::Tensor e = ts::ones({1}).expand({k2p62});
  CHECK_THROWS_WITH_AS(ts::cat({e, e}),
                       doctest::Contains("cat: the sizes of dim 0 of tensors 0..1: "
                                         "4611686018427387904 + 4611686018427387904 overflows"),
                       ts::Error);
  // Empty tensors reach the same sums without a single element.
  ts::Tensor z = ts::zeros({0, k2p62});
  CHECK_THROWS_WITH_AS(ts::cat({z, z, z}, 1), doctest::Contains("overflows int64"), ts::Error);
  // The size fits but the bytes do not: refused before allocating.
  ts::Tensor half = ts::ones({1}).expand({k2p61});
  CHECK_THROWS_WITH_AS(ts::cat({half, half}),
                       doctest::Contains("the byte size of shape [4611686018427387904]"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::stack({e, e}), doctest::Contains("has too many elements"), ts::Error);
}

TEST_CASE("split sizes whose sum overflows are refused") {
  ts::Tensor x = ts::arange(10);
  CHECK_THROWS_WITH_AS(
      ts::split(x, std::vector<int64_t>{kMax, 1}),
      doctest::Contains("split: the section sizes [9223372036854775807, 1]: 9223372036854775807 + 1 "
                        "overflows"),
      ts::Error);
  // 2 * (2^63 - 1) + 12 wraps to exactly 10, the size of the dim: it must not be accepted.
  CHECK_THROWS_WITH_AS(ts::split(x, std::vector<int64_t>{kMax, kMax, 12}),
                       doctest::Contains("overflows int64"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::split(x, std::vector<int64_t>{11, -1}), doctest::Contains("must be non-negative"),
                       ts::Error);
  // The largest split size and chunk count are ordinary inputs.
  const std::vector<ts::Tensor> one = ts::split(x, kMax);
  REQUIRE(one.size() == 1);
  CHECK(one[0].numel() == 10);
  CHECK(ts::chunk(x, kMax).size() == 10);
}

TEST_CASE("reshape and view with -1, 0 and overflowing shapes") {
  ts::Tensor x = ts::arange(10);
  // With another size 0 any value would fit the -1: refused as torch does.
  CHECK_THROWS_WITH_AS(x.reshape({0, -1}), doctest::Contains("the -1 in shape [0, -1] cannot be inferred"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros({0, 3}).reshape({-1, 0}), doctest::Contains("cannot be inferred"),
                       ts::Error);
  CHECK(ts::zeros({0, 3}).reshape({3, -1}).sizes() == ts::Shape{3, 0});
  CHECK_THROWS_WITH_AS(x.reshape({-1, kMax}), doctest::Contains("invalid for a tensor of 10 elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.reshape({k2p62, 4, -1}),
                       doctest::Contains("reshape: shape [4611686018427387904, 4, 1] has "
                                         "too many elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.reshape({-2, 5}), doctest::Contains("invalid size -2"), ts::Error);
  // 6 * 6148914691236517207 wraps to exactly 10 in int64.
  CHECK_THROWS_WITH_AS(x.view({6, 6148914691236517207}),
                       doctest::Contains("view: shape [6, 6148914691236517207] has "
                                         "too many elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.reshape({6, 6148914691236517207}), doctest::Contains("too many elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.view({k2p62, 4}),
                       doctest::Contains("view: shape [4611686018427387904, 4] has too many"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros({0}).view({k2p62, 4, 0}), doctest::Contains("too many elements"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros({0}).view({k2p62, 4, -1}), doctest::Contains("too many elements"),
                       ts::Error);
}

// torch accepts torch.zeros(0, 2**62, 4) only because its size check multiplies left to right and
// stops wrapping at the first 0: with the 0 last, torch.zeros(2**62, 4, 0) fails its storage size
// check. Tessera takes one rule that does not depend on where the zeros are: the product of the sizes
// with every 0 counted as 1 must fit int64, because it is the largest contiguous stride (the stride
// of dim 0 of a [0, 2^62, 4] tensor is 2^64). So an empty shape is fine as long as its strides fit,
// and a clear error otherwise.
TEST_CASE("zero-size dims in huge shapes") {
  CHECK_THROWS_WITH_AS(ts::zeros({0, k2p62, 4}),
                       doctest::Contains("shape [0, 4611686018427387904, 4] has too many "
                                         "elements"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::zeros({k2p62, 4, 0}), doctest::Contains("has too many elements"), ts::Error);
  ts::Tensor z = ts::zeros({0, k2p62});
  CHECK(z.numel() == 0);
  CHECK(z.strides() == std::vector<int64_t>{k2p62, 1});
  ts::Tensor z3 = ts::zeros({k2p61, 0, 2});
  CHECK(z3.strides() == std::vector<int64_t>{2, 2, 1});
  CHECK(z3.sum({0}).sizes() == ts::Shape{0, 2});
  CHECK(z3.transpose(0, 2).contiguous().sizes() == ts::Shape{2, 0, k2p61});
  CHECK(z3.reshape({0, 5}).sizes() == ts::Shape{0, 5});
  CHECK_THROWS_WITH_AS(z3.reshape({0, k2p62, 2}), doctest::Contains("too many elements"), ts::Error);
}

TEST_CASE("unsqueeze, flip and select of empty views with offsets near INT64_MAX") {
  // [0, 3, 2^61] has contiguous strides [3 * 2^61, 2^61, 1]. Its slice [:, 3:] starts at element
  // 3 * 2^61, and its last element along dim 2 is at 2^63 - 1 = INT64_MAX: a legal (empty) view.
  ts::Tensor z = ts::zeros({0, 3, k2p61}).slice(1, 3, 3);
  CHECK(z.sizes() == ts::Shape{0, 0, k2p61});
  ts::Tensor edge = z.select(2, -1);
  CHECK(edge.sizes() == ts::Shape{0, 0});
  CHECK(edge.unsqueeze(0).unsqueeze(-1).sizes() == ts::Shape{1, 0, 0, 1});
  CHECK(edge.flip({0, 1}).sizes() == ts::Shape{0, 0});
  CHECK(z.flip({0, 1}).sizes() == ts::Shape{0, 0, k2p61});
  // Flipping dim 2 starts at its last element, INT64_MAX: still representable.
  CHECK(z.flip({2}).sizes() == ts::Shape{0, 0, k2p61});
  CHECK(z.unsqueeze(2).strides()[2] == k2p61);
  // One more element along dim 2 would be at 2^63: its offset does not fit int64.
  CHECK_THROWS_WITH_AS(z.slice(2, k2p61, k2p61),
                       doctest::Contains("slice: the offset of index 2305843009213693952 of "
                                         "dim 2"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(z.narrow(2, k2p61, 0), doctest::Contains("overflows int64"), ts::Error);
  CHECK_THROWS_WITH_AS(z.select(2, kMax),
                       doctest::Contains("select: index 9223372036854775807 is out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(z.select(2, kMin), doctest::Contains("index -9223372036854775808 is out of range"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(z.unsqueeze(kMax),
                       doctest::Contains("unsqueeze: dim 9223372036854775807 is out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(z.unsqueeze(kMin), doctest::Contains("dim -9223372036854775808 is out of range"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(z.flip({kMin}), doctest::Contains("flip: dim -9223372036854775808 is out of range"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(z.transpose(0, kMax), doctest::Contains("out of range"), ts::Error);
}

TEST_CASE("index arguments at the int64 extremes on an ordinary tensor") {
  ts::Tensor x = ts::arange(12).reshape({3, 4});
  CHECK_THROWS_WITH_AS(x.select(1, kMin),
                       doctest::Contains("select: index -9223372036854775808 is out of range for "
                                         "dim 1 of size 4 (expected -4..3)"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x[kMax], doctest::Contains("index 9223372036854775807 is out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(x.narrow(1, 2, kMax - 1), doctest::Contains("do not fit dim 1 of size 4"), ts::Error);
  CHECK_THROWS_WITH_AS(x.expand({kMax, 3, 4}), doctest::Contains("too many elements"), ts::Error);
  CHECK_THROWS_WITH_AS(x.expand({3, kMin}), doctest::Contains("invalid size -9223372036854775808"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(x.permute({0, kMin}), doctest::Contains("out of range"), ts::Error);
  CHECK_THROWS_WITH_AS(x.squeeze(kMax), doctest::Contains("squeeze: dim 9223372036854775807 is out of range"),
                       ts::Error);
  CHECK_THROWS_WITH_AS(ts::chunk(x, kMin), doctest::Contains("must be positive"), ts::Error);
  CHECK_THROWS_WITH_AS(ts::split(x, kMin), doctest::Contains("must be positive"), ts::Error);
  test::check_values<int64_t>(x.slice(1, kMin, kMax, 3), {3, 2}, {0, 3, 4, 7, 8, 11});
}

// The host never asks for more than INT64_MAX bytes (shape_bytes), but the plugin interface takes a
// size_t: the CPU allocator must refuse a size that would wrap when rounded up to its alignment
// (it used to hand out a 64-byte block for SIZE_MAX). Refused before any allocation is attempted.
TEST_CASE("the CPU backend refuses allocation sizes that wrap when rounded up") {
  const auto cpu = ts::dispatch::backend("cpu");
  for (const size_t bytes : {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max() - 63}) {
    CAPTURE(bytes);
    CHECK_THROWS_WITH_AS(cpu->allocate(bytes),
                         doctest::Contains("backend 'cpu' (plugin backend-cpu) could not allocate"),
                         ts::Error);
  }
  void* small = cpu->allocate(1);
  CHECK(small != nullptr);
  cpu->deallocate(small);
}

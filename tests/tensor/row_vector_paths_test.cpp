// The CPU backend's vector paths of cumsum (rows side by side: a cumsum along a leading dim) and of
// gather / scatter_add moving whole rows (index_select, embedding and their gradients) give the bits
// of loops written here in the order sdk/KERNELS.md fixes: each running sum from +0 left to right,
// each scatter_add term added in the row-major order of the index. Widths around every vector
// width, signed zeros and repeated indices.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "test_util.hpp"

namespace ts = tessera;

namespace {

const std::vector<int64_t> kWidths = {1, 3, 8, 15, 16, 17, 33, 100};

std::vector<float> mixed_values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const double s = std::sin(0.77 * static_cast<double>(i + seed * 13));
    v[i] = i % 11 == 3 ? -0.0f : static_cast<float>(s * std::pow(10.0, static_cast<double>(i % 7) - 3));
  }
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("cumsum along a leading dim: the bits of one running sum per column, from +0") {
  for (int64_t width : kWidths)
    for (int64_t length : {1, 2, 9}) {
      CAPTURE(width);
      CAPTURE(length);
      const std::vector<float> x =
          mixed_values(static_cast<size_t>(2 * length * width), static_cast<uint32_t>(width));
      const ts::Tensor t = ts::from_values(x, {2, length, width});
      std::vector<float> want(x.size());
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t c = 0; c < width; ++c) {
          float running = 0.0f;
          for (int64_t j = 0; j < length; ++j) {
            const size_t at = static_cast<size_t>((b * length + j) * width + c);
            running = running + x[at];
            want[at] = running;
          }
        }
      const ts::Tensor got = ts::cumsum(t, 1);
      CHECK(got.is_contiguous());
      CHECK(same_bits(got.to_vector<float>(), want));
      // dim 0 of the 2-d [length, width] of the first batch item: rows side by side too.
      const ts::Tensor first = t.select(0, 0).contiguous();
      const std::vector<float> got2 = ts::cumsum(first, 0).to_vector<float>();
      CHECK(same_bits(got2, std::vector<float>(want.begin(), want.begin() + length * width)));
    }
}

TEST_CASE("embedding and its gradient: rows copied, and gradient rows added in index order") {
  for (int64_t width : kWidths) {
    CAPTURE(width);
    const int64_t vocab = 5;
    const std::vector<int64_t> ids = {3, 1, 3, 0, 3, 4, 1};
    const auto n = static_cast<int64_t>(ids.size());
    const std::vector<float> w = mixed_values(static_cast<size_t>(vocab * width), 1);
    const std::vector<float> g = mixed_values(static_cast<size_t>(n * width), 2);
    ts::Tensor weight = ts::from_values(w, {vocab, width}).requires_grad_(true);
    const ts::Tensor out = ts::embedding(ts::from_values(ids, {n}), weight);
    std::vector<float> want_out;
    for (int64_t id : ids)
      want_out.insert(want_out.end(), w.begin() + id * width, w.begin() + (id + 1) * width);
    CHECK(same_bits(out.to_vector<float>(), want_out));
    (out * ts::from_values(g, {n, width})).sum().backward();
    std::vector<float> want_grad(w.size(), 0.0f);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < width; ++c)
        want_grad[static_cast<size_t>(ids[static_cast<size_t>(i)] * width + c)] +=
            g[static_cast<size_t>(i * width + c)];
    CHECK(same_bits(weight.grad().to_vector<float>(), want_grad));
  }
}

TEST_CASE("scatter_add of whole rows refuses an index out of range, naming it") {
  const ts::Tensor index = ts::from_values(std::vector<int64_t>{0, 7}, {2, 1}).expand({2, 16});
  std::string message;
  try {
    (void)ts::scatter_add(ts::zeros({4, 16}), 0, index, ts::ones({2, 16}));
  } catch (const ts::Error& e) {
    message = e.what();
  }
  CHECK(message.find("scatter_add: index 7 is out of range for dim 0 of size 4") != std::string::npos);
  message.clear();
  try {
    (void)ts::gather(ts::zeros({4, 16}), 0, index);
  } catch (const ts::Error& e) {
    message = e.what();
  }
  CHECK(message.find("gather: index 7 is out of range for dim 0 of size 4") != std::string::npos);
}

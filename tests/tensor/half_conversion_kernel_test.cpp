// The CPU backend's float32 <-> bfloat16 / float16 conversions of contiguous tensors (vector
// instructions, and non-temporal stores for large outputs) against the SDK's scalar conversions
// (sdk/cpp/half_precision.hpp, themselves checked on every float32 in tests/sdk): every 16-bit
// pattern widened, and, narrowed, every sign and exponent with every pattern of the low 13 fraction
// bits (all that decide a bfloat16 rounding, and a float16 one but for its subnormals) under four
// patterns of the high bits, plus every float16 subnormal boundary. Chunks are large enough to be
// streamed and start at odd offsets, so heads, bodies and tails all run.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/half_precision.hpp"
#include "test_util.hpp"

namespace ts = tessera;
namespace sdk = tessera::sdk;

namespace {

template <class T>
std::vector<T> bits_of(const ts::Tensor& t) {
  const ts::Tensor c = t.contiguous();
  std::vector<T> out(static_cast<size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size() * sizeof(T));
  return out;
}

ts::Tensor floats_from_bits(const std::vector<uint32_t>& bits) {
  std::vector<float> values(bits.size());
  std::memcpy(values.data(), bits.data(), bits.size() * sizeof(float));
  return ts::from_values(values, {static_cast<int64_t>(values.size())});
}

// Elements a chunk holds: float16 / bfloat16 outputs of 4 MiB and more are streamed.
constexpr int64_t kChunk = int64_t{2} << 20;

// How many of `got` differ from `want`, with the first few described.
std::string differences(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want,
                        const std::vector<uint32_t>& input) {
  std::string text;
  int64_t count = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && count++ < 4)
      text += " [float bits " + std::to_string(input[i]) + ": got " + std::to_string(got[i]) + ", expected " +
              std::to_string(want[i]) + "]";
  return count == 0 ? "" : std::to_string(count) + " differ:" + text;
}

// Converts `input` (float32 bits) to `dtype` from element `offset` on, and compares with `scalar`.
template <class Scalar>
void check_narrowing(const std::vector<uint32_t>& input, ts::DType dtype, int64_t offset,
                     const Scalar& scalar) {
  const ts::Tensor x = floats_from_bits(input).slice(0, offset, static_cast<int64_t>(input.size()));
  const std::vector<uint16_t> got = bits_of<uint16_t>(x.to(dtype));
  const std::vector<uint32_t> kept(input.begin() + offset, input.end());
  std::vector<uint16_t> want(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    float f;
    std::memcpy(&f, &kept[i], sizeof f);
    want[i] = scalar(f);
  }
  CHECK_MESSAGE(differences(got, want, kept).empty(), differences(got, want, kept));
}

}  // namespace

TEST_CASE("float32 -> bfloat16 / float16 kernels give the scalar conversion's bits, streamed or not") {
  const uint32_t highs[] = {0x000u, 0x001u, 0x2aau, 0x3ffu};  // fraction bits 13..22
  std::vector<uint32_t> all;
  all.reserve(size_t{512} * 4 * 8192);
  for (uint32_t sign_exponent = 0; sign_exponent < 512; ++sign_exponent)
    for (uint32_t high : highs)
      for (uint32_t low = 0; low < 8192; ++low) all.push_back(sign_exponent << 23 | high << 13 | low);
  // float16's subnormal results: every float32 from 2^-26 to 2^-14 whose low 13 bits are 0, 1 or a
  // tie pattern (the bits below the float16 subnormal's last place decide there).
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t exponent = 101; exponent < 113; ++exponent)
      for (uint32_t fraction = 0; fraction < (1u << 23); fraction += 97)
        all.push_back(sign << 31 | exponent << 23 | fraction);
  int64_t chunk_index = 0;
  for (size_t first = 0; first < all.size(); first += kChunk, ++chunk_index) {
    const std::vector<uint32_t> chunk(
        all.begin() + static_cast<ptrdiff_t>(first),
        all.begin() + static_cast<ptrdiff_t>(std::min(all.size(), first + kChunk)));
    const int64_t offset = chunk_index % 9;  // heads of every length before an aligned store
    CAPTURE(first);
    check_narrowing(chunk, ts::kBFloat16, offset, [](float f) { return sdk::bfloat16_bits_from_float(f); });
    check_narrowing(chunk, ts::kFloat16, offset, [](float f) { return sdk::float16_bits_from_float(f); });
  }
  // Short ones: no streaming, and fewer elements than one vector.
  for (int64_t n : {1, 7, 15, 17, 33}) {
    const std::vector<uint32_t> some(all.begin() + 1000000, all.begin() + 1000000 + n);
    check_narrowing(some, ts::kBFloat16, 0, [](float f) { return sdk::bfloat16_bits_from_float(f); });
    check_narrowing(some, ts::kFloat16, 0, [](float f) { return sdk::float16_bits_from_float(f); });
  }
}

TEST_CASE("bfloat16 / float16 -> float32 kernels give every pattern's scalar bits, streamed or not") {
  std::vector<uint16_t> patterns(65536);
  for (uint32_t b = 0; b < 65536; ++b) patterns[b] = static_cast<uint16_t>(b);
  for (const ts::DType dtype : {ts::kBFloat16, ts::kFloat16}) {
    CAPTURE(ts::dtype_name(dtype));
    // 33 copies (over 8 MiB of float32, streamed) and one (not), from an odd start.
    for (int copies : {1, 33}) {
      std::vector<uint16_t> input;
      for (int c = 0; c < copies; ++c) input.insert(input.end(), patterns.begin(), patterns.end());
      const int64_t offset = copies == 1 ? 0 : 5;
      std::vector<uint32_t> half_bits(input.begin(), input.end());
      // The float32 tensor whose conversion gives exactly these 16-bit patterns: made through the
      // raw bytes of a tensor of the dtype.
      ts::Tensor h = ts::empty({static_cast<int64_t>(input.size())}, ts::TensorOptions(dtype));
      std::memcpy(const_cast<void*>(h.data_ptr()), input.data(), input.size() * 2);
      const std::vector<uint32_t> got = bits_of<uint32_t>(h.slice(0, offset, h.size(0)).to(ts::kFloat32));
      int64_t wrong = 0;
      std::string first;
      for (size_t i = 0; i < got.size(); ++i) {
        const uint16_t pattern = input[i + static_cast<size_t>(offset)];
        const float f = dtype == ts::kBFloat16 ? sdk::float_from_bfloat16_bits(pattern)
                                               : sdk::float_from_float16_bits(pattern);
        uint32_t want;
        std::memcpy(&want, &f, sizeof want);
        if (got[i] != want && wrong++ == 0)
          first = "pattern " + std::to_string(pattern) + ": got " + std::to_string(got[i]) + ", expected " +
                  std::to_string(want);
      }
      CAPTURE(copies);
      CHECK_MESSAGE(wrong == 0, first);
    }
  }
}

// sdk/cpp/half_precision.hpp: float32 -> bfloat16 / float16 over every float32 bit pattern, against
// an oracle that rounds with the hardware's double arithmetic instead of the header's integer bit
// manipulation; the conversions back, against a decoder written from the formats' definitions;
// and a few dozen values' bits as PyTorch 2.15 gives them (pinned, computed once outside the suite).
// The full sweep is 2^32 conversions per format, a few seconds in an optimised build; under a
// sanitizer it samples every 97th fraction of every binade.
#include "tessera/sdk/cpp/half_precision.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "tessera/sdk/cpp/kernel_args.hpp"

namespace sdk = tessera::sdk;

namespace {

// A two-byte format: significant bits (with the implicit one), least normal exponent, and the
// exponent bias and fraction width of its encoding.
struct Format {
  int precision;     // 8 (bfloat16), 11 (float16)
  int min_exponent;  // of the least normal value: -126, -14
  int mantissa_bits;
  int exponent_bias;
  uint16_t infinity;  // the bits of +infinity
};
constexpr Format kBF16{8, -126, 7, 127, 0x7f80};
constexpr Format kFP16{11, -14, 10, 15, 0x7c00};

// The value of 16-bit pattern `bits` of `format`, from the definition (sign, biased exponent,
// fraction; exponent 0 is subnormal, all ones infinity or NaN).
double decode(uint16_t bits, const Format& f) {
  const int exponent_field = (bits >> f.mantissa_bits) & ((1 << (15 - f.mantissa_bits)) - 1);
  const int fraction = bits & ((1 << f.mantissa_bits) - 1);
  const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent_field == (1 << (15 - f.mantissa_bits)) - 1)
    return fraction == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  if (exponent_field == 0) return sign * std::ldexp(fraction, 1 - f.exponent_bias - f.mantissa_bits);
  return sign *
         std::ldexp(fraction + (1 << f.mantissa_bits), exponent_field - f.exponent_bias - f.mantissa_bits);
}

bool is_quiet_nan(uint16_t bits, const Format& f) {
  const uint16_t exponent_mask =
      static_cast<uint16_t>(((1 << (15 - f.mantissa_bits)) - 1) << f.mantissa_bits);
  const uint16_t quiet_bit = static_cast<uint16_t>(1 << (f.mantissa_bits - 1));
  return (bits & exponent_mask) == exponent_mask && (bits & quiet_bit) != 0;
}

// The fractions a sweep visits in each float32 binade: all 2^23, or under a sanitizer (ten or more
// times slower per element) every 97th, a stride odd enough to meet every low-bit pattern.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint32_t kSweepStride = 97;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr uint32_t kSweepStride = 97;
#else
constexpr uint32_t kSweepStride = 1;
#endif
#else
constexpr uint32_t kSweepStride = 1;
#endif

// The oracle for the finite float32s of one binade (sign, exponent field): the quantum q of the
// format there is a power of two, so adding 2^52 q to |x| leaves a double whose unit is q and the
// hardware's addition rounds to nearest even; subtracting it back is exact. The rounded magnitude r
// is then encoded arithmetically: (e + bias) * 2^m - 2^m + r / 2^(e - m), which also gives the
// right bits when r rounds up into the next binade, into the normal range (from a subnormal), or to
// infinity (capped there for larger binades).
struct Binade {
  double big;    // 2^52 q
  double scale;  // 1 / 2^(e - m): r * scale is the significand as an integer
  int64_t base;  // (e + bias) * 2^m - 2^m
};
Binade binade(const Format& f, uint32_t exponent_field) {
  const int e = std::max(static_cast<int>(exponent_field) - 127, f.min_exponent);  // field 0: subnormal
  return {std::ldexp(1.0, 52 + e - (f.precision - 1)), std::ldexp(1.0, f.mantissa_bits - e),
          (int64_t{e + f.exponent_bias} << f.mantissa_bits) - (int64_t{1} << f.mantissa_bits)};
}

// Counts the patterns of binade (sign, exponent_field < 255) where convert disagrees with the
// oracle; a branch-free loop the compiler vectorises, so the full sweep takes seconds.
template <class Convert>
uint64_t mismatches_in_binade(const Format& f, uint32_t sign, uint32_t exponent_field, Convert convert) {
  const Binade b = binade(f, exponent_field);
  const uint32_t high = (sign << 31) | (exponent_field << 23);
  const uint16_t sign_bit = static_cast<uint16_t>(sign << 15);
  uint64_t bad = 0;
  for (uint32_t fraction = 0; fraction < (1u << 23); fraction += kSweepStride) {
    const float x = std::bit_cast<float>(high | fraction);
    const double magnitude = std::bit_cast<float>(fraction | (exponent_field << 23));
    const double r = (magnitude + b.big) - b.big;
    const int32_t encoded =
        std::min<int32_t>(static_cast<int32_t>(b.base) + static_cast<int32_t>(r * b.scale), f.infinity);
    const auto expected = static_cast<uint16_t>(sign_bit | encoded);
    bad += convert(x) != expected ? 1 : 0;
  }
  return bad;
}

// Sweeps every float32 (sampled under a sanitizer) on a few threads; returns a description of the
// binades with mismatches and of the first mismatch in each (empty when all agree).
template <class Convert>
std::string sweep(const Format& f, Convert convert, uint64_t& checked) {
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  std::vector<std::string> problems(threads);
  std::atomic<uint64_t> total{0};
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      uint64_t count = 0;
      // Binade k = sign * 256 + exponent field, dealt round-robin.
      for (uint32_t k = t; k < 512; k += threads) {
        const uint32_t sign = k / 256, field = k % 256;
        if (field == 255) {  // infinity and the NaNs
          for (uint32_t fraction = 0; fraction < (1u << 23); fraction += kSweepStride) {
            const uint16_t got = convert(std::bit_cast<float>((sign << 31) | (255u << 23) | fraction));
            const bool ok = fraction == 0 ? got == (f.infinity | (sign << 15)) : is_quiet_nan(got, f);
            if (!ok && problems[t].size() < 400)
              problems[t] += " [binade " + std::to_string(k) + " fraction " + std::to_string(fraction) + "]";
            ++count;
          }
          continue;
        }
        count += (1u << 23) / kSweepStride + ((1u << 23) % kSweepStride != 0 ? 1 : 0);
        if (mismatches_in_binade(f, sign, field, convert) == 0) continue;
        // Find the first one for the message.
        const Binade b = binade(f, field);
        for (uint32_t fraction = 0; fraction < (1u << 23); ++fraction) {
          const uint32_t bits = (sign << 31) | (field << 23) | fraction;
          const double r = (static_cast<double>(std::fabs(std::bit_cast<float>(bits))) + b.big) - b.big;
          const int64_t want = std::min<int64_t>(b.base + static_cast<int64_t>(r * b.scale), f.infinity);
          const uint16_t got = convert(std::bit_cast<float>(bits));
          if (got != static_cast<uint16_t>((sign << 15) | want)) {
            char line[96];
            std::snprintf(line, sizeof line, " [float bits 0x%08x gave 0x%04x, expected 0x%04x]", bits, got,
                          static_cast<unsigned>((sign << 15) | want));
            if (problems[t].size() < 400) problems[t] += line;
            break;
          }
        }
      }
      total += count;
    });
  }
  for (std::thread& w : workers) w.join();
  checked = total;
  std::string all;
  for (const std::string& p : problems) all += p;
  return all;
}

}  // namespace

TEST_CASE("float32 -> bfloat16 rounds every float32 to nearest even (NaN quiet, overflow infinite)") {
  uint64_t checked = 0;
  const std::string problems = sweep(
      kBF16, [](float x) { return sdk::bfloat16_bits_from_float(x); }, checked);
  CHECK_MESSAGE(problems.empty(), problems);
  CHECK(checked >= (uint64_t{1} << 32) / kSweepStride);
}

TEST_CASE(
    "float32 -> float16 rounds every float32 to nearest even (subnormals, NaN quiet, overflow infinite)") {
  uint64_t checked = 0;
  const std::string problems = sweep(
      kFP16, [](float x) { return sdk::float16_bits_from_float(x); }, checked);
  CHECK_MESSAGE(problems.empty(), problems);
  CHECK(checked >= (uint64_t{1} << 32) / kSweepStride);
}

TEST_CASE("bfloat16 and float16 -> float32 are exact for all 65536 patterns") {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float bf = sdk::float_from_bfloat16_bits(h);
    const float fp = sdk::float_from_float16_bits(h);
    const double want_bf = decode(h, kBF16), want_fp = decode(h, kFP16);
    if (std::isnan(want_bf)) {
      CHECK(std::isnan(bf));
    } else {
      REQUIRE_MESSAGE(static_cast<double>(bf) == want_bf, "bfloat16 bits " << b);
      REQUIRE(std::signbit(bf) == ((h & 0x8000u) != 0));
      // Round trip: every non-NaN pattern comes back unchanged.
      REQUIRE(sdk::bfloat16_bits_from_float(bf) == h);
    }
    if (std::isnan(want_fp)) {
      CHECK(std::isnan(fp));
    } else {
      REQUIRE_MESSAGE(static_cast<double>(fp) == want_fp, "float16 bits " << b);
      REQUIRE(std::signbit(fp) == ((h & 0x8000u) != 0));
      REQUIRE(sdk::float16_bits_from_float(fp) == h);
    }
  }
}

TEST_CASE("float32 -> bfloat16 / float16 give PyTorch's bits for tricky values") {
  // {float32 bits, torch .to(torch.bfloat16) bits, torch .to(torch.float16) bits}, from PyTorch
  // 2.15 on x86-64: ties, carries into the exponent, overflow at the largest finite values,
  // float16 subnormals and their rounding to zero, float32 subnormals.
  struct Pinned {
    uint32_t f32;
    uint16_t bf16;
    uint16_t fp16;
  };
  const Pinned pinned[] = {
      {0x00000000, 0x0000, 0x0000}, {0x80000000, 0x8000, 0x8000}, {0x3f800000, 0x3f80, 0x3c00},
      {0xbf800000, 0xbf80, 0xbc00}, {0x3f808000, 0x3f80, 0x3c04}, {0x3f818000, 0x3f82, 0x3c0c},
      {0x3f80c000, 0x3f81, 0x3c06}, {0x3f807fff, 0x3f80, 0x3c04}, {0x3f800001, 0x3f80, 0x3c00},
      {0x7f7fffff, 0x7f80, 0x7c00}, {0x7f7f7fff, 0x7f7f, 0x7c00}, {0x7f7f8000, 0x7f80, 0x7c00},
      {0xff7f8000, 0xff80, 0xfc00}, {0x7f800000, 0x7f80, 0x7c00}, {0xff800000, 0xff80, 0xfc00},
      {0x00000001, 0x0000, 0x0000}, {0x00400000, 0x0040, 0x0000}, {0x00008000, 0x0000, 0x0000},
      {0x00018000, 0x0002, 0x0000}, {0x807fffff, 0x8080, 0x8000}, {0x477fe000, 0x4780, 0x7bff},
      {0x477fefff, 0x4780, 0x7bff}, {0x477ff000, 0x4780, 0x7c00}, {0x477ff001, 0x4780, 0x7c00},
      {0x38800000, 0x3880, 0x0400}, {0x387fe000, 0x3880, 0x0400}, {0x387ff000, 0x3880, 0x0400},
      {0x33800000, 0x3380, 0x0001}, {0x33000000, 0x3300, 0x0000}, {0x33000001, 0x3300, 0x0001},
      {0x337fffff, 0x3380, 0x0001}, {0xb3000001, 0xb300, 0x8001}, {0x33c00000, 0x33c0, 0x0002},
      {0x34200000, 0x3420, 0x0002}, {0x3f802000, 0x3f80, 0x3c01}, {0x3f801000, 0x3f80, 0x3c00},
      {0x3f803000, 0x3f80, 0x3c02}, {0x3f801001, 0x3f80, 0x3c01}, {0x40490fdb, 0x4049, 0x4248},
      {0x3eaaaaab, 0x3eab, 0x3555}, {0x3dcccccd, 0x3dcd, 0x2e66}, {0xc2f6e979, 0xc2f7, 0xd7b7},
      {0x4b7fffff, 0x4b80, 0x7c00}, {0x477fffff, 0x4780, 0x7c00}, {0x47800000, 0x4780, 0x7c00},
      {0x38000000, 0x3800, 0x0200}, {0x387fffff, 0x3880, 0x0400},
  };
  for (const Pinned& p : pinned) {
    const float x = std::bit_cast<float>(p.f32);
    CAPTURE(p.f32);
    CHECK(sdk::bfloat16_bits_from_float(x) == p.bf16);
    CHECK(sdk::float16_bits_from_float(x) == p.fp16);
  }
  // PyTorch's NaN bits differ between its scalar and vector paths (0x7fc0, 0xffff): the SDK gives
  // the positive quiet NaN of each format for every NaN, signalling ones included.
  for (const uint32_t nan : {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa00000u}) {
    CHECK(sdk::bfloat16_bits_from_float(std::bit_cast<float>(nan)) == 0x7fc0);
    CHECK(sdk::float16_bits_from_float(std::bit_cast<float>(nan)) == 0x7e00);
  }
}

TEST_CASE("the SDK 1.6 dtypes: DLPack codes as PyTorch's, and visit_any_dtype's element types") {
  CHECK(sdk::same_dtype(sdk::kBFloat16, DLDataType{kDLBfloat, 16, 1}));
  CHECK(sdk::same_dtype(sdk::kFloat16, DLDataType{kDLFloat, 16, 1}));
  CHECK(sdk::same_dtype(sdk::kInt8, DLDataType{kDLInt, 8, 1}));
  CHECK(sdk::same_dtype(sdk::kUInt8, DLDataType{kDLUInt, 8, 1}));
  std::string seen;
  const auto name = [&]<class T>() {
    seen += std::to_string(sizeof(T)) + (std::is_signed_v<T> ? "s " : " ");
  };
  for (const DLDataType d : {sdk::kBFloat16, sdk::kFloat16, sdk::kInt8, sdk::kUInt8, sdk::kFloat32})
    CHECK(sdk::visit_any_dtype(d, name));
  CHECK(seen == "2 2 1s 1 4s ");
  CHECK_FALSE(sdk::visit_any_dtype(DLDataType{kDLInt, 16, 1}, name));
  // visit_dtype keeps to the five types of SDK 1.0, so kernels written for them compile unchanged.
  CHECK_FALSE(sdk::visit_dtype(sdk::kBFloat16, name));
}

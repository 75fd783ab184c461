// randn through the CPU backend: the values the reference algorithm specifies
// (golden bits from tests/sdk/counter_rng_reference.py), one counter per element, the same bits
// for every kernel thread count and wherever a call or a chunk starts.
#include <cstring>
#include <vector>

#include "kernel_threads.hpp"
#include "test_util.hpp"
#include "same_bits.hpp"

namespace ts = tessera;

namespace {

using test::KernelThreads;

using test::same_bits;

std::vector<uint32_t> float_bits(const std::vector<float>& xs) {
  std::vector<uint32_t> out(xs.size());
  std::memcpy(out.data(), xs.data(), xs.size() * sizeof(float));
  return out;
}

}  // namespace

TEST_CASE("randn gives the reference algorithm's values, one counter per element") {
  // Seed 42, counters 0..7 (tests/sdk/counter_rng_reference.py).
  const std::vector<uint32_t> golden32 = {0x3EBFC855u, 0x3F5CC665u, 0x3FF9E214u, 0x3D9BE598u,
                                          0x3F76CE2Au, 0x3F04EF56u, 0x3F4849A6u, 0xBF1E291Du};
  const std::vector<double> golden64 = {0x1.7f909d48575bep-2, 0x1.b98cd11d59b49p-1, 0x1.f3c4289b0207dp+0,
                                        0x1.37cbf0bf073cep-4, 0x1.ed9c5296a689bp-1, 0x1.09deaee90a116p-1,
                                        0x1.90934f065168bp-1, -0x1.3c52399f816c3p-1};
  ts::Generator g(42);
  CHECK(float_bits(ts::randn({2, 4}, g).to_vector<float>()) == golden32);
  CHECK(g.offset() == 8);
  ts::Generator g64(42);
  CHECK(ts::randn({8}, g64, ts::kFloat64).to_vector<double>() == golden64);
  // Starting at an odd counter (after one uniform) the element at counter 3 is still the sine of
  // pair 1, whatever came before it.
  ts::Generator odd(42);
  (void)ts::rand({3}, odd);
  CHECK(float_bits(ts::randn({5}, odd).to_vector<float>()) ==
        std::vector<uint32_t>(golden32.begin() + 3, golden32.end()));
}

TEST_CASE("randn drawn in parts of any parity equals randn drawn at once") {
  for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
    ts::Generator whole(9), parts(9);
    const ts::Tensor all = ts::randn({10}, whole, dtype);
    const ts::Tensor first = ts::randn({3}, parts, dtype);
    const ts::Tensor second = ts::randn({7}, parts, dtype);
    CHECK(ts::equal(ts::cat({first, second}, 0), all));
    CHECK(whole.offset() == parts.offset());
  }
}

TEST_CASE("randn has the same bits for every kernel thread count and chunk start") {
  // Several 2^16-element chunks, a partial last one, and an odd first counter: every chunk
  // starts at an odd counter.
  const ts::Shape shape{3, 65536 + 7};
  for (ts::DType dtype : {ts::kFloat32, ts::kFloat64}) {
    CAPTURE(dtype);
    auto draw = [&] {
      ts::Generator g(77);
      (void)ts::rand({1}, g);
      return ts::randn(shape, g, dtype);
    };
    ts::Tensor first;
    {
      KernelThreads one(1);
      first = draw();
    }
    for (int count : {2, 3, 7, 0}) {
      CAPTURE(count);
      KernelThreads threads(count);
      if (dtype == ts::kFloat32)
        CHECK(same_bits(draw().to_vector<float>(), first.to_vector<float>()));
      else
        CHECK(same_bits(draw().to_vector<double>(), first.to_vector<double>()));
    }
    // The tail of the big draw equals a small draw that starts where the tail does.
    ts::Generator g(77);
    (void)ts::rand({1 + 2 * (65536 + 7) + 65536}, g);
    const ts::Tensor tail = ts::randn({7}, g, dtype);
    CHECK(ts::equal(first.select(0, 2).slice(0, 65536, 65536 + 7), tail));
  }
}

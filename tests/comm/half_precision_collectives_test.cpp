// Collectives on bfloat16 and float16 round every reduction step to the element type, as NCCL
// does, so the algorithm shows in the bits: an all_reduce whose ring and direct results differ, each
// equal to a model here of that algorithm's order of additions, rounded after each one. The
// rounding of the model is the hardware's double addition (see round_to), not the SDK's.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

// Round-to-nearest-even of x to a format of `precision` significant bits (normal range only: the
// values here are small integers).
float round_to(double x, int precision) {
  if (x == 0) return 0.f;
  const int exponent = std::ilogb(std::fabs(x));
  const double big = std::ldexp(1.0, 52 + exponent - (precision - 1));
  const volatile double sum = std::fabs(x) + big;
  return static_cast<float>(std::copysign(sum - big, x));
}

class RestoreAlgorithms {
 public:
  RestoreAlgorithms() : rules_(ts::dist::algorithms()) {}
  ~RestoreAlgorithms() { ts::dist::set_algorithms(rules_); }
  RestoreAlgorithms(const RestoreAlgorithms&) = delete;
  RestoreAlgorithms& operator=(const RestoreAlgorithms&) = delete;

 private:
  std::string rules_;
};

// all_reduce(SUM) of `inputs` (one vector per rank) in `dtype` under `rules`; rank 0's result as
// float32 (which holds every value exactly), after checking every rank got the same bits.
std::vector<float> all_reduce_sum(const std::vector<std::vector<float>>& inputs, ts::DType dtype,
                                  const std::string& rules) {
  const int p = static_cast<int>(inputs.size());
  ts::LocalMode mode(p);
  ts::dist::set_algorithms(rules);
  ts::Tensor x = ts::rank_map([&](int rank) {
    const std::vector<float>& v = inputs[static_cast<size_t>(rank)];
    return ts::from_values(v, {static_cast<int64_t>(v.size())}).to(dtype);
  });
  ts::dist::all_reduce(x);
  REQUIRE(x.dtype() == dtype);
  std::vector<float> first = x.shard(0).to(ts::kFloat32).to_vector<float>();
  for (int r = 1; r < p; ++r) CHECK(x.shard(r).to(ts::kFloat32).to_vector<float>() == first);
  return first;
}

}  // namespace

TEST_CASE("bfloat16 and float16 all_reduce rounds each step: ring and direct differ, each as its model") {
  RestoreAlgorithms restore;
  for (const ts::DType dtype : {ts::kBFloat16, ts::kFloat16}) {
    CAPTURE(ts::dtype_name(dtype));
    const int precision = dtype == ts::kBFloat16 ? 8 : 11;
    // big + 1 is a tie that rounds back to big; big + 2 is exact. Rank 0 holds big everywhere,
    // ranks 1 and 2 hold 1: the order of the additions decides whether the two ones are lost.
    const float big = std::ldexp(1.f, precision);
    const int p = 3;
    const std::vector<std::vector<float>> inputs = {{big, big, big}, {1, 1, 1}, {1, 1, 1}};
    const auto chain = [&](const std::vector<int>& ranks, size_t element) {
      double acc = inputs[static_cast<size_t>(ranks[0])][element];
      for (size_t i = 1; i < ranks.size(); ++i)
        acc = round_to(acc + inputs[static_cast<size_t>(ranks[i])][element], precision);
      return static_cast<float>(acc);
    };
    // Direct: every element is ((x0 + x1) + x2), rounded after each addition.
    std::vector<float> direct_model;
    for (size_t e = 0; e < 3; ++e) direct_model.push_back(chain({0, 1, 2}, e));
    // Ring (plugins/coll-ring): with three elements on three ranks, block j is element j, and its
    // reduce-scatter chain starts at rank j and goes round: ((xj + xj+1) + xj+2).
    std::vector<float> ring_model;
    for (size_t e = 0; e < 3; ++e) {
      const int j = static_cast<int>(e);
      ring_model.push_back(chain({j, (j + 1) % p, (j + 2) % p}, e));
    }
    CHECK(direct_model == std::vector<float>{big, big, big});
    CHECK(ring_model == std::vector<float>{big, big + 2, big});

    CHECK(all_reduce_sum(inputs, dtype, "*:direct") == direct_model);
    CHECK(all_reduce_sum(inputs, dtype, "all_reduce:ring;*:direct") == ring_model);
    // The same sums in float32 are exact, whatever the algorithm.
    CHECK(all_reduce_sum(inputs, ts::kFloat32, "all_reduce:ring;*:direct") ==
          std::vector<float>{big + 2, big + 2, big + 2});
  }
}

TEST_CASE("bfloat16 reduce_scatter, all_gather and MAX/AVG collectives") {
  RestoreAlgorithms restore;
  ts::LocalMode mode(2);
  ts::dist::set_algorithms("*:direct");
  ts::Tensor x = ts::rank_map([](int rank) {
    return ts::tensor({1.f + static_cast<float>(rank), -3.f, 0.5f, 256.f}, ts::kBFloat16);
  });
  ts::Tensor out = ts::zeros({2}, ts::kBFloat16);
  ts::dist::reduce_scatter_tensor(out, x);
  CHECK(out.shard(0).to(ts::kFloat32).to_vector<float>() == std::vector<float>{3.f, -6.f});
  CHECK(out.shard(1).to(ts::kFloat32).to_vector<float>() == std::vector<float>{1.f, 512.f});
  ts::Tensor gathered = ts::zeros({8}, ts::kBFloat16);
  ts::dist::all_gather_into_tensor(gathered, x);
  CHECK(gathered.shard(1).to(ts::kFloat32).to_vector<float>() ==
        std::vector<float>{1.f, -3.f, 0.5f, 256.f, 2.f, -3.f, 0.5f, 256.f});
  ts::Tensor m = x.clone();
  ts::dist::all_reduce(m, ts::ReduceOp::MAX);
  CHECK(m.shard(0).to(ts::kFloat32).to_vector<float>() == std::vector<float>{2.f, -3.f, 0.5f, 256.f});
  ts::Tensor a = x.clone();
  ts::dist::all_reduce(a, ts::ReduceOp::AVG);
  CHECK(a.dtype() == ts::kBFloat16);
  CHECK(a.shard(1).to(ts::kFloat32).to_vector<float>() == std::vector<float>{1.5f, -3.f, 0.5f, 256.f});
}

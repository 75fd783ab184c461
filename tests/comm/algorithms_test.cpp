// The collective algorithms of the coll-ring, coll-tree, coll-rd and coll-bruck plugins: every
// schedule verifies symbolically, results match the direct algorithm's for every dtype and reduce
// op, and each algorithm is bitwise reproducible (run to run, and across thread counts with inputs
// large enough that ranks run on the pool).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <tessera/tessera.hpp>
#include <thread>
#include <vector>

#include "same_bits.hpp"

namespace ts = tessera;

namespace {

// What each algorithm offers; the power-of-two-only ones reject other group sizes in their check.
struct Offer {
  std::string algorithm;
  std::string collective;
  bool power_of_two_only = false;
};

const std::vector<Offer>& offers() {
  static const std::vector<Offer> all = {
      {"ring", "all_reduce"},         {"ring", "all_gather"},     {"ring", "reduce_scatter"},
      {"tree", "broadcast"},          {"tree", "reduce"},         {"tree", "all_reduce"},
      {"rd", "all_reduce"},           {"rd", "all_gather", true}, {"rd", "reduce_scatter", true},
      {"rabenseifner", "all_reduce"}, {"bruck", "all_gather"},    {"bruck", "all_to_all"},
  };
  return all;
}

bool is_power_of_two(int p) { return (p & (p - 1)) == 0; }
bool is_rooted(const std::string& collective) { return collective == "broadcast" || collective == "reduce"; }

// Restores the algorithm rules and the thread count a test changed.
class RestoreSettings {
 public:
  RestoreSettings() : rules_(ts::dist::algorithms()), threads_(ts::threads()) {}
  ~RestoreSettings() {
    ts::dist::set_algorithms(rules_);
    ts::set_threads(threads_);
  }
  RestoreSettings(const RestoreSettings&) = delete;
  RestoreSettings& operator=(const RestoreSettings&) = delete;

 private:
  std::string rules_;
  int threads_;
};

bool is_float(ts::DType dtype) { return dtype == ts::kFloat32 || dtype == ts::kFloat64; }

std::vector<ts::ReduceOp> reduce_ops(ts::DType dtype) {
  using Op = ts::ReduceOp;
  if (is_float(dtype)) return {Op::SUM, Op::PRODUCT, Op::MIN, Op::MAX, Op::AVG, Op::premul_sum(0.5)};
  return {Op::SUM, Op::PRODUCT, Op::MIN, Op::MAX, Op::BAND, Op::BOR, Op::BXOR};
}

bool reduces(const std::string& collective) {
  return collective == "all_reduce" || collective == "reduce" || collective == "reduce_scatter";
}

// Per-rank random input of `numel` elements inside the active mode over p ranks. Products get
// values near 1 (floats) or in {1, 2} (ints) so that they stay representable.
ts::Tensor make_input(int p, int64_t numel, ts::DType dtype, const ts::ReduceOp& op, int64_t salt) {
  std::map<int, int64_t> seeds;
  for (int r = 0; r < p; ++r) seeds[r] = 7919 * salt + 31 * r + 1;
  ts::manual_seed(ts::LocalInt(seeds));
  const bool product = op.kind() == ts::ReduceOp::PRODUCT;
  if (is_float(dtype)) {
    const ts::Tensor x = ts::randn({numel}, dtype);
    return product ? x * 0.1 + 1.0 : x;
  }
  if (product) return ((ts::rand({numel}) * 2).to(ts::kInt64) + 1).to(dtype);
  return ((ts::rand({numel}) * 200).to(ts::kInt64) - 100).to(dtype);
}

// Runs one collective on a copy of x (n elements per block) and returns what it produced.
ts::Tensor run(const std::string& collective, const ts::Tensor& x, int p, int64_t n, const ts::ReduceOp& op,
               int root) {
  if (collective == "all_reduce") {
    ts::Tensor y = x.clone();
    ts::dist::all_reduce(y, op);
    return y;
  }
  if (collective == "broadcast") {
    ts::Tensor y = x.clone();
    ts::dist::broadcast(y, root);
    return y;
  }
  if (collective == "reduce") {
    ts::Tensor y = x.clone();
    ts::dist::reduce(y, root, op);
    return y;
  }
  if (collective == "all_gather") {
    ts::Tensor out = ts::zeros({p * n}, x.dtype());
    ts::dist::all_gather_into_tensor(out, x);
    return out;
  }
  if (collective == "reduce_scatter") {
    ts::Tensor out = ts::zeros({n}, x.dtype());
    ts::dist::reduce_scatter_tensor(out, x, op);
    return out;
  }
  REQUIRE(collective == "all_to_all");
  ts::Tensor out = ts::zeros({p * n}, x.dtype());
  ts::dist::all_to_all_single(out, x);
  return out;
}

template <class T>
bool same_bytes(const ts::Tensor& x, const ts::Tensor& y) {
  return test::same_bits(x.to_vector<T>(), y.to_vector<T>());
}

// Every rank's shard holds the same bytes in a and b (float equality would let -0 == 0 pass).
bool bitwise_equal(const ts::Tensor& a, const ts::Tensor& b, int p) {
  for (int r = 0; r < p; ++r) {
    const ts::Tensor x = a.shard(r);
    const ts::Tensor y = b.shard(r);
    if (x.dtype() != y.dtype()) return false;
    const bool same = x.dtype() == ts::kFloat32   ? same_bytes<float>(x, y)
                      : x.dtype() == ts::kFloat64 ? same_bytes<double>(x, y)
                      : x.dtype() == ts::kInt32   ? same_bytes<int32_t>(x, y)
                                                  : same_bytes<int64_t>(x, y);
    if (!same) return false;
  }
  return true;
}

int64_t input_numel(const std::string& collective, int p, int64_t n) {
  return collective == "reduce_scatter" || collective == "all_to_all" ? p * n : n;
}

void check_matches_direct(const Offer& offer, int p, int64_t n, ts::DType dtype, const ts::ReduceOp& op,
                          int root, int64_t salt) {
  CAPTURE(offer.algorithm);
  CAPTURE(offer.collective);
  CAPTURE(p);
  CAPTURE(n);
  const std::string dtype_name(ts::dtype_name(dtype));
  CAPTURE(dtype_name);
  const std::string op_name = op.to_string();
  CAPTURE(op_name);
  CAPTURE(root);
  ts::LocalMode mode(p);
  const ts::Tensor x = make_input(p, input_numel(offer.collective, p, n), dtype, op, salt);

  ts::dist::set_algorithms("*:direct");
  const ts::Tensor want = run(offer.collective, x, p, n, op, root);

  ts::dist::set_algorithms(offer.collective + ":" + offer.algorithm + ";*:direct");
  const bool applies = !offer.power_of_two_only || is_power_of_two(p);
  CHECK((ts::dist::algorithm_for(offer.collective, p, n * 8) == offer.algorithm) == applies);
  const ts::Tensor got = run(offer.collective, x, p, n, op, root);
  const ts::Tensor again = run(offer.collective, x, p, n, op, root);

  if (dtype == ts::kFloat32)
    CHECK(ts::allclose(got, want, 1e-4, 1e-5));
  else if (dtype == ts::kFloat64)
    CHECK(ts::allclose(got, want, 1e-10, 1e-12));
  else
    CHECK(ts::equal(got, want));
  CHECK(bitwise_equal(got, again, p));
}

// Below this many elements per rank the dispatcher runs ranks one after another
// (kParallelWorkThreshold in core/src/dispatch/spmd.cpp); the thread-count check must be above it
// so the ranks' work around the schedule (copies, AVG's and PREMUL_SUM's scaling) really runs on
// the pool.
constexpr int64_t kParallelElements = (int64_t{1} << 15) + 5;

// One collective on inputs large enough for the rank pool, run with 1, 2 and 4 threads: the bits
// must not depend on the thread count.
void check_thread_counts(const Offer& offer, int p, ts::DType dtype, const ts::ReduceOp& op, int64_t salt) {
  CAPTURE(offer.algorithm);
  CAPTURE(offer.collective);
  CAPTURE(p);
  const std::string dtype_name(ts::dtype_name(dtype));
  CAPTURE(dtype_name);
  const std::string op_name = op.to_string();
  CAPTURE(op_name);
  ts::LocalMode mode(p);
  // Every rank's input, and for block collectives every block, is above the threshold.
  const int64_t n = kParallelElements;
  const ts::Tensor x = make_input(p, input_numel(offer.collective, p, n), dtype, op, salt);
  REQUIRE(x.shard(0).numel() >= kParallelElements);
  ts::dist::set_algorithms(offer.collective + ":" + offer.algorithm + ";*:direct");
  const int root = is_rooted(offer.collective) ? p - 1 : 0;
  ts::set_threads(1);
  const ts::Tensor one = run(offer.collective, x, p, n, op, root);
  for (int threads : {2, 4}) {
    ts::set_threads(threads);
    REQUIRE(ts::threads() == threads);
    CHECK(bitwise_equal(one, run(offer.collective, x, p, n, op, root), p));
  }
}

void check_algorithm_against_direct(const std::string& algorithm) {
  RestoreSettings restore;
  int64_t salt = 0;
  for (const Offer& offer : offers()) {
    if (offer.algorithm != algorithm) continue;
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16}) {
      for (int64_t n : {int64_t{1}, int64_t{2 * p + 3}}) {
        const std::vector<int> roots =
            is_rooted(offer.collective) ? std::vector<int>{0, p - 1} : std::vector<int>{0};
        for (int root : roots) {
          for (ts::DType dtype : {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64}) {
            if (!reduces(offer.collective)) {
              check_matches_direct(offer, p, n, dtype, ts::ReduceOp::SUM, root, ++salt);
              continue;
            }
            for (const ts::ReduceOp& op : reduce_ops(dtype))
              check_matches_direct(offer, p, n, dtype, op, root, ++salt);
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("the ring, tree, rd, rabenseifner and bruck algorithms are loaded") {
  const std::vector<std::string> names = ts::dist::algorithm_names();
  for (const char* name : {"ring", "tree", "rd", "rabenseifner", "bruck"}) {
    CAPTURE(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
}

TEST_CASE("every schedule verifies for every group size and count") {
  for (const Offer& offer : offers()) {
    for (int p : {1, 2, 3, 4, 5, 7, 8, 16}) {
      const std::vector<int> roots =
          is_rooted(offer.collective) ? std::vector<int>{0, p - 1} : std::vector<int>{0};
      for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{p - 1}, int64_t{2 * p + 3}}) {
        for (int root : roots) {
          CAPTURE(offer.algorithm);
          CAPTURE(offer.collective);
          CAPTURE(p);
          CAPTURE(n);
          CAPTURE(root);
          const std::string problem =
              ts::dist::verify_schedule(offer.algorithm, offer.collective, p, n, root);
          if (offer.power_of_two_only && !is_power_of_two(p)) {
            CHECK(problem.find("power-of-two") != std::string::npos);
            CHECK(problem.find(std::to_string(p)) != std::string::npos);
          } else {
            CHECK(problem == "");
          }
        }
      }
    }
  }
}

TEST_CASE("the power-of-two-only rd algorithms fall back on other group sizes") {
  RestoreSettings restore;
  ts::dist::set_algorithms("all_gather:rd;reduce_scatter:rd;*:direct");
  for (const char* collective : {"all_gather", "reduce_scatter"}) {
    CAPTURE(collective);
    CHECK(ts::dist::algorithm_for(collective, 8, 64) == "rd");
    CHECK(ts::dist::algorithm_for(collective, 6, 64) == "direct");
  }
}

TEST_CASE("results do not depend on the thread count when ranks run on the pool") {
  RestoreSettings restore;
  int64_t salt = 1000;
  for (const Offer& offer : offers())
    for (int p : {3, 4})
      for (ts::DType dtype : {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64}) {
        const std::vector<ts::ReduceOp> ops =
            !reduces(offer.collective) ? std::vector<ts::ReduceOp>{ts::ReduceOp::SUM}
            : is_float(dtype)          ? std::vector<ts::ReduceOp>{ts::ReduceOp::SUM, ts::ReduceOp::AVG}
                                       : std::vector<ts::ReduceOp>{ts::ReduceOp::SUM, ts::ReduceOp::BXOR};
        for (const ts::ReduceOp& op : ops) check_thread_counts(offer, p, dtype, op, ++salt);
      }
}

TEST_CASE("ring matches direct and is reproducible") { check_algorithm_against_direct("ring"); }
TEST_CASE("tree matches direct and is reproducible") { check_algorithm_against_direct("tree"); }
TEST_CASE("rd matches direct and is reproducible") { check_algorithm_against_direct("rd"); }
TEST_CASE("rabenseifner matches direct and is reproducible") {
  check_algorithm_against_direct("rabenseifner");
}
TEST_CASE("bruck matches direct and is reproducible") { check_algorithm_against_direct("bruck"); }

namespace {

// Every element sums {1e8, 1, -1e8} in an order that depends on rank and element, so that two
// algorithms adding in different orders give different floats ((1e8 + 1) - 1e8 = 0 in float32,
// (1e8 - 1e8) + 1 = 1).
std::vector<float> all_reduce_of_order_sensitive_values() {
  ts::LocalMode mode(3);
  const float values[3] = {1e8f, 1.0f, -1e8f};
  ts::Tensor x = ts::rank_map([&](int r) {
    std::vector<float> mine;
    for (int e = 0; e < 3; ++e) mine.push_back(values[(r + e) % 3]);
    return ts::from_values(mine, {3});
  });
  std::vector<float> all;
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second call is the one a remembered choice serves
    ts::Tensor y = x.clone();
    ts::dist::all_reduce(y);
    all = y.shard(2).to_vector<float>();
  }
  return all;
}

// What a thread that never ran a collective computes under `rules`: nothing remembered.
std::vector<float> on_a_fresh_thread(const std::string& rules) {
  std::vector<float> result;
  std::thread([&] {
    ts::dist::set_algorithms(rules);
    result = all_reduce_of_order_sensitive_values();
  }).join();
  return result;
}

}  // namespace

TEST_CASE("a repeated collective follows rules set since the last call") {
  RestoreSettings restore;
  const std::vector<float> by_ring = on_a_fresh_thread("all_reduce:ring;*:direct");
  const std::vector<float> by_direct = on_a_fresh_thread("*:direct");
  REQUIRE_FALSE(test::same_bits(by_ring, by_direct));  // the inputs tell the two orders apart
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  CHECK(test::same_bits(all_reduce_of_order_sensitive_values(), by_ring));
  ts::dist::set_algorithms("*:direct");  // the same call again: the thread's last choice is stale
  CHECK(test::same_bits(all_reduce_of_order_sensitive_values(), by_direct));
  ts::dist::set_algorithms("all_reduce:ring;*:direct");
  CHECK(test::same_bits(all_reduce_of_order_sensitive_values(), by_ring));
}

// Property test: every loaded algorithm x group size 1..9 x every collective it offers x reduce op
// x dtype (float32, float64, int32, int64) x counts (0, 1 and one no group size divides) gives
// what the direct algorithm gives, on distinct inputs from a seeded generator. Integers, MIN, MAX
// and data movement must match bitwise; float sums, products and averages within a tolerance
// (their reduction order is the algorithm's own). Roots are drawn from the seed too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace ts = tessera;

namespace {

const std::vector<std::string> kCollectives = {"all_reduce",     "broadcast",  "reduce",  "all_gather",
                                               "reduce_scatter", "all_to_all", "scatter", "gather"};

bool is_float(ts::DType dtype) { return dtype == ts::kFloat32 || dtype == ts::kFloat64; }
bool reduces(const std::string& c) { return c == "all_reduce" || c == "reduce" || c == "reduce_scatter"; }
bool rooted(const std::string& c) {
  return c == "broadcast" || c == "reduce" || c == "scatter" || c == "gather";
}
// Input elements per rank for `n` elements per block.
int64_t input_numel(const std::string& c, int p, int64_t n) {
  return c == "reduce_scatter" || c == "all_to_all" || c == "scatter" ? p * n : n;
}

std::vector<ts::ReduceOp> ops_for(const std::string& collective, ts::DType dtype) {
  using Op = ts::ReduceOp;
  if (!reduces(collective)) return {Op::SUM};  // unused by data movement
  if (is_float(dtype)) return {Op::SUM, Op::PRODUCT, Op::MIN, Op::MAX, Op::AVG};
  return {Op::SUM, Op::PRODUCT, Op::MIN, Op::MAX, Op::BAND, Op::BOR, Op::BXOR};
}

// Exactly rounded-free comparisons: orders of evaluation may differ only for these.
bool needs_tolerance(ts::DType dtype, const ts::ReduceOp& op, const std::string& collective) {
  return is_float(dtype) && reduces(collective) &&
         (op.kind() == ts::ReduceOp::SUM || op.kind() == ts::ReduceOp::PRODUCT ||
          op.kind() == ts::ReduceOp::AVG);
}

// Distinct values per rank and element: a seeded permutation. Products take values 1 + v/2048
// (floats) or 1 + (r + k) % 10 (integers, distinct across ranks at each element), which keep a
// product of nine representable without overflow.
ts::Tensor make_input(int p, int64_t numel, ts::DType dtype, const ts::ReduceOp& op, std::mt19937_64& rng) {
  std::vector<int64_t> order(static_cast<size_t>(p * numel));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const bool product = op.kind() == ts::ReduceOp::PRODUCT;
  std::vector<std::pair<int, ts::Tensor>> shards;
  ts::DisabledLocalMode dense_shards;
  const int64_t center = p * numel / 2;  // an integer, so that integer dtypes hold the values exactly
  for (int r = 0; r < p; ++r) {
    std::vector<double> values;
    for (int64_t k = 0; k < numel; ++k) {
      const int64_t v = order[static_cast<size_t>(r * numel + k)];
      if (product)
        values.push_back(is_float(dtype) ? 1.0 + static_cast<double>(v) / 2048.0 : 1.0 + (r + k) % 10);
      else
        values.push_back(is_float(dtype) ? static_cast<double>(v - center) / 4.0
                                         : static_cast<double>(v - center));
    }
    shards.emplace_back(r, ts::from_values<double>(values, {numel}).to(dtype));
  }
  return ts::local_tensor(ts::RankMap<ts::Tensor>(shards));
}

// What a collective produced that it defines: per group rank (only the root's for reduce and
// gather), its output as float64 values and as raw bytes.
struct Outcome {
  std::vector<std::vector<double>> values;
  std::vector<std::string> bytes;
};

void record(Outcome& outcome, const ts::Tensor& dense) {
  const ts::Tensor c = dense.contiguous();
  outcome.values.push_back(c.to(ts::kFloat64).to_vector<double>());
  std::string raw(static_cast<size_t>(c.numel()) * ts::itemsize(c.dtype()), '\0');
  // An empty output has no bytes (and an empty vector's data() may be null, which memcpy rejects).
  if (!raw.empty()) {
    if (c.dtype() == ts::kFloat32) std::memcpy(raw.data(), c.to_vector<float>().data(), raw.size());
    if (c.dtype() == ts::kFloat64) std::memcpy(raw.data(), c.to_vector<double>().data(), raw.size());
    if (c.dtype() == ts::kInt32) std::memcpy(raw.data(), c.to_vector<int32_t>().data(), raw.size());
    if (c.dtype() == ts::kInt64) std::memcpy(raw.data(), c.to_vector<int64_t>().data(), raw.size());
  }
  outcome.bytes.push_back(raw);
}

Outcome run(const std::string& collective, const ts::Tensor& x, int p, int64_t n, const ts::ReduceOp& op,
            int root) {
  Outcome outcome;
  const ts::DType dtype = x.dtype();
  auto every_rank = [&](const ts::Tensor& t) {
    for (int r = 0; r < p; ++r) record(outcome, t.shard(r));
  };
  if (collective == "all_reduce" || collective == "broadcast" || collective == "reduce") {
    ts::Tensor y = x.clone();
    if (collective == "all_reduce") ts::dist::all_reduce(y, op);
    if (collective == "broadcast") ts::dist::broadcast(y, root);
    if (collective != "reduce")
      every_rank(y);
    else {
      ts::dist::reduce(y, root, op);
      record(outcome, y.shard(root));
    }
  } else if (collective == "all_gather" || collective == "all_to_all") {
    ts::Tensor out = ts::zeros({p * n}, dtype);
    if (collective == "all_gather")
      ts::dist::all_gather_into_tensor(out, x);
    else
      ts::dist::all_to_all_single(out, x);
    every_rank(out);
  } else if (collective == "reduce_scatter") {
    ts::Tensor out = ts::zeros({n}, dtype);
    ts::dist::reduce_scatter_tensor(out, x, op);
    every_rank(out);
  } else if (collective == "scatter") {
    std::vector<ts::Tensor> blocks;
    for (int i = 0; i < p; ++i) blocks.push_back(x.narrow(0, i * n, n).contiguous());
    ts::Tensor out = ts::zeros({n}, dtype);
    ts::dist::scatter(out, blocks, root);
    every_rank(out);
  } else {
    REQUIRE(collective == "gather");
    std::vector<ts::Tensor> outputs;
    for (int i = 0; i < p; ++i) outputs.push_back(ts::zeros({n}, dtype));
    ts::dist::gather(outputs, x, root);
    for (const ts::Tensor& o : outputs) record(outcome, o.shard(root));
  }
  return outcome;
}

bool close(const Outcome& got, const Outcome& want, ts::DType dtype) {
  const double rtol = dtype == ts::kFloat32 ? 1e-5 : 1e-12;
  if (got.values.size() != want.values.size()) return false;
  for (size_t r = 0; r < got.values.size(); ++r) {
    if (got.values[r].size() != want.values[r].size()) return false;
    for (size_t k = 0; k < got.values[r].size(); ++k)
      if (std::abs(got.values[r][k] - want.values[r][k]) > rtol * (1.0 + std::abs(want.values[r][k])))
        return false;
  }
  return true;
}

// Which collectives `algorithm` offers, as verify_schedule tells (an algorithm loaded later is
// covered without editing this test).
bool offers(const std::string& algorithm, const std::string& collective) {
  return ts::dist::verify_schedule(algorithm, collective, 2, 1).find("does not implement") ==
         std::string::npos;
}

class RestoreRules {
 public:
  RestoreRules() : rules_(ts::dist::algorithms()) {}
  ~RestoreRules() { ts::dist::set_algorithms(rules_); }
  RestoreRules(const RestoreRules&) = delete;
  RestoreRules& operator=(const RestoreRules&) = delete;

 private:
  std::string rules_;
};

}  // namespace

TEST_CASE("property: every algorithm, group size, collective, op and dtype matches the direct algorithm") {
  RestoreRules restore;
  std::mt19937_64 rng(20240611);
  int64_t applied = 0;
  int64_t fell_back = 0;
  for (const std::string& algorithm : ts::dist::algorithm_names()) {
    if (algorithm == "direct") continue;  // the oracle
    for (const std::string& collective : kCollectives) {
      if (!offers(algorithm, collective)) continue;
      for (int p = 1; p <= 9; ++p) {
        ts::LocalMode mode(p);
        for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{2 * p + 1}}) {
          for (ts::DType dtype : {ts::kFloat32, ts::kFloat64, ts::kInt32, ts::kInt64}) {
            for (const ts::ReduceOp& op : ops_for(collective, dtype)) {
              const int root = rooted(collective) ? static_cast<int>(rng() % static_cast<uint64_t>(p)) : 0;
              const ts::Tensor x = make_input(p, input_numel(collective, p, n), dtype, op, rng);
              ts::dist::set_algorithms("*:direct");
              const Outcome want = run(collective, x, p, n, op, root);
              ts::dist::set_algorithms(collective + ":" + algorithm + ";*:direct");
              const bool applies =
                  ts::dist::algorithm_for(collective, p, n * ts::itemsize(dtype)) == algorithm;
              const Outcome got = run(collective, x, p, n, op, root);
              ++(applies ? applied : fell_back);
              const bool ok =
                  needs_tolerance(dtype, op, collective) ? close(got, want, dtype) : got.bytes == want.bytes;
              if (!ok) {
                const std::string dtype_name(ts::dtype_name(dtype));
                const std::string op_name = op.to_string();
                FAIL_CHECK(algorithm << " " << collective << " p=" << p << " n=" << n << " " << dtype_name
                                     << " " << op_name << " root=" << root << " differs from direct");
              }
            }
          }
        }
      }
    }
  }
  MESSAGE("property cases: " << applied << " run by the algorithm under test, " << fell_back
                             << " fell back to direct (a precondition such as a power-of-two group)");
  CHECK(applied > 3000);
}

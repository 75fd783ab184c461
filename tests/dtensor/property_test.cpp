// Property tests for DTensors: seeded random meshes (1-3 dims of 1-5 ranks), shapes with
// 0, 1 and uneven sizes, and placements (S, B, R, P; nested shards of one dim). Every
// redistribution and op is checked against a dense oracle (the dense op on the full tensor) and
// every shard against layout_oracle.hpp's independent layout arithmetic.
//
// A failure prints its seed and case; TESSERA_PROPERTY_SEED=<seed> reruns just that case.
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <tessera/tessera.hpp>

#include "layout_oracle.hpp"

namespace ts = tessera;
using layout_oracle::check_layout;

namespace {

constexpr uint64_t kBaseSeed = 0x5eed0009;
constexpr int64_t kMaxWorld = 24;  // keeps every case fast

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  int64_t between(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(engine_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& options) {
    return options[static_cast<size_t>(between(0, static_cast<int64_t>(options.size()) - 1))];
  }

 private:
  std::mt19937_64 engine_;
};

// The seeds of one property: `count` of them from the base, or only TESSERA_PROPERTY_SEED's.
std::vector<uint64_t> seeds(uint64_t property, int count) {
  if (const char* chosen = std::getenv("TESSERA_PROPERTY_SEED")) return {std::stoull(chosen, nullptr, 0)};
  std::vector<uint64_t> result;
  for (int i = 0; i < count; ++i) result.push_back(kBaseSeed + property * 1000003 + static_cast<uint64_t>(i));
  return result;
}

std::vector<int64_t> random_mesh(Rng& rng) {
  for (;;) {
    std::vector<int64_t> shape(static_cast<size_t>(rng.between(1, 3)));
    int64_t world = 1;
    for (int64_t& s : shape) world *= (s = rng.between(1, 5));
    if (world <= kMaxWorld) return shape;
  }
}

int64_t random_size(Rng& rng) {
  const int64_t r = rng.between(0, 9);
  return r == 0 ? 0 : r == 1 ? 1 : rng.between(2, 7);
}

ts::Shape random_shape(Rng& rng, int64_t ndim) {
  ts::Shape shape(static_cast<size_t>(ndim));
  for (int64_t& s : shape) s = random_size(rng);
  return shape;
}

int64_t numel(const ts::Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Distinct integer values (exact in float sums), centred on 0, shifted per tensor.
ts::Tensor counting(const ts::Shape& shape, Rng& rng) {
  ts::DisabledLocalMode plain;
  const int64_t n = numel(shape);
  return (ts::arange(n) - n / 2 + rng.between(0, 9)).to(ts::kFloat32).reshape(shape);
}

// S and B on a dim of a small range (so nested shards of one dim are common), R, and when
// `partial_op` is given sometimes that pending reduction.
ts::Placement random_placement(Rng& rng, int64_t ndim, const std::string& partial_op = "") {
  const int64_t r = rng.between(0, 9);
  if (r == 9 && !partial_op.empty()) return ts::Partial(partial_op);
  if (r <= 2 || ndim == 0) return ts::Replicate();
  const int64_t d = rng.between(0, std::min<int64_t>(ndim - 1, 1 + rng.between(0, 1)));
  return r <= 6 ? ts::Shard(d) : ts::BalancedShard(d);
}

ts::Placements random_placements(Rng& rng, size_t mesh_ndim, int64_t ndim,
                                 const std::string& partial_op = "") {
  ts::Placements placements;
  for (size_t i = 0; i < mesh_ndim; ++i) placements.push_back(random_placement(rng, ndim, partial_op));
  return placements;
}

bool has_partial(const ts::Placements& placements) {
  for (const ts::Placement& p : placements)
    if (p.is_partial()) return true;
  return false;
}

// Per-rank terms whose pending reductions (one op, on the P mesh dims) give `full` laid out by the
// other mesh dims: the rank at coordinate 0 of every P dim holds the value, the others terms that
// cancel (sum) or stay below (max) or above (min) it.
ts::Tensor partial_terms(const ts::Tensor& full, const ts::Placements& placements,
                         const std::vector<int64_t>& mesh_shape, const std::string& op) {
  ts::Placements layout = placements;
  for (ts::Placement& p : layout)
    if (p.is_partial()) p = ts::Replicate();
  return ts::rank_map([&](int rank) {
    const ts::Tensor v = layout_oracle::expected_shard(full, layout, mesh_shape, rank);
    const std::vector<int64_t> coord = layout_oracle::coordinate(rank, mesh_shape);
    std::vector<float> ones_to_threes(static_cast<size_t>(v.numel()));
    for (size_t e = 0; e < ones_to_threes.size(); ++e) ones_to_threes[e] = static_cast<float>(e % 3 + 1);
    const ts::Tensor wobble = ts::from_values(ones_to_threes, v.sizes());
    bool origin = true;
    int64_t spread = 0;
    for (size_t i = 0; i < placements.size(); ++i)
      if (placements[i].is_partial()) {
        origin = origin && coord[i] == 0;
        spread += coord[i];
      }
    if (op == "max") return v - wobble * static_cast<double>(spread);
    if (op == "min") return v + wobble * static_cast<double>(spread);
    ts::Tensor term = origin ? v.clone() : ts::zeros_like(v);
    for (size_t i = 0; i < placements.size(); ++i) {
      if (!placements[i].is_partial()) continue;
      const int64_t k = mesh_shape[i];
      term = term + wobble * static_cast<double>(coord[i] == 0 ? -(k * (k - 1) / 2) : coord[i]);
    }
    return term;
  });
}

// `full` laid out as `placements` (Partial ones holding terms of `op`).
ts::DTensor make_dtensor(const ts::Tensor& full, const ts::DeviceMesh& mesh, const ts::Placements& placements,
                         const std::string& op = "sum") {
  if (!has_partial(placements)) return ts::distribute_tensor(full, mesh, placements);
  return ts::from_local(partial_terms(full, placements, mesh.shape(), op), mesh, placements, full.sizes());
}

std::string text(const std::vector<int64_t>& v) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str() + "]";
}

// Runs `dtensor_op` and checks it against `dense_op` on the full tensors: the same values (and
// every shard where the layout oracle says), or an error from both.
void check_op(const std::function<ts::DTensor()>& dtensor_op, const std::function<ts::Tensor()>& dense_op,
              double tolerance, int& cases) {
  ++cases;
  ts::Tensor expected;
  bool dense_failed = false;
  try {
    ts::DisabledLocalMode plain;
    expected = dense_op();
  } catch (const ts::Error&) {
    dense_failed = true;
  }
  if (dense_failed) {
    CHECK_THROWS_AS(dtensor_op(), ts::Error);
    return;
  }
  std::optional<ts::DTensor> actual;
  try {
    actual = dtensor_op();
  } catch (const ts::Error& e) {
    FAIL("the DTensor op failed where the dense op did not: " << std::string(e.what()));
    return;
  }
  check_layout(*actual, expected, tolerance);
}

}  // namespace

TEST_CASE("property: redistribute between random placements, and back") {
  int cases = 0;
  for (uint64_t seed : seeds(1, 1000)) {
    Rng rng(seed);
    const std::vector<int64_t> mesh_shape = random_mesh(rng);
    const ts::Shape shape = random_shape(rng, rng.between(1, 3));
    const std::string op = rng.pick<std::string>({"sum", "max", "min"});
    const ts::Placements from = random_placements(rng, mesh_shape.size(), static_cast<int64_t>(shape.size()),
                                                  rng.chance(0.3) ? op : "");
    std::ostringstream what;
    what << "seed " << seed << " (rerun: TESSERA_PROPERTY_SEED=" << seed << "): mesh " << text(mesh_shape)
         << ", tensor " << text(shape) << ", from " << ts::placements_text(from) << " (partial op " << op
         << ")";
    INFO(what.str());
    ts::LocalMode mode(static_cast<int>(numel(mesh_shape)));
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", mesh_shape);
    const ts::Tensor x = counting(shape, rng);
    const ts::DTensor source = make_dtensor(x, mesh, from, op);
    check_layout(source, x);
    for (int t = 0; t < 4; ++t) {
      ts::Placements to = random_placements(rng, mesh_shape.size(), static_cast<int64_t>(shape.size()));
      for (size_t i = 0; i < to.size(); ++i)
        if (from[i].is_partial() && rng.chance(0.3)) to[i] = from[i];  // a pending reduction may stay
      INFO("to " << ts::placements_text(to));
      ++cases;
      const ts::DTensor moved = source.redistribute(to);
      CHECK(moved.placements() == to);
      check_layout(moved, x);
      if (has_partial(from)) continue;
      ++cases;
      check_layout(moved.redistribute(from), x, 0.0, "and back");
    }
  }
  MESSAGE("redistribution property cases: " << cases);
}

TEST_CASE("property: ops on random DTensors match the dense op") {
  int cases = 0;
  for (uint64_t seed : seeds(2, 2000)) {
    Rng rng(seed);
    const std::vector<int64_t> mesh_shape = random_mesh(rng);
    const size_t mesh_ndim = mesh_shape.size();
    ts::LocalMode mode(static_cast<int>(numel(mesh_shape)));
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", mesh_shape);
    const int64_t kind = rng.between(0, 5);
    std::ostringstream what;
    what << "seed " << seed << " (rerun: TESSERA_PROPERTY_SEED=" << seed << "): mesh " << text(mesh_shape)
         << ", ";
    switch (kind) {
      case 0: {  // matmul, 2-d or batched
        const bool batched = rng.chance(0.3);
        const int64_t m = random_size(rng), k = std::max<int64_t>(1, random_size(rng)), n = random_size(rng);
        const ts::Shape sa = batched ? ts::Shape{random_size(rng), m, k} : ts::Shape{m, k};
        const ts::Shape sb = batched && rng.chance(0.5) ? ts::Shape{sa[0], k, n} : ts::Shape{k, n};
        const ts::Tensor a = counting(sa, rng), b = counting(sb, rng);
        const ts::Placements pa = random_placements(rng, mesh_ndim, a.dim(), "sum");
        const ts::Placements pb = random_placements(rng, mesh_ndim, b.dim());
        what << "matmul " << text(sa) << " " << ts::placements_text(pa) << " @ " << text(sb) << " "
             << ts::placements_text(pb);
        INFO(what.str());
        check_op([&] { return ts::matmul(make_dtensor(a, mesh, pa), make_dtensor(b, mesh, pb)); },
                 [&] { return ts::matmul(a, b); }, 1e-5, cases);
        break;
      }
      case 1: {  // binary pointwise with broadcasting, and scalars
        const ts::Shape sa = random_shape(rng, rng.between(1, 3));
        ts::Shape sb(sa.begin() + rng.between(0, static_cast<int64_t>(sa.size()) - 1), sa.end());
        for (int64_t& s : sb)
          if (rng.chance(0.3)) s = 1;
        const bool swap = rng.chance(0.3);
        const ts::Tensor a = counting(swap ? sb : sa, rng), b = counting(swap ? sa : sb, rng);
        const ts::Placements pa = random_placements(rng, mesh_ndim, a.dim(), "sum");
        const ts::Placements pb = random_placements(rng, mesh_ndim, b.dim(), "sum");
        const int64_t op = rng.between(0, 5);
        what << "pointwise op " << op << " " << text(a.sizes()) << " " << ts::placements_text(pa) << " with "
             << text(b.sizes()) << " " << ts::placements_text(pb);
        INFO(what.str());
        using DOp = ts::DTensor (*)(const ts::DTensor&, const ts::DTensor&);
        using TOp = ts::Tensor (*)(const ts::Tensor&, const ts::Tensor&);
        const std::vector<std::pair<DOp, TOp>> ops = {{ts::add, ts::add},
                                                      {ts::sub, ts::sub},
                                                      {ts::mul, ts::mul},
                                                      {ts::maximum, ts::maximum},
                                                      {ts::minimum, ts::minimum}};
        if (op < 5) {
          // Named, not structured bindings: the lambdas capture them, and clang 14 cannot capture one.
          const DOp dop = ops[static_cast<size_t>(op)].first;
          const TOp top = ops[static_cast<size_t>(op)].second;
          check_op([&] { return dop(make_dtensor(a, mesh, pa), make_dtensor(b, mesh, pb)); },
                   [&] { return top(a, b); }, 1e-6, cases);
        } else {
          check_op([&] { return ts::relu(make_dtensor(a, mesh, pa) * 2.0 + 1.5); },
                   [&] { return ts::relu(a * 2.0 + 1.5); }, 1e-6, cases);
        }
        break;
      }
      case 2: {  // reductions
        const ts::Shape shape = random_shape(rng, rng.between(1, 3));
        std::vector<int64_t> dims;
        for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
          if (rng.chance(0.4)) dims.push_back(d);
        const bool keepdim = rng.chance(0.5);
        const std::string name = rng.pick<std::string>({"sum", "max", "min", "mean"});
        const ts::Tensor x = counting(shape, rng);
        const ts::Placements p = random_placements(rng, mesh_ndim, x.dim(), name == "sum" ? "sum" : "");
        what << name << " over " << text(dims) << (keepdim ? " keepdim" : "") << " of " << text(shape) << " "
             << ts::placements_text(p);
        INFO(what.str());
        using DOp = ts::DTensor (*)(const ts::DTensor&, const std::vector<int64_t>&, bool);
        using TOp = ts::Tensor (*)(const ts::Tensor&, const std::vector<int64_t>&, bool);
        const DOp dop = name == "sum"   ? DOp(ts::sum)
                        : name == "max" ? DOp(ts::max)
                        : name == "min" ? DOp(ts::min)
                                        : DOp(ts::mean);
        const TOp top = name == "sum"   ? TOp(ts::sum)
                        : name == "max" ? TOp(ts::max)
                        : name == "min" ? TOp(ts::min)
                                        : TOp(ts::mean);
        check_op([&] { return dop(make_dtensor(x, mesh, p), dims, keepdim); },
                 [&] { return top(x, dims, keepdim); }, 1e-5, cases);
        break;
      }
      case 3: {  // reshape (and view where it is local)
        const ts::Shape shape = random_shape(rng, rng.between(1, 3));
        const int64_t total = numel(shape);
        ts::Shape target;
        if (total == 0) {
          target = random_shape(rng, rng.between(1, 3));
          target[static_cast<size_t>(rng.between(0, static_cast<int64_t>(target.size()) - 1))] = 0;
        } else {
          // Split the element count into random factors, with some 1s between them.
          int64_t left = total;
          for (int64_t f = 2; f <= left;) {
            if (left % f == 0 && rng.chance(0.6)) {
              target.push_back(f);
              left /= f;
            } else if (left % f == 0 && rng.chance(0.5) && !target.empty()) {
              target.back() *= f;
              left /= f;
            } else {
              ++f;
            }
            if (rng.chance(0.1)) target.push_back(1);
          }
          if (left > 1 || target.empty()) target.push_back(left);
        }
        const ts::Tensor x = counting(shape, rng);
        const ts::Placements p = random_placements(rng, mesh_ndim, x.dim(), "sum");
        what << "reshape " << text(shape) << " " << ts::placements_text(p) << " to " << text(target);
        INFO(what.str());
        check_op([&] { return ts::reshape(make_dtensor(x, mesh, p), target); },
                 [&] { return x.reshape(target); }, 0.0, cases);
        // view: the same values (a shard it cannot follow is gathered first, as in PyTorch).
        {
          const ts::DTensor v = ts::view(make_dtensor(x, mesh, p), target);
          ts::Tensor expected;
          {
            ts::DisabledLocalMode plain;
            expected = x.reshape(target);
          }
          check_layout(v, expected, 0.0, "view");
        }
        ++cases;
        break;
      }
      case 4: {  // softmax
        const ts::Shape shape = random_shape(rng, rng.between(1, 3));
        const int64_t dim = rng.between(0, static_cast<int64_t>(shape.size()) - 1);
        const ts::Tensor counted = counting(shape, rng);
        ts::Tensor x;
        {
          ts::DisabledLocalMode plain;
          x = counted / 8.0;
        }
        const ts::Placements p = random_placements(rng, mesh_ndim, x.dim(), "sum");
        what << "softmax over " << dim << " of " << text(shape) << " " << ts::placements_text(p);
        INFO(what.str());
        check_op([&] { return ts::softmax(make_dtensor(x, mesh, p), dim); },
                 [&] { return ts::softmax(x, dim); }, 1e-5, cases);
        break;
      }
      default: {  // permute then a pointwise op
        const ts::Shape shape = random_shape(rng, 3);
        std::vector<int64_t> order = {0, 1, 2};
        std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
        const ts::Tensor x = counting(shape, rng);
        const ts::Placements p = random_placements(rng, mesh_ndim, x.dim(), "sum");
        what << "permute " << text(order) << " of " << text(shape) << " " << ts::placements_text(p);
        INFO(what.str());
        check_op([&] { return ts::permute(make_dtensor(x, mesh, p), order) * 3.0; },
                 [&] { return x.permute(order) * 3.0; }, 0.0, cases);
      }
    }
  }
  MESSAGE("op property cases: " << cases);
}

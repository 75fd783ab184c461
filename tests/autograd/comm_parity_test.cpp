// The collectives a DTensor program's forward and backward issue equal those PyTorch's
// CommDebugMode reports for the same program, and its values and gradients equal the program run
// densely (plain tensors, one process). Gradients stay Partial until something needs them
// otherwise: the input gradient of a column-parallel matmul is per-rank terms that the
// redistribution which made its input combines (a reduce_scatter back to a sequence shard), or
// that a DTensor leaf keeps pending.
//
// The expected counts were measured with PyTorch 2.15 (DTensor under CommDebugMode on a fake
// process group of 2, 3 and 4 ranks, and on a (2, 2) mesh with the batch sharded over dp), for
// these very programs: the same shapes, placements and ops in the same order.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tessera/tessera.hpp>

#include "mlp_oracle.hpp"

namespace ts = tessera;

namespace {

constexpr int64_t B = 2, S = 12, D = 12, H = 12;

// A program's inputs (leaves), given as dense values, and how it runs on them. `Value` is
// ts::Tensor for the dense run and ts::DTensor for the distributed one.
struct Leaf {
  ts::Shape shape;
  ts::Placement tp;    // its placement on the tp mesh dim
  bool batch = false;  // its dim 0 is the batch, sharded over dp on a 2-d mesh
};

struct Counts {
  std::map<std::string, int64_t> forward, backward;
};

std::map<std::string, int64_t> by_collective(const ts::CommCounter& counter) {
  std::map<std::string, int64_t> out;
  for (const ts::CommCounter::Entry& e : counter.entries()) out[e.collective] += e.calls;
  return out;
}

std::string text(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [name, calls] : counts) out += name + "=" + std::to_string(calls) + " ";
  return out.empty() ? "none" : out;
}

// The placements of a leaf (or of a value laid out like one) on `mesh` (1-d: tp; 2-d: dp, tp).
ts::Placements placed(const ts::DeviceMesh& mesh, const ts::Placement& tp, bool batch) {
  if (mesh.ndim() == 1) return {tp};
  return {batch ? ts::Placement(ts::Shard(0)) : ts::Placement(ts::Replicate()), tp};
}

std::vector<double> values_of(const ts::Tensor& t) { return t.contiguous().to_vector<double>(); }

void check_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  REQUIRE_MESSAGE(got.size() == want.size(), what);
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(got[i] == doctest::Approx(want[i]).epsilon(1e-9), what << " index " << i);
}

struct Program {
  std::vector<Leaf> leaves;
  ts::Placement out_tp;  // the output's placement on tp (its dim 0 is the batch)
  std::function<ts::Tensor(const std::vector<ts::Tensor>&)> dense;
  std::function<ts::DTensor(const std::vector<ts::DTensor>&, const ts::DeviceMesh&)> distributed;
};

// Runs `p` densely and on `mesh`; checks the output and every leaf's gradient against the dense
// run; returns the collectives of the distributed forward and backward.
Counts run(const Program& p, const ts::DeviceMesh& mesh) {
  std::vector<ts::Tensor> dense_leaves;
  std::vector<ts::DTensor> leaves;
  for (size_t i = 0; i < p.leaves.size(); ++i) {
    int64_t numel = 1;
    for (int64_t s : p.leaves[i].shape) numel *= s;
    const ts::Tensor value =
        ts::from_values(oracle::distinct(numel, static_cast<double>(i + 1)), p.leaves[i].shape, ts::kFloat64);
    dense_leaves.push_back(value.clone().set_requires_grad(true));
    leaves.push_back(ts::distribute_tensor(value, mesh, placed(mesh, p.leaves[i].tp, p.leaves[i].batch))
                         .set_requires_grad(true));
  }
  const ts::Tensor dense_out = p.dense(dense_leaves);
  const ts::Tensor seed =
      ts::from_values(oracle::distinct(dense_out.numel(), 9), dense_out.sizes(), ts::kFloat64);
  dense_out.backward(seed);

  Counts counts;
  const ts::DTensor out = [&] {
    ts::CommCounter forward;
    ts::DTensor result = p.distributed(leaves, mesh);
    counts.forward = by_collective(forward);
    return result;
  }();
  const ts::DTensor dseed = ts::distribute_tensor(seed, mesh, placed(mesh, p.out_tp, true));
  {
    ts::CommCounter backward;
    out.backward(dseed);
    counts.backward = by_collective(backward);
  }
  ts::NoGradGuard off;
  check_close(values_of(out.full_tensor().reconcile()), values_of(dense_out), "output");
  for (size_t i = 0; i < leaves.size(); ++i) {
    REQUIRE(leaves[i].has_grad());
    check_close(values_of(leaves[i].grad().full_tensor().reconcile()), values_of(dense_leaves[i].grad()),
                "gradient of leaf " + std::to_string(i));
  }
  return counts;
}

// Shape ops spelled alike for the two runs.
ts::Tensor view_as(const ts::Tensor& t, const ts::Shape& shape) { return t.view(shape); }
ts::DTensor view_as(const ts::DTensor& t, const ts::Shape& shape) { return ts::view(t, shape); }
ts::Tensor reshape_as(const ts::Tensor& t, const ts::Shape& shape) { return t.reshape(shape); }
ts::DTensor reshape_as(const ts::DTensor& t, const ts::Shape& shape) { return ts::reshape(t, shape); }
ts::Tensor swap(const ts::Tensor& t, int64_t a, int64_t b) { return t.transpose(a, b); }
ts::DTensor swap(const ts::DTensor& t, int64_t a, int64_t b) { return ts::transpose(t, a, b); }

// The programs, written once for both runs.
template <class T>
T gelu_mlp(const T& x, const T& w1, const T& w2) {
  return ts::matmul(ts::gelu(ts::matmul(x, w1)), w2);
}

Program tp_mlp() {
  Program p;
  p.leaves = {{{B, D}, ts::Replicate(), true}, {{D, H}, ts::Shard(1)}, {{H, D}, ts::Shard(0)}};
  p.out_tp = ts::Replicate();
  p.dense = [](const std::vector<ts::Tensor>& l) {
    return ts::matmul(ts::relu(ts::matmul(l[0] * 2, l[1])), l[2]);
  };
  p.distributed = [](const std::vector<ts::DTensor>& l, const ts::DeviceMesh& mesh) {
    const ts::DTensor x = l[0] * 2;  // an activation, not a leaf
    return ts::matmul(ts::relu(ts::matmul(x, l[1])), l[2]).redistribute(placed(mesh, ts::Replicate(), true));
  };
  return p;
}

// Megatron sequence parallelism: all_gather in, column-parallel, activation, row-parallel,
// reduce_scatter out, residual.
Program sp_block() {
  Program p;
  p.leaves = {{{B, S, D}, ts::Shard(1), true}, {{D, H}, ts::Shard(1)}, {{H, D}, ts::Shard(0)}};
  p.out_tp = ts::Shard(1);
  p.dense = [](const std::vector<ts::Tensor>& l) {
    const ts::Tensor x = l[0] * 2;
    return gelu_mlp(x, l[1], l[2]) + x;
  };
  p.distributed = [](const std::vector<ts::DTensor>& l, const ts::DeviceMesh& mesh) {
    const ts::DTensor x = l[0] * 2;
    const ts::DTensor xr = x.redistribute(placed(mesh, ts::Replicate(), true));
    return gelu_mlp(xr, l[1], l[2]).redistribute(placed(mesh, ts::Shard(1), true)) + x;
  };
  return p;
}

// Attention with the heads sharded between a sequence-parallel all_gather and reduce_scatter.
Program sp_attention(int64_t heads) {
  Program p;
  p.leaves = {{{B, S, D}, ts::Shard(1), true},
              {{D, D}, ts::Shard(1)},
              {{D, D}, ts::Shard(1)},
              {{D, D}, ts::Shard(1)},
              {{D, D}, ts::Shard(0)}};
  p.out_tp = ts::Shard(1);
  const int64_t hd = D / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  auto attention = [heads, hd, scale](const auto& xr, const auto& wq, const auto& wk, const auto& wv) {
    auto split_heads = [&](const auto& t) { return swap(view_as(t, {B, S, heads, hd}), 1, 2); };
    const auto q = split_heads(ts::matmul(xr, wq));
    const auto k = split_heads(ts::matmul(xr, wk));
    const auto v = split_heads(ts::matmul(xr, wv));
    const auto probs = ts::softmax(ts::matmul(q, swap(k, -2, -1)) * scale, -1);
    return reshape_as(swap(ts::matmul(probs, v), 1, 2), {B, S, D});
  };
  p.dense = [attention](const std::vector<ts::Tensor>& l) {
    const ts::Tensor x = l[0] * 2;
    return ts::matmul(attention(x, l[1], l[2], l[3]), l[4]) + x;
  };
  p.distributed = [attention](const std::vector<ts::DTensor>& l, const ts::DeviceMesh& mesh) {
    const ts::DTensor x = l[0] * 2;
    const ts::DTensor xr = x.redistribute(placed(mesh, ts::Replicate(), true));
    return ts::matmul(attention(xr, l[1], l[2], l[3]), l[4]).redistribute(placed(mesh, ts::Shard(1), true)) +
           x;
  };
  return p;
}

// A replicated activation read by a column-parallel layer and by a residual add: the Replicate
// gradient from the residual joins the Partial one as terms, with no communication.
Program mlp_residual() {
  Program p = tp_mlp();
  p.dense = [](const std::vector<ts::Tensor>& l) {
    const ts::Tensor x = l[0] * 2;
    return ts::matmul(ts::relu(ts::matmul(x, l[1])), l[2]) + x;
  };
  p.distributed = [](const std::vector<ts::DTensor>& l, const ts::DeviceMesh& mesh) {
    const ts::DTensor x = l[0] * 2;
    return ts::matmul(ts::relu(ts::matmul(x, l[1])), l[2]).redistribute(placed(mesh, ts::Replicate(), true)) +
           x;
  };
  return p;
}

// Two TP MLPs stacked without sequence parallelism (the output of the first all-reduced to
// Replicate feeds the second).
Program stacked_mlps() {
  Program p;
  p.leaves = {{{B, D}, ts::Replicate(), true},
              {{D, H}, ts::Shard(1)},
              {{H, D}, ts::Shard(0)},
              {{D, H}, ts::Shard(1)},
              {{H, D}, ts::Shard(0)}};
  p.out_tp = ts::Replicate();
  p.dense = [](const std::vector<ts::Tensor>& l) {
    const ts::Tensor y = ts::matmul(ts::relu(ts::matmul(l[0] * 2, l[1])), l[2]);
    return ts::matmul(ts::relu(ts::matmul(y, l[3])), l[4]);
  };
  p.distributed = [](const std::vector<ts::DTensor>& l, const ts::DeviceMesh& mesh) {
    const ts::Placements whole = placed(mesh, ts::Replicate(), true);
    const ts::DTensor y = ts::matmul(ts::relu(ts::matmul(l[0] * 2, l[1])), l[2]).redistribute(whole);
    return ts::matmul(ts::relu(ts::matmul(y, l[3])), l[4]).redistribute(whole);
  };
  return p;
}

using Table = std::map<std::string, int64_t>;

void check_counts(const Program& p, const ts::DeviceMesh& mesh, const Table& forward, const Table& backward) {
  const Counts got = run(p, mesh);
  CHECK_MESSAGE(got.forward == forward, "forward: " << text(got.forward));
  CHECK_MESSAGE(got.backward == backward, "backward: " << text(got.backward));
}

std::vector<ts::DeviceMesh> meshes() {
  return {ts::init_device_mesh("cpu", {3}, {"tp"}), ts::init_device_mesh("cpu", {4}, {"tp"}),
          ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"})};
}

}  // namespace

TEST_CASE(
    "TP MLP: one all_reduce forward, none backward (the activation's gradient stays Partial into its leaf)") {
  for (const ts::DeviceMesh& mesh : meshes()) {
    CAPTURE(mesh.to_string());
    check_counts(tp_mlp(), mesh, {{"all_reduce", 1}}, {});
  }
}

TEST_CASE("sequence-parallel block: one all_gather and one reduce_scatter each way, no all_reduce") {
  for (const ts::DeviceMesh& mesh : meshes()) {
    CAPTURE(mesh.to_string());
    check_counts(sp_block(), mesh, {{"all_gather", 1}, {"reduce_scatter", 1}},
                 {{"all_gather", 1}, {"reduce_scatter", 1}});
  }
}

TEST_CASE("sequence-parallel attention with sharded heads: one all_gather and one reduce_scatter each way") {
  for (const ts::DeviceMesh& mesh : meshes()) {
    CAPTURE(mesh.to_string());
    const int64_t heads = mesh.size(mesh.ndim() - 1) == 3 ? 3 : 4;
    check_counts(sp_attention(heads), mesh, {{"all_gather", 1}, {"reduce_scatter", 1}},
                 {{"all_gather", 1}, {"reduce_scatter", 1}});
  }
}

TEST_CASE("a Replicate and a Partial gradient of one activation add as terms: no collective in backward") {
  for (const ts::DeviceMesh& mesh : meshes()) {
    CAPTURE(mesh.to_string());
    check_counts(mlp_residual(), mesh, {{"all_reduce", 1}}, {});
  }
}

TEST_CASE("on a mesh of one rank the programs equal the dense run") {
  const ts::DeviceMesh one = ts::init_device_mesh("cpu", {1}, {"tp"});
  run(tp_mlp(), one);
  run(sp_block(), one);
  run(sp_attention(4), one);
}

TEST_CASE("stacked TP MLPs without sequence parallelism: Megatron's one all_reduce in backward") {
  // PyTorch 2.15 reports all_gather=2 reduce_scatter=1 in backward here: it keeps the gradient
  // Partial through the forward all_reduce, gathers the row-parallel weight and input for the
  // next matmul's backward and reduce_scatters after it (a choice of its cost model). Tessera
  // combines the terms where the forward made the value whole, as Megatron does.
  for (const ts::DeviceMesh& mesh : meshes()) {
    CAPTURE(mesh.to_string());
    check_counts(stacked_mlps(), mesh, {{"all_reduce", 2}}, {{"all_reduce", 1}});
  }
}

// Vocabulary-parallel embedding (a masked lookup, Partial), reduce_scatter to the sequence shard, a
// stand-in for the layers (times 2), all_gather, a column-parallel output projection giving logits
// sharded over the vocabulary, and cross_entropy under LossParallel (three all_reduces of one
// value per token: max, sum of exp, target logit; nothing gathers the vocabulary dim).
TEST_CASE("vocabulary-parallel embedding and loss-parallel cross_entropy: PyTorch's collectives") {
  constexpr int64_t kB = 2, kS = 6, kD = 8, kV = 14;
  for (const int64_t ranks : {2, 3, 4}) {
    CAPTURE(ranks);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {ranks}, {"tp"});
    std::vector<int64_t> token_values, target_values;
    for (int64_t i = 0; i < kB * kS; ++i) {
      token_values.push_back((i * 5 + 3) % kV);
      target_values.push_back((i * 11 + 1) % kV);
    }
    const ts::Tensor tokens = ts::from_values(token_values, {kB, kS}, ts::kInt64);
    const ts::Tensor targets = ts::from_values(target_values, {kB * kS}, ts::kInt64);
    const ts::Tensor emb = ts::from_values(oracle::distinct(kV * kD, 1), {kV, kD}, ts::kFloat64);
    const ts::Tensor out = ts::from_values(oracle::distinct(kD * kV, 2), {kD, kV}, ts::kFloat64);

    // Dense oracle.
    const ts::Tensor demb = emb.clone().set_requires_grad(true);
    const ts::Tensor dout = out.clone().set_requires_grad(true);
    const ts::Tensor dense_logits = ts::matmul(ts::embedding(tokens, demb) * 2, dout).view({kB * kS, kV});
    const ts::Tensor dense_loss = ts::cross_entropy(dense_logits, targets);
    dense_loss.backward();

    ts::DTensor wemb = ts::distribute_tensor(emb, mesh, {ts::Shard(0)}).set_requires_grad(true);
    ts::DTensor wout = ts::distribute_tensor(out, mesh, {ts::Shard(1)}).set_requires_grad(true);
    const ts::DTensor dtokens = ts::distribute_tensor(tokens, mesh, {ts::Replicate()});
    const ts::DTensor dtargets = ts::distribute_tensor(targets, mesh, {ts::Replicate()});
    std::optional<ts::DTensor> loss;
    ts::CommCounter forward;
    {
      const ts::DTensor h = ts::embedding(dtokens, wemb).redistribute({ts::Shard(1)});
      const ts::DTensor hr = (h * 2).redistribute({ts::Replicate()});
      const ts::DTensor logits = ts::view(ts::matmul(hr, wout), {kB * kS, kV});
      CHECK(logits.placements() == ts::Placements{ts::Shard(1)});
      ts::LossParallel parallel;
      loss = ts::cross_entropy(logits, dtargets);
    }
    const Table forward_expected = {{"all_gather", 1}, {"all_reduce", 3}, {"reduce_scatter", 1}};
    CHECK_MESSAGE(by_collective(forward) == forward_expected, text(by_collective(forward)));
    ts::CommCounter backward;
    {
      ts::LossParallel parallel;
      loss->backward();
    }
    const Table backward_expected = {{"all_gather", 1}, {"reduce_scatter", 1}};
    CHECK_MESSAGE(by_collective(backward) == backward_expected, text(by_collective(backward)));
    ts::NoGradGuard off;
    check_close(values_of(loss->full_tensor().reconcile()), values_of(dense_loss), "loss");
    check_close(values_of(wemb.grad().full_tensor().reconcile()), values_of(demb.grad()),
                "embedding gradient");
    check_close(values_of(wout.grad().full_tensor().reconcile()), values_of(dout.grad()), "output gradient");
  }
}

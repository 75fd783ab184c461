// DTensors inside ts::spawn: each rank's DTensors hold its own shard alone, and the same program run
// in a LocalMode of the same ranks (every rank's shard in one local tensor) gives every rank the
// same bits. The LocalMode run is the reference (its collectives and ops are tested on their own);
// a few results are also checked against dense plain math.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

#include "../same_bits.hpp"

namespace ts = tessera;

namespace {

ts::Tensor distinct_tensor(const ts::Shape& shape, double salt) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    values[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + salt) * 0.9);
  return ts::from_values(values, shape);
}

// What one run produced: result name -> rank -> that rank's local values.
using Results = std::map<std::string, std::map<int, std::vector<float>>>;

// Notes every shard of `t`'s local part under `name` (a LocalMode run holds every rank's, a rank's
// program its own).
void note(Results& results, const std::string& name, const ts::Tensor& local) {
  const ts::NoGradGuard off;
  for (const auto& [rank, shard] : local.shards())
    results[name][rank] = shard.contiguous().to(ts::kFloat32).to_vector<float>();
}
void note(Results& results, const std::string& name, const ts::DTensor& t) {
  note(results, name, t.to_local());
}

// The program: uneven shards (7 rows, 5 columns over 2, 3 or 4 ranks), matmuls with Partial
// results, every kind of redistribution, a sum to Partial and its reduction, and a backward whose
// parameter gradient is pending (Partial) until redistributed. `plain` makes the inputs plain
// tensors in either mode.
void program(const ts::DeviceMesh& mesh, Results& out,
             const std::function<ts::Tensor(ts::Shape, double)>& plain) {
  const ts::Tensor x = plain({7, 5}, 0.3);
  const ts::Tensor w = plain({5, 6}, 1.1);
  const ts::Placements rows =
      mesh.ndim() == 1 ? ts::Placements{ts::Shard(0)} : ts::Placements{ts::Shard(0), ts::Shard(1)};
  const ts::Placements replicated(static_cast<size_t>(mesh.ndim()), ts::Replicate());
  const ts::Placements partial(static_cast<size_t>(mesh.ndim()), ts::Partial());

  const ts::DTensor a = ts::distribute_tensor(x, mesh, rows);
  note(out, "a", a);
  ts::DTensor weight = ts::distribute_tensor(w, mesh, replicated);
  weight.requires_grad_();
  const ts::DTensor h = ts::gelu(ts::matmul(a, weight));
  note(out, "h", h);
  note(out, "h replicated (all_gather)", h.redistribute(replicated));
  ts::Placements columns(static_cast<size_t>(mesh.ndim()), ts::Replicate());
  columns[0] = ts::Shard(1);
  note(out, "h by columns (all_to_all)", h.redistribute(columns));
  const ts::DTensor total = ts::sum(h, {0});  // rows are sharded: a Partial sum
  note(out, "column sums (partial)", total);
  note(out, "column sums (all_reduce)", total.redistribute(replicated));
  // Partial -> Shard: a reduce_scatter; the 6 columns are uneven over 4 ranks.
  ts::Placements scattered(static_cast<size_t>(mesh.ndim()), ts::Replicate());
  scattered[0] = ts::Shard(0);
  note(out, "column sums (reduce_scatter)",
       ts::from_local(total.to_local(), mesh, partial, ts::Shape{6}).redistribute(scattered));
  note(out, "max over rows (all-gathered first)", ts::max(h, {0}).redistribute(replicated));

  const ts::DTensor loss = ts::mean(ts::mul(h, h));
  note(out, "loss", loss.redistribute(replicated));
  loss.backward();
  note(out, "weight grad", weight.grad().redistribute(replicated));
  note(out, "full tensor", h.full_tensor());
}

Results in_local_mode(int ranks, const std::function<ts::DeviceMesh()>& make_mesh) {
  Results results;
  ts::LocalMode mode(ranks);
  program(make_mesh(), results, [](const ts::Shape& shape, double salt) {
    const ts::DisabledLocalMode plain;
    return distinct_tensor(shape, salt);
  });
  return results;
}

Results in_spawn(int ranks, const std::function<ts::DeviceMesh()>& make_mesh) {
  Results results;
  ts::spawn(ranks, [&](int rank) {
    Results mine;
    program(make_mesh(), mine, distinct_tensor);
    for (auto& [name_bound, by_rank] : mine) {
      const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
      // A rank's program holds its own shard alone.
      CHECK_MESSAGE(by_rank.size() == 1, name);
      CHECK_MESSAGE(by_rank.count(rank) == 1, name);
      for (auto& [r, values] : by_rank) results[name][r] = std::move(values);
    }
  });
  return results;
}

void require_same(const Results& local_mode, const Results& spawned, int ranks) {
  REQUIRE(local_mode.size() == spawned.size());
  for (const auto& [name_bound, by_rank] : local_mode) {
    const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
    CAPTURE(name);
    REQUIRE(spawned.count(name) == 1);
    REQUIRE(by_rank.size() == static_cast<size_t>(ranks));
    REQUIRE(spawned.at(name).size() == static_cast<size_t>(ranks));
    for (const auto& [rank_bound, values] : by_rank) {
      const auto& rank = rank_bound;  // named again: clang 14 cannot capture a structured binding
      CAPTURE(rank);
      CHECK(test::same_bits(values, spawned.at(name).at(rank)));
    }
  }
}

}  // namespace

TEST_CASE("spawn: DTensor programs give every rank the bits LocalMode gives it, meshes {4}, (2, 2), (3, 1)") {
  struct Case {
    int ranks;
    std::vector<int64_t> shape;
  };
  for (const Case& c : {Case{4, {4}}, Case{4, {2, 2}}, Case{3, {3, 1}}}) {
    CAPTURE(c.ranks);
    CAPTURE(c.shape.size());
    const auto make_mesh = [&] {
      return c.shape.size() == 1 ? ts::init_device_mesh("cpu", c.shape)
                                 : ts::init_device_mesh("cpu", c.shape, {"dp", "tp"});
    };
    const Results reference = in_local_mode(c.ranks, make_mesh);
    const Results spawned = in_spawn(c.ranks, make_mesh);
    require_same(reference, spawned, c.ranks);

    // Independently: the replicated h is gelu(x @ w) of the plain tensors, on every rank.
    const ts::Tensor dense = ts::gelu(ts::matmul(distinct_tensor({7, 5}, 0.3), distinct_tensor({5, 6}, 1.1)));
    const std::vector<float> want = dense.to_vector<float>();
    for (int r = 0; r < c.ranks; ++r) {
      const std::vector<float>& got = spawned.at("h replicated (all_gather)").at(r);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i)
        CHECK(std::abs(got[i] - want[i]) <= 1e-5f * (1.f + std::abs(want[i])));
    }
    // A shard is the rank's chunk as torch.chunk cuts it: 7 rows over the first mesh dim, 5 columns
    // over the second.
    const auto chunk = [](int64_t length, int64_t pieces, int64_t index) {
      const int64_t size = (length + pieces - 1) / pieces;
      return std::max<int64_t>(0, std::min(size, length - index * size));
    };
    const int64_t inner = c.shape.size() == 1 ? 1 : c.shape[1];
    for (int r = 0; r < c.ranks; ++r) {
      const int64_t cols = c.shape.size() == 1 ? 5 : chunk(5, inner, r % inner);
      CHECK(static_cast<int64_t>(spawned.at("a").at(r).size()) == chunk(7, c.shape[0], r / inner) * cols);
    }
  }
}

TEST_CASE("spawn: a rank's DTensor from a local tensor over other ranks is refused, naming the ranks") {
  CHECK_THROWS_WITH_AS(ts::spawn(2,
                                 [](int) {
                                   const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
                                   const ts::Tensor both = ts::local_tensor(
                                       ts::RankMap<ts::Tensor>({{0, ts::ones({2})}, {1, ts::ones({2})}}));
                                   (void)ts::from_local(both, mesh, {ts::Shard(0)});
                                 }),
                       doctest::Contains("held by rank 0's program"), ts::RankError);
}

TEST_CASE(
    "spawn: a rank waiting inside LossParallel or ImplicitReplication does not lend it to the next rank") {
  std::vector<int> loss_parallel_seen(2, -1), implicit_seen(2, -1), kept(2, -1);
  ts::spawn(2, [&](int rank) {
    const size_t me = static_cast<size_t>(rank);
    ts::Tensor t = ts::ones({1});
    if (rank == 0) {
      const ts::LossParallel on;
      const ts::ImplicitReplication also_on;
      ts::dist::all_reduce(t);  // waits for rank 1, which runs meanwhile
      kept[me] = ts::loss_parallel() && ts::implicit_replication() ? 1 : 0;
    } else {
      loss_parallel_seen[me] = ts::loss_parallel() ? 1 : 0;
      implicit_seen[me] = ts::implicit_replication() ? 1 : 0;
      ts::dist::all_reduce(t);
    }
  });
  CHECK(loss_parallel_seen[1] == 0);
  CHECK(implicit_seen[1] == 0);
  CHECK(kept[0] == 1);  // and rank 0 finds its own scopes on again after its wait
  CHECK_FALSE(ts::loss_parallel());
}

TEST_CASE("spawn: a DTensor on a mesh that does not hold the rank is refused, naming the rank and the mesh") {
  CHECK_THROWS_WITH_AS(ts::spawn(3,
                                 [](int rank) {
                                   if (rank != 0) return;
                                   const ts::DeviceMesh others("cpu", {2}, {}, {{1, 2}});
                                   (void)ts::distribute_tensor(ts::ones({4}), others, {ts::Shard(0)});
                                 }),
                       doctest::Contains("the mesh DeviceMesh('cpu', [1, 2]) does not hold rank 0"),
                       ts::RankError);
}

namespace {

ts::models::TransformerArgs tiny_llama() {
  ts::models::TransformerArgs args;
  args.dim = 16;
  args.n_layers = 2;
  args.n_heads = 4;
  args.n_kv_heads = 2;
  args.vocab_size = 32;
  args.ffn_hidden = 24;
  args.max_seq_len = 8;
  return args;
}

// One FSDP + TP + SP + loss-parallel step of a small Transformer on a (dp=2, tp=2) mesh: the loss
// and every parameter's gradient, as the rank's local values.
void fsdp_tp_step(Results& out, const std::function<ts::Tensor(const std::vector<int64_t>&)>& tokens_of,
                  const std::function<ts::models::Transformer()>& make_model) {
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2, 2}, {"dp", "tp"});
  ts::models::Transformer model = make_model();
  ts::parallelize_module(model, mesh["tp"], ts::transformer_tp_plan(/*loss_parallel=*/true));
  for (const auto& layer : *model->layers) ts::fully_shard(*layer, {.mesh = mesh["dp"]});
  ts::fully_shard(model, {.mesh = mesh["dp"]});
  std::vector<int64_t> tokens(4 * 9);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>((i * 7 + 3) % 32);
  const ts::Tensor batch = tokens_of(tokens);
  const ts::Tensor inputs =
      ts::distribute_tensor(batch.narrow(1, 0, 8).contiguous(), mesh, {ts::Shard(0), ts::Replicate()})
          .to_local();
  const ts::Tensor targets =
      ts::distribute_tensor(batch.narrow(1, 1, 8).contiguous(), mesh, {ts::Shard(0), ts::Replicate()})
          .to_local();
  const ts::LossParallel loss_parallel;
  const ts::DTensor logits = model(inputs).dtensor();
  const ts::DTensor loss = ts::cross_entropy(
      logits.view({-1, 32}), ts::from_local(targets, mesh["tp"], {ts::Replicate()}).view({-1}));
  loss.backward();
  note(out, "loss", loss);
  for (const auto& [name, p] : model->named_parameters()) note(out, name, p.dtensor_grad().to_local());
}

}  // namespace

TEST_CASE("spawn: parallelize_module and fully_shard in rank programs give every rank LocalMode's bits") {
  Results reference;
  {
    ts::LocalMode mode(4);
    fsdp_tp_step(
        reference,
        [](const std::vector<int64_t>& tokens) {
          const ts::DisabledLocalMode plain;
          return ts::from_values(tokens, {4, 9});
        },
        [] {
          const ts::DisabledLocalMode plain;
          ts::manual_seed(3);
          return ts::models::Transformer(tiny_llama());
        });
  }
  Results spawned;
  ts::spawn(4,
            [&](int rank) {
              Results mine;
              fsdp_tp_step(
                  mine,
                  [](const std::vector<int64_t>& tokens) {
                    return ts::from_values(tokens, {4, 9});
                  },
                  [] {
                    ts::manual_seed(3);
                    return ts::models::Transformer(tiny_llama());
                  });
              for (auto& [name_bound, by_rank] : mine) {
                const auto& name = name_bound;  // named again: clang 14 cannot capture a structured binding
                CHECK_MESSAGE(by_rank.size() == 1, name);
                CHECK_MESSAGE(by_rank.count(rank) == 1, name);
                for (auto& [r, values] : by_rank) spawned[name][r] = std::move(values);
              }
            },
            {.stack_bytes = 1 << 20});
  REQUIRE(reference.size() == 1 + 2 * 9 + 3);  // the loss and every parameter's gradient
  require_same(reference, spawned, 4);
}

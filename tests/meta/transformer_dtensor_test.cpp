// The transformer ops on DTensors over a meta mesh: vocabulary-parallel embedding, heads-sharded
// attention, loss-parallel cross_entropy (forward and backward), dropout and rand give the
// placements, shapes and per-rank shard shapes the same program gives on cpu, with the same
// collectives counted.
#include "meta_test_support.hpp"

using namespace meta_test;

namespace {

struct Run {
  std::vector<ts::DTensor> tensors;
  std::vector<ts::CommCounter::Entry> counted;
};

std::vector<ts::DTensor> program(const ts::DeviceMesh& mesh, const std::string& b) {
  const ts::Tensor tokens = ts::tensor({{1L, 6L, 0L}, {3L, 3L, 5L}}, ts::TensorOptions().backend(b));
  ts::DTensor wte =
      ts::distribute_tensor(ts::randn({7, 4}, on(b)), mesh, {ts::Shard(0)}).set_requires_grad(true);
  const ts::DTensor h = ts::embedding(tokens, wte);
  const ts::Placements heads = {ts::Shard(1)};
  const ts::DTensor q = ts::distribute_tensor(ts::randn({2, 3, 4, 2}, on(b)), mesh, heads);
  const ts::DTensor attn = ts::scaled_dot_product_attention(q, q, q, {}, 0.0, true);
  ts::DTensor logits =
      ts::distribute_tensor(ts::randn({6, 7}, on(b)), mesh, {ts::Shard(1)}).set_requires_grad(true);
  const ts::DTensor target = ts::distribute_tensor(tokens.view({-1}), mesh, {ts::Replicate()});
  ts::DTensor loss = [&] {
    ts::LossParallel scope;
    return ts::cross_entropy(logits, target, {.label_smoothing = 0.1});
  }();
  loss.backward();
  ts::Generator g(3);
  return {h,
          attn,
          loss,
          logits.grad(),
          ts::dropout(attn, 0.2, true, g),
          ts::rand({5, 3}, mesh, {ts::Shard(0)}, g)};
}

Run run(const std::string& backend) {
  ts::LocalMode mode(3);
  const ts::CommCounter counter;
  Run result;
  result.tensors = program(ts::init_device_mesh(backend, {3}), backend);
  result.counted = counter.entries();
  return result;
}

}  // namespace

TEST_CASE("transformer ops on a meta mesh: the cpu program's layouts and collectives") {
  const Run cpu = run("cpu");
  const Run meta = run("meta");
  REQUIRE(meta.tensors.size() == cpu.tensors.size());
  for (size_t i = 0; i < cpu.tensors.size(); ++i) {
    CAPTURE(i);
    CHECK(meta.tensors[i].placements() == cpu.tensors[i].placements());
    CHECK(meta.tensors[i].shape() == cpu.tensors[i].shape());
    CHECK(meta.tensors[i].device_mesh().device_type() == "meta");
    check_same_layout(cpu.tensors[i].to_local(), meta.tensors[i].to_local());
  }
  check_same_entries(cpu.counted, meta.counted);
}

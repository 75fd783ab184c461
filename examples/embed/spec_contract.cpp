// The public API (tensors, local tensors, DTensors, autograd, PyTorch's spellings), compiled
// against the *installed* package: a user program written to the contract builds with
// find_package(Tessera) and finds every plugin with no environment variable. Exits non-zero if a result is
// wrong.
#include <cstdio>
#include <sstream>

#include <tessera/tessera.hpp>
namespace ts = tessera;

int main() {
  try {
    ts::Tensor lt = ts::local_tensor(
        {{0, ts::tensor({{1.f, 2.f}, {3.f, 4.f}})}, {1, ts::tensor({{5.f, 6.f}, {7.f, 8.f}})}});
    bool ok = lt.is_local() && lt.ranks().size() == 2 &&
              ts::equal((lt * 2).shard(0), ts::tensor({{2.f, 4.f}, {6.f, 8.f}}));
    ts::LocalInt a({{0, 10}, {1, 20}, {2, 30}});
    ok = ok && (a + a).values().at(2) == 60 && ts::sym_max(a, a).values() == a.values();
    ts::SymInt n = lt.shape()[0];
    ok = ok && !n.is_local() && n.as_int() == 2;

    ts::dist::all_reduce(lt, ts::ReduceOp::SUM);
    ts::dist::broadcast(lt, /*src=*/0);
    ok = ok && ts::equal(lt.reconcile(), ts::tensor({{6.f, 8.f}, {10.f, 12.f}}));

    ts::LocalMode mode(8);
    ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4, 2}, {"dp", "tp"});
    ts::Tensor x, w;
    {
      auto off = mode.disable();
      x = ts::arange(128).reshape({16, 8}).to(ts::kFloat32) / 100;
      w = ts::ones({8, 12});
    }
    ts::DTensor dx = ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()});
    ts::DTensor dw = ts::distribute_tensor(w, mesh, {ts::Replicate(), ts::Shard(1)});
    ts::DTensor dy = ts::relu(ts::matmul(dx, dw));
    ts::Tensor y = dy.full_tensor().reconcile();
    // Modules, parallel styles, FSDP, schedulers and clipping.
    ts::nn::Sequential mlp(nullptr), sharded(nullptr);
    ts::Tensor expected;
    {
      auto plain = mode.disable();
      ts::manual_seed(5);
      mlp =
          ts::nn::Sequential(ts::nn::Linear(8, 16), ts::nn::Linear(ts::nn::LinearOptions(16, 8).bias(false)));
      sharded = ts::nn::Sequential(ts::nn::Linear(8, 4));
      const ts::nn::StateDict state = mlp->state_dict();
      expected = ts::matmul(ts::matmul(x, state.at("0.weight").tensor().t()) + state.at("0.bias").tensor(),
                            state.at("1.weight").tensor().t());
    }
    ok = ok && mlp->named_parameters().size() == 3 && mlp->named_parameters()[2].first == "1.weight";
    ts::parallelize_module(mlp, mesh["tp"], {{"0", ts::ColwiseParallel{}}, {"1", ts::RowwiseParallel{}}});
    ts::nn::Value out = mlp(x);
    ok = ok && mlp->get_parameter("0.weight").dtensor().placements() == ts::Placements{ts::Shard(0)};
    ts::fully_shard(sharded, {.mesh = mesh["dp"],
                              .reshard_after_forward = true,
                              .mp_policy = {.param_dtype = ts::kBFloat16, .reduce_dtype = ts::kFloat32}});
    ts::optim::SGD sgd(sharded->parameters(), {.lr = 0.1});
    ts::optim::lr_scheduler::CosineAnnealingLR cosine(sgd, /*T_max=*/10);
    ts::sum(sharded(ts::distribute_tensor(x, mesh, {ts::Shard(0), ts::Replicate()}).to_local()).tensor())
        .backward();
    const double norm = ts::nn::utils::clip_grad_norm_(sharded->parameters(), 1.0);
    sgd.step();
    cosine.step();
    ok = ok && norm > 0 &&
         sharded->parameters()[0].dtensor_grad().placements() == ts::Placements{ts::Shard(0)};
    auto off = mode.disable();
    ok = ok && ts::allclose(y, ts::relu(ts::matmul(x, w)), /*rtol=*/1e-5, /*atol=*/1e-6);
    ok = ok && ts::allclose(out.tensor().reconcile(), expected, /*rtol=*/1e-5, /*atol=*/1e-6);
    ok = ok && dy.placements()[0].is_shard() && mesh["tp"].size() == 2 && mesh.size() == 8;

    // Autograd on tensors and DTensors, optimizers, differentiable collectives.
    ts::Tensor w12 = ts::randn({8, 4}).set_requires_grad(true);
    ts::Tensor loss = ts::sum(ts::relu(ts::matmul(x, w12)));
    loss.backward();
    ok = ok && w12.grad().sizes() == ts::Shape{8, 4} && loss.grad_fn_name() == "SumBackward" && w12.is_leaf();
    {
      ts::NoGradGuard no_grad;
      ok = ok && !ts::matmul(x, w12).requires_grad();
    }
    ts::DTensor dw12 = ts::distribute_tensor(ts::ones({8, 4}), mesh, {ts::Replicate(), ts::Shard(1)})
                           .set_requires_grad(true);
    ts::sum(ts::matmul(dx, dw12)).backward();
    ok = ok && dw12.grad().placements()[1].is_shard();
    ok = ok && ts::allclose(dw12.grad().full_tensor().reconcile(), ts::matmul(x.t(), ts::ones({16, 4})), 1e-5,
                            1e-6);
    ts::optim::AdamW opt({dw12}, {.lr = 1e-3, .weight_decay = 0.01});
    opt.step();
    opt.zero_grad();
    ts::Tensor lt12 =
        ts::local_tensor({{0, ts::ones({2})}, {1, ts::full({2}, 2.0f)}}).set_requires_grad(true);
    ts::Tensor summed = ts::dist::functional::all_reduce(lt12, ts::ReduceOp::SUM);
    ts::sum(summed).backward();
    ok = ok && ts::equal(lt12.grad().shard(1), ts::full({2}, 2.0f));  // both ranks' sums depend on it

    // PyTorch's spellings.
    ok = ok && mesh.get_local_rank("tp").local().at(3) == 1 && mesh.get_group("dp") == mesh.group("dp") &&
         mesh.mesh_dim_names() == mesh.dim_names() && mesh.get_coordinate()[0].local().at(5) == 2 &&
         mesh.size(1) == 2 && mesh.ndim() == 2 && mesh.device_type() == "cpu";
    ts::DTensor d13 = ts::DTensor::from_local(ts::ones({4, 8}), mesh, {ts::Shard(0), ts::Replicate()});
    ok = ok && d13.size() == ts::Shape{16, 8} && d13.numel() == 128 && d13.dim() == 2 && d13.size(0) == 16;
    ok = ok && ts::equal(d13.sum().full_tensor().reconcile(), ts::tensor(128.f));
    ok = ok && d13.t().size() == ts::Shape{8, 16} && d13.view({16, 2, 4}).dim() == 3 &&
         d13.reshape({128}).numel() == 128;
    ok = ok && d13.mean({1}).size() == ts::Shape{16} && d13.max().dtype() == ts::kFloat32 &&
         d13.min({0}, true).dim() == 2;
    ok = ok && d13.to(ts::kFloat64).dtype() == ts::kFloat64 && d13.device_mesh() == mesh;
    ok = ok && ts::equal((2.f * d13 - d13).full_tensor().reconcile(), ts::ones({16, 8})) &&
         ts::equal((1.f - d13).full_tensor().reconcile(), ts::zeros({16, 8}));
    ok = ok && ts::zeros_like(d13).placements() == d13.placements() &&
         ts::cat({d13, d13}, 1).size() == ts::Shape{16, 16};
    ok = ok && ts::parse_placements("Shard(dim=0), Replicate()") == d13.placements() &&
         ts::Shard(0).repr() == "Shard(dim=0)" && ts::Placement::parse("Partial(sum)").is_partial();
    std::ostringstream printed;
    printed << d13.placements() << ' ' << mesh;
    ok = ok && printed.str() ==
                   "(Shard(dim=0), Replicate()) DeviceMesh('cpu', [[0, 1], [2, 3], [4, 5], [6, 7]], "
                   "mesh_dim_names=('dp', 'tp'))";
    std::printf("spec contract: %s\n", ok ? "ok" : "WRONG RESULT");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("spec contract: error: %s\n", e.what());
    return 1;
  }
}

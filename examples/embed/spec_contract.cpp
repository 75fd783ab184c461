// SPEC.md sections 10 and 12's API, compiled against the *installed* package: a user program written to
// the contract builds with find_package(Tessera) and finds every plugin with no environment
// variable. Exits non-zero if a result is wrong.
#include <cstdio>

#include <tessera/tessera.hpp>
namespace ts = tessera;

int main() {
  try {
    ts::Tensor lt = ts::local_tensor({{0, ts::tensor({{1.f, 2.f}, {3.f, 4.f}})},
                                      {1, ts::tensor({{5.f, 6.f}, {7.f, 8.f}})}});
    bool ok = lt.is_local() && lt.ranks().size() == 2 && ts::equal((lt * 2).shard(0), ts::tensor({{2.f, 4.f}, {6.f, 8.f}}));
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
    auto off = mode.disable();
    ok = ok && ts::allclose(y, ts::relu(ts::matmul(x, w)), /*rtol=*/1e-5, /*atol=*/1e-6);
    ok = ok && dy.placements()[0].is_shard() && mesh["tp"].size() == 2 && mesh.size() == 8;

    // SPEC section 12: autograd on tensors and DTensors, optimizers, differentiable collectives.
    ts::Tensor w12 = ts::randn({8, 4}).set_requires_grad(true);
    ts::Tensor loss = ts::sum(ts::relu(ts::matmul(x, w12)));
    loss.backward();
    ok = ok && w12.grad().sizes() == ts::Shape{8, 4} && loss.grad_fn_name() == "SumBackward" && w12.is_leaf();
    {
      ts::NoGradGuard no_grad;
      ok = ok && !ts::matmul(x, w12).requires_grad();
    }
    ts::DTensor dw12 = ts::distribute_tensor(ts::ones({8, 4}), mesh, {ts::Replicate(), ts::Shard(1)}).set_requires_grad(true);
    ts::sum(ts::matmul(dx, dw12)).backward();
    ok = ok && dw12.grad().placements()[1].is_shard();
    ok = ok && ts::allclose(dw12.grad().full_tensor().reconcile(), ts::matmul(x.t(), ts::ones({16, 4})), 1e-5, 1e-6);
    ts::optim::AdamW opt({dw12}, {.lr = 1e-3, .weight_decay = 0.01});
    opt.step();
    opt.zero_grad();
    ts::Tensor lt12 = ts::local_tensor({{0, ts::ones({2})}, {1, ts::full({2}, 2.0f)}}).set_requires_grad(true);
    ts::Tensor summed = ts::dist::functional::all_reduce(lt12, ts::ReduceOp::SUM);
    ts::sum(summed).backward();
    ok = ok && ts::equal(lt12.grad().shard(1), ts::full({2}, 2.0f));  // both ranks' sums depend on it
    std::printf("spec contract: %s\n", ok ? "ok" : "WRONG RESULT");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("spec contract: error: %s\n", e.what());
    return 1;
  }
}

// SPEC.md section 10's API, compiled against the *installed* package: a user program written to
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
    std::printf("spec contract: %s\n", ok ? "ok" : "WRONG RESULT");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("spec contract: error: %s\n", e.what());
    return 1;
  }
}

// A first Tessera program: dense tensors on the CPU backend plugin, then the same arithmetic on a
// local tensor (one shard per simulated rank) and an all_reduce. The full demo is `tessera tour`.
#include <iostream>

#include <tessera/tessera.hpp>

namespace ts = tessera;

int main() {
  try {
    ts::Tensor x = ts::arange(6).to(ts::kFloat32).reshape({2, 3});
    ts::Tensor w = ts::tensor({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}});
    ts::Tensor b = ts::tensor({10.f, 20.f});
    ts::Tensor y = ts::matmul(x, w) + b;  // [2,2] + [2]: b is broadcast over the rows
    std::cout << "y = x @ w + b =\n" << y << "\n\n";

    // Three ranks in one process: each holds its own rows; ops run once per rank.
    ts::Tensor rows = ts::local_tensor({{0, x * 1}, {1, x * 2}, {2, x * 3}});
    ts::Tensor local_y = ts::matmul(rows, w) + b;
    std::cout << "per rank, x_r @ w + b =\n" << local_y << "\n\n";

    ts::dist::all_reduce(local_y, ts::ReduceOp::SUM);
    std::cout << "after all_reduce(SUM), every rank holds\n" << local_y.reconcile() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "quickstart: " << e.what() << "\n";
    return 1;
  }
}

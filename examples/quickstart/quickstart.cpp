// The main demo: load the CPU backend plugin, run a matmul and a broadcast add, print the tensors.
#include <iostream>

#include <tessera/tessera.hpp>

namespace ts = tessera;

int main() {
  try {
    ts::Tensor x = ts::arange(6).to(ts::kFloat32).reshape({2, 3});
    ts::Tensor w = ts::tensor({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}});
    ts::Tensor b = ts::tensor({10.f, 20.f});

    ts::Tensor y = ts::matmul(x, w) + b;  // [2,2] + [2]: b is broadcast over the rows

    std::cout << "backend: " << ts::default_backend() << " (plugins loaded:";
    for (const ts::PluginInfo& plugin : ts::loaded_plugins())
      std::cout << ' ' << plugin.name << ' ' << plugin.version << " from " << plugin.file.string();
    std::cout << ")\n\n";
    std::cout << "x =\n" << x << "\n\nw =\n" << w << "\n\nb =\n" << b << "\n\n";
    std::cout << "y = x @ w + b =\n" << y << "\n\n";
    std::cout << "softmax(y / 10, dim=1) =\n" << ts::softmax(y / 10, 1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "quickstart: " << e.what() << "\n";
    return 1;
  }
}

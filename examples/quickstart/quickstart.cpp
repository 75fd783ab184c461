// The main demo: dense tensors on the CPU backend plugin, then the tutorial's scenarios with
// local tensors, each printed with what it computed and what it should be.
#include <iostream>

#include <tessera/tessera.hpp>

#include "scenarios.hpp"

namespace ts = tessera;

namespace {

void dense_tensors() {
  ts::Tensor x = ts::arange(6).to(ts::kFloat32).reshape({2, 3});
  ts::Tensor w = ts::tensor({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}});
  ts::Tensor b = ts::tensor({10.f, 20.f});
  ts::Tensor y = ts::matmul(x, w) + b;  // [2,2] + [2]: b is broadcast over the rows

  std::cout << "== dense tensors on backend '" << ts::default_backend() << "' (plugins:";
  for (const ts::PluginInfo& plugin : ts::loaded_plugins()) std::cout << ' ' << plugin.name << ' ' << plugin.version;
  std::cout << ")\n\n";
  std::cout << "x =\n" << x << "\n\nw =\n" << w << "\n\nb =\n" << b << "\n\n";
  std::cout << "y = x @ w + b =\n" << y << "\n\n";
  std::cout << "softmax(y / 10, dim=1) =\n" << ts::softmax(y / 10, 1) << "\n\n";
}

// Runs every tutorial scenario; returns how many did not match.
int tutorial_scenarios() {
  std::cout << "== tutorial scenarios (local tensors: every rank in one process)\n";
  int failures = 0;
  std::string group;
  for (const tutorial::Scenario& scenario : tutorial::all_scenarios()) {
    if (scenario.group != group) std::cout << "\n-- scenario " << (group = scenario.group) << "\n";
    const tutorial::Check result = scenario.run();
    std::cout << (result.ok ? "[ok]   " : "[FAIL] ") << scenario.name << "\n";
    std::cout << "       actual:   " << result.actual << "\n";
    if (!result.ok) std::cout << "       expected: " << result.expected << "\n";
    failures += result.ok ? 0 : 1;
  }
  // One local tensor printed whole, to show what the simulator holds.
  ts::Tensor lt = ts::local_tensor({{0, ts::tensor({{1.f, 2.f}})}, {1, ts::tensor({{3.f, 4.f}, {5.f, 6.f}})}});
  std::cout << "\nA local tensor with uneven shards (shape " << lt.shape().to_string() << "):\n" << lt * 10 << "\n";
  return failures;
}

}  // namespace

int main() {
  try {
    dense_tensors();
    const int failures = tutorial_scenarios();
    std::cout << "\n" << (failures == 0 ? "all scenarios match" : std::to_string(failures) + " scenario(s) differ")
              << "\n";
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "quickstart: " << e.what() << "\n";
    return 1;
  }
}

// Runs the five training scenarios (training.hpp) and prints how close each is to the dense
// single-rank run of the same math:   build/bin/training
#include <cmath>
#include <cstdio>
#include <exception>

#include "training.hpp"

namespace {

std::string difference_text(const training::Difference& d) {
  if (d.bitwise) return "0 (bitwise)";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", d.max_abs);
  return text;
}

}  // namespace

int main() {
  try {
    const std::vector<training::Comparison> scenarios = training::all_scenarios();
    std::printf("Training on several ranks against a dense single-rank run of the same math\n");
    std::printf(
        "(float32; a match is every gradient, parameter and loss within rtol %g, atol %g, at every step)\n\n",
        training::kRtol, training::kAtol);
    std::printf("   %-17s %5s  %-18s %-18s %-18s %s\n", "scenario", "steps", "grads max|diff|",
                "params max|diff|", "loss max|diff|", "match");
    bool all_match = true;
    for (size_t i = 0; i < scenarios.size(); ++i) {
      const training::Comparison& c = scenarios[i];
      all_match = all_match && c.matches();
      std::printf("%zu. %-17s %5zu  %-18s %-18s %-18s %s\n", i + 1, c.name.c_str(), c.dense.size(),
                  difference_text(c.grads).c_str(), difference_text(c.params).c_str(),
                  difference_text(c.loss).c_str(), c.matches() ? "yes" : "NO");
    }
    for (size_t i = 0; i < scenarios.size(); ++i) {
      const training::Comparison& c = scenarios[i];
      std::printf("\n%zu. %s: %s\n", i + 1, c.name.c_str(), c.setup.c_str());
      std::printf("   optimizer: %s%s\n", training::describe(c.options).c_str(),
                  c.input_grad ? "; gradients checked: dW1, dW2 and dx" : "; gradients checked: dW1, dW2");
      std::printf("   forward:   %s\n", training::describe(c.communication.forward).c_str());
      std::printf("   backward:  %s\n", training::describe(c.communication.backward).c_str());
      std::printf("   step:      %s\n", training::describe(c.communication.step).c_str());
      std::printf("   order:     %s\n", c.reduction_order.c_str());
    }
    const training::Comparison& curve = scenarios.back();
    std::printf("\nLoss curve of %zu. %s:\n", scenarios.size(), curve.name.c_str());
    std::printf("   %4s  %-14s %-14s %s\n", "step", "distributed", "dense", "|diff|");
    for (size_t s = 0; s < curve.dense.size(); ++s)
      std::printf("   %4zu  %-14.9f %-14.9f %.3g\n", s + 1, curve.distributed[s].loss, curve.dense[s].loss,
                  std::abs(curve.distributed[s].loss - curve.dense[s].loss));
    if (!all_match) {
      std::printf("\nsome training scenarios do NOT match the dense run\n");
      return 1;
    }
    std::printf("\nall training scenarios match the dense run\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "training: %s\n", e.what());
    return 1;
  }
  return 0;
}

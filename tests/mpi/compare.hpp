// The MPI checks' harness: run a program in the world init_world() made (several processes) and in
// a simulated world of the same size in this process, then compare every hosted rank bit for bit.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace mpi_check {

namespace ts = tessera;

struct Tally {
  int cases = 0;
  int failures = 0;
  void fail(const std::string& what) {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  }
  // Prints the summary line the ctest entries look for; returns the exit status.
  int report(const char* program, int process) const {
    std::printf("%s: %s %d case(s), %d failure(s) on process %d\n", program, failures == 0 ? "OK" : "FAILED",
                cases, failures, process);
    return failures == 0 ? 0 : 1;
  }
};

inline bool same_bits(const ts::Tensor& a, const ts::Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const auto bits = [](const auto& x, const auto& y) {
    return x.size() == y.size() &&
           (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
  };
  switch (a.dtype()) {
    case ts::DType::Float32:
      return bits(a.to_vector<float>(), b.to_vector<float>());
    case ts::DType::Float64:
      return bits(a.to_vector<double>(), b.to_vector<double>());
    case ts::DType::Int32:
      return bits(a.to_vector<int32_t>(), b.to_vector<int32_t>());
    case ts::DType::Bool:
      return a.to_vector<bool>() == b.to_vector<bool>();
    default:
      return bits(a.to_vector<int64_t>(), b.to_vector<int64_t>());
  }
}

// A program returns local tensors (one shard per hosted rank) to compare.
using Program = std::function<std::vector<ts::Tensor>()>;

inline void compare(Tally& tally, const std::string& name, const ts::World& world, const Program& program) {
  ++tally.cases;
  std::vector<ts::Tensor> distributed, simulated;
  {
    ts::LocalMode mode(world);
    distributed = program();
  }
  {
    ts::LocalMode mode(world.size());
    simulated = program();
  }
  if (distributed.size() != simulated.size()) {
    tally.fail(name + ": the runs returned different numbers of outputs");
    return;
  }
  for (size_t k = 0; k < distributed.size(); ++k)
    for (int r : world.ranks())
      if (!same_bits(distributed[k].shard(r), simulated[k].shard(r)))
        tally.fail(name + ": output " + std::to_string(k) + " on rank " + std::to_string(r) +
                   " differs from the simulated world\n  got      " + distributed[k].shard(r).to_string() +
                   "\n  expected " + simulated[k].shard(r).to_string());
}

}  // namespace mpi_check

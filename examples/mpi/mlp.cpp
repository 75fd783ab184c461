// A DP + TP MLP step on a (dp=2, tp=4) mesh, the same program simulated or across processes:
//
//   ./mpi_mlp                                               simulated world of 8 ranks
//   TESSERA_RANKS_PER_PROCESS=4 mpirun -np 2 ./mpi_mlp      2 processes x 4 ranks (add
//                                 --allow-run-as-root --oversubscribe in a root container)
//
// Both print the same checksum, bit for bit: every collective runs the same schedule in both.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "mlp_step.hpp"

namespace ts = tessera;

int main() {
  try {
    const ts::World world = ts::init_world();
    // One process: simulate all 8 ranks here; several: this process's share of them.
    const ts::World ranks = world.num_processes() > 1 ? world : ts::World(8);
    if (ranks.size() != 8) {
      std::fprintf(stderr,
                   "mpi_mlp needs a world of 8 ranks (processes x TESSERA_RANKS_PER_PROCESS), got %d\n",
                   ranks.size());
      return 1;
    }
    ts::LocalMode mode(ranks);
    const ts::Tensor y = mpi_example::mlp_step(mpi_example::mlp_inputs());

    const auto checksum = static_cast<float>(ts::sum(y).item().to_double());
    uint32_t bits = 0;
    std::memcpy(&bits, &checksum, sizeof(bits));
    if (world.process_index() == 0)
      std::printf("world of %d rank(s) on %d process(es): y %lldx%lld, checksum %.9g (bits 0x%08x)\n",
                  ranks.size(), world.num_processes(), static_cast<long long>(y.size(0)),
                  static_cast<long long>(y.size(1)), static_cast<double>(checksum), bits);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_mlp: %s\n", e.what());
    return 1;
  }
  return 0;
}

// transport_mpi_plugin <plugin file> <process count>: the "mpi" transport loaded like the host
// loads it, in a program that does not link MPI and never calls MPI_Init: the plugin initialises
// MPI, and finalises it at finalize.
//   mpirun -np N transport_mpi_plugin libtessera-transport-mpi.so N
#include <cstdio>
#include <cstdlib>
#include <string>

#include "checks.hpp"
#include "chunk.hpp"
#include "client.hpp"
#include "load.hpp"
#include "suite.hpp"

using namespace transport_test;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <plugin file> <process count>\n", argv[0]);
    return 2;
  }
  const World known = launched_world(argv[2]);

  const LoadedTransport loaded = load_transport(argv[1], "mpi");
  if (loaded.table == nullptr) {
    std::fprintf(stderr, "cannot load the transport: %s\n", loaded.error.c_str());
    return 1;
  }
  Client client(*loaded.table);

  tessera_transport_request request = nullptr;
  Chunk chunk = Chunk::of_bytes(4);
  expect_error(client.isend(chunk.tensor(), 0, 0, request), TESSERA_INVALID_ARGUMENT, {"not initialised"},
               "isend before init");

  tessera_transport_info info{};
  const Outcome joined = client.init(30000, info);
  expect_ok(joined, "init");
  if (joined.status != TESSERA_OK) return 1;
  World world = known;
  world.max_tag = info.max_tag;
  check_world(info, known);
  expect_error(client.init(30000, info), TESSERA_INVALID_ARGUMENT, {"twice"}, "init a second time");

  check_all(client, world);

  expect_ok(client.finalize(), "finalize");
  // The plugin called MPI_Init_thread, so it has called MPI_Finalize as well.
  using Query = int (*)(int*);
  auto finalized_query = reinterpret_cast<Query>(plugin_symbol(loaded, "MPI_Finalized"));
  int finalized = 0;
  expect(finalized_query != nullptr && finalized_query(&finalized) == 0 && finalized == 1,
         "MPI is not finalised after the plugin, which initialised it, was finalised");
  // MPI cannot start again in this process, and init says so.
  expect_error(client.init(30000, info), TESSERA_INTERNAL, {"finalised"}, "init after MPI_Finalize");

  if (failure_count() > 0) {
    std::fprintf(stderr, "[process %d] %d check(s) failed\n", known.index, failure_count());
    return 1;
  }
  note("all checks passed");
  return 0;
}

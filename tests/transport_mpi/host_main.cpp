// transport_mpi_host <plugin file> <process count> serialized|single: the program initialises MPI
// itself before the transport's init, as an application that uses MPI on its own does.
//   serialized: MPI_Init_thread(MPI_THREAD_SERIALIZED). The transport joins the program's MPI,
//               keeps its messages apart from the program's own (same tag, MPI_COMM_WORLD), and
//               at finalize leaves MPI initialised for the program to finalise.
//   single:     MPI_Init (MPI_THREAD_SINGLE in Open MPI). The transport refuses it, naming the
//               level, and leaves MPI as it was.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "checks.hpp"
#include "chunk.hpp"
#include "client.hpp"
#include "load.hpp"
#include "suite.hpp"

using namespace transport_test;

namespace {

// The test's own names of the levels, not the transport's.
std::string level_name(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  return "MPI_THREAD_MULTIPLE";
}

// The program and the transport both use tag 7 between the same processes; the program's message
// must reach the program's receive and the transport's the transport's.
void check_private_messages(Client& client, const World& world) {
  constexpr int kTag = 7;
  int program_in = -1;
  MPI_Request program_receive = MPI_REQUEST_NULL;
  MPI_Irecv(&program_in, 1, MPI_INT, world.left(), kTag, MPI_COMM_WORLD, &program_receive);

  Chunk out = Chunk::of_bytes(16);
  Chunk in = Chunk::of_bytes(16);
  fill_pattern(out.storage().data(), 16, world.index, kTag);
  tessera_transport_request send = client.send(out.tensor(), world.right(), kTag);
  tessera_transport_request receive = client.recv(in.tensor(), world.left(), kTag);
  client.finish(receive, "the transport's message on tag 7");
  client.finish(send, "the transport's message on tag 7");
  expect(pattern_mismatch(in.storage().data(), 16, world.left(), kTag) == 16,
         "the transport's message on tag 7 arrived wrong");
  // The left neighbour sends its program message only after our "go" below, so the program's
  // receive must still be pending here.
  int flag = 0;
  MPI_Test(&program_receive, &flag, MPI_STATUS_IGNORE);
  expect(flag == 0, "the program's receive on MPI_COMM_WORLD took a message of the transport");
  Chunk go_out = Chunk::of_bytes(1);
  Chunk go_in = Chunk::of_bytes(1);
  tessera_transport_request go = client.send(go_out.tensor(), world.left(), kTag + 1);
  tessera_transport_request go_from_right = client.recv(go_in.tensor(), world.right(), kTag + 1);
  client.finish(go_from_right, "the go from the right");
  client.finish(go, "the go to the left");

  const int program_out = 1000 + world.index;
  MPI_Send(&program_out, 1, MPI_INT, world.right(), kTag, MPI_COMM_WORLD);
  MPI_Wait(&program_receive, MPI_STATUS_IGNORE);
  expect(program_in == 1000 + world.left(), "the program's message on tag 7: got " +
                                                std::to_string(program_in) + ", expected " +
                                                std::to_string(1000 + world.left()));
}

int run(Client& client, const World& known, bool serialized) {
  int provided = -1;
  if (serialized) {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    expect(provided >= MPI_THREAD_SERIALIZED, "this MPI provides only " + level_name(provided));
  } else {
    MPI_Init(nullptr, nullptr);
    MPI_Query_thread(&provided);
  }
  tessera_transport_info info{};
  const Outcome joined = client.init(30000, info);
  if (provided < MPI_THREAD_SERIALIZED) {
    expect_error(joined, TESSERA_INVALID_ARGUMENT, {level_name(provided), "MPI_THREAD_SERIALIZED"},
                 "init under " + level_name(provided));
  } else {
    if (!serialized) note("MPI_Init gave " + level_name(provided) + ": the transport accepts it");
    expect_ok(joined, "init in a program that initialised MPI");
  }
  if (joined.status == TESSERA_OK) {
    World world = known;
    world.max_tag = info.max_tag;
    check_world(info, known);
    if (world.count > 1) check_private_messages(client, world);
    check_allgather(client, world);
    expect_ok(client.finalize(), "finalize");
  }
  int finalized = -1;
  int initialized = -1;
  MPI_Finalized(&finalized);
  MPI_Initialized(&initialized);
  expect(finalized == 0 && initialized == 1,
         "the transport finalised MPI, which the program had initialised");
  // MPI_COMM_WORLD still works for the program.
  int sum = 0;
  const int one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect(sum == known.count, "MPI_Allreduce after the transport's finalize: " + std::to_string(sum));
  MPI_Finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 || (std::strcmp(argv[3], "serialized") != 0 && std::strcmp(argv[3], "single") != 0)) {
    std::fprintf(stderr, "usage: %s <plugin file> <process count> serialized|single\n", argv[0]);
    return 2;
  }
  const World known = launched_world(argv[2]);
  const LoadedTransport loaded = load_transport(argv[1], "mpi");
  if (loaded.table == nullptr) {
    std::fprintf(stderr, "cannot load the transport: %s\n", loaded.error.c_str());
    return 1;
  }
  Client client(*loaded.table);
  run(client, known, std::strcmp(argv[3], "serialized") == 0);
  if (failure_count() > 0) {
    std::fprintf(stderr, "[process %d] %d check(s) failed\n", known.index, failure_count());
    return 1;
  }
  note("all checks passed");
  return 0;
}

// Peak memory of shared replicas, against its targets: a 1 GiB float32 tensor replicated over 1024
// ranks (target < 1.2 GiB), and over 64 ranks followed by a write to one rank's shard (target
// < 2.2 GiB: the caller's tensor, shared by every shard, plus the written rank's own copy). Each
// case runs in a child process of its own, so one peak does not hide the next.
//   bench_replica_memory            both cases
//   bench_replica_memory RANKS [write]   one case, in this process
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <tessera/tessera.hpp>

namespace ts = tessera;

namespace {

long peak_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;  // KiB on Linux
}

int run_case(int ranks, bool write) {
  ts::LocalMode mode(ranks);
  const ts::Tensor big = [] {
    ts::DisabledLocalMode plain;
    return ts::ones({int64_t{1} << 28});  // 1 GiB of float32
  }();
  const ts::DTensor d = ts::distribute_tensor(big, ts::init_device_mesh("cpu", {ranks}), {ts::Replicate()});
  if (write) {
    ts::Tensor one = d.to_local().shard(ranks - 1);
    one.fill_(2.0);
  }
  std::printf("1 GiB replicated over %d ranks%s: peak RSS %ld MiB\n", ranks,
              write ? ", one rank written" : "", peak_mib());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) return run_case(std::atoi(argv[1]), argc > 2 && std::string(argv[2]) == "write");
  for (const char* args : {"1024", "64 write"}) {
    const std::string command = std::string("\"") + argv[0] + "\" " + args;
    if (std::system(command.c_str()) != 0) return 1;
  }
  return 0;
}

// checkpoint_crash_writer DIR VERSION: saves checkpoint number VERSION to DIR (every value depends
// on VERSION), so that a test can kill it mid-save (TESSERA_DCP_TEST_CRASH_AT) and check what DIR
// then holds. Exit status 0 once the save is complete.
#include <cstdio>
#include <string>

#include "tessera/tessera.hpp"

namespace ts = tessera;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: checkpoint_crash_writer DIR VERSION\n");
    return 2;
  }
  try {
    const std::string dir = argv[1];
    const int64_t version = std::stoll(argv[2]);
    ts::LocalMode mode(4);
    const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {4});
    ts::Tensor dense, plain;
    {
      const ts::DisabledLocalMode off = ts::maybe_disable_local_mode();
      dense = ts::arange(0, 64 * 16, 1, ts::kFloat32).reshape({64, 16}) + static_cast<double>(1000 * version);
      plain = ts::arange(0, 7, 1, ts::kInt64) + version;
    }
    const ts::Tensor local =
        ts::rank_map([&](int r) { return ts::full({5}, static_cast<double>(version * 10 + r)); });
    ts::dcp::save({{"w", ts::distribute_tensor(dense, mesh, {ts::Shard(0)})},
                   {"local", local},
                   {"plain", plain},
                   {"version", version},
                   {"tag", "version " + std::to_string(version)}},
                  dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_crash_writer: %s\n", e.what());
    return 1;
  }
  return 0;
}

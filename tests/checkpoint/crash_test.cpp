// Crash safety: a process killed at any step of a save leaves the previous checkpoint complete
// (or, once the metadata was renamed, the new one), and the next save removes what it left.
#include <sys/wait.h>

#include <cstdlib>

#include "checkpoint_test_support.hpp"

using ct::ScratchDir;
namespace ts = tessera;
namespace dcp = tessera::dcp;

namespace {

// Runs the writer for `version`, killed at step `crash_at` (0: not killed). Returns whether it
// completed.
bool run_writer(const std::string& dir, int version, int crash_at) {
  // exec: the shell becomes the writer, so a kill shows as the writer's own signal.
  const std::string command = "TESSERA_DCP_TEST_CRASH_AT=" + std::to_string(crash_at) + " exec " +
                              TESSERA_TEST_CRASH_WRITER + " " + dir + " " + std::to_string(version);
  const int status = std::system(command.c_str());
  REQUIRE(status != -1);
  if (WIFEXITED(status)) {
    REQUIRE_MESSAGE(WEXITSTATUS(status) == 0, "the writer failed: " << command);
    return true;
  }
  REQUIRE_MESSAGE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL), "unexpected status " << status);
  return false;
}

// Loads the checkpoint in `dir` and checks it is, in full, the one of some version; returns it.
int64_t loaded_version(const std::string& dir) {
  ts::LocalMode mode(2);
  const ts::DeviceMesh mesh = ts::init_device_mesh("cpu", {2});
  dcp::StateDict state = {{"w", ct::zeros_like_layout({64, 16}, mesh, {ts::Shard(0)})},
                          {"version", int64_t{-1}},
                          {"tag", std::string()}};
  dcp::load(state, dir);
  const int64_t version = std::get<int64_t>(state.at("version"));
  CHECK(std::get<std::string>(state.at("tag")) == "version " + std::to_string(version));
  const ts::Tensor dense = ct::dense_of(std::get<ts::DTensor>(state.at("w")));
  const auto values = ct::values_of(dense);
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] != static_cast<double>(i) + 1000.0 * static_cast<double>(version)) {
      FAIL_CHECK("element " << i << " of w is " << values[i] << ", not version " << version << "'s");
      break;
    }
  ts::LocalMode four(4);
  dcp::StateDict rest = {{"local", ts::rank_map([](int) { return ts::zeros({5}); })},
                         {"plain", ts::zeros({7}, ts::kInt64)}};
  dcp::load(rest, dir);
  const ts::Tensor& local = std::get<ts::Tensor>(rest.at("local"));
  for (int r = 0; r < 4; ++r)
    CHECK(ct::values_of(local.shard(r)) == std::vector<double>(5, static_cast<double>(version * 10 + r)));
  CHECK(ct::values_of(std::get<ts::Tensor>(rest.at("plain")))[6] == static_cast<double>(6 + version));
  return version;
}

}  // namespace

TEST_CASE(
    "a save killed at every one of its steps leaves a complete checkpoint, old before the commit, new "
    "after") {
  ScratchDir dir;
  REQUIRE(run_writer(dir.path(), 1, 0));
  REQUIRE(loaded_version(dir.path()) == 1);
  int steps_killed = 0;
  bool committed_seen = false;
  int version = 1;
  for (int k = 1; k < 100; ++k) {
    CAPTURE(k);
    const int next = version + 1;
    const bool completed = run_writer(dir.path(), next, k);
    const int64_t got = loaded_version(dir.path());
    if (completed) break;
    ++steps_killed;
    // A killed save shows the old checkpoint until its rename, the new one from then on.
    CHECK((got == version || got == next));
    if (got == next) {
      committed_seen = true;
      version = next;
    }
  }
  // The save has more than a dozen steps (data pieces, fsyncs, metadata, rename, removals), and
  // some crashes came after the commit.
  CHECK(steps_killed > 12);
  CHECK(committed_seen);
  // Killed saves left data files behind; the next complete save removes every file it does not name.
  REQUIRE(run_writer(dir.path(), 50, 0));
  CHECK(loaded_version(dir.path()) == 50);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  CHECK(files == 2);  // .metadata and one data file
}

// [world] keys given to configure() in code, once the process world exists. The case makes the
// process world, which lasts until the process ends and refuses any later configuration with other
// [world] keys: it is a suite of its own, so that the test_config cases, run one after another in
// one process (the executable run directly), never meet that world.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "plugin/plugin_test_support.hpp"

namespace ts = tessera;
using plugin_test::contains;

// [world] given to configure() in code: init_world() makes that world; once it exists, asking for
// another is an error naming the key (the keys are read when the process world is made).
TEST_CASE("[world] keys given to configure() shape init_world's world, and cannot change after it") {
  ts::configure(ts::Config::from_string("[world]\ntransport = \"local\"\nranks_per_process = 6\n"));
  const ts::World world = ts::init_world();
  CHECK(world.size() == 6);
  CHECK(world.num_processes() == 1);
  CHECK(world.transport() == "local");
  CHECK(world.ranks() == ts::RankSet::range(6));
  CHECK(ts::init_world() == world);  // idempotent
  try {
    ts::configure(ts::Config::from_string("[world]\ntransport = \"local\"\nranks_per_process = 2\n"));
    FAIL("changing [world] after init_world was accepted");
  } catch (const ts::ConfigError& e) {
    CHECK(contains(e.what(), "[world] ranks_per_process: the process world already exists"));
  }
  // The same keys again are fine (configure() may be called more than once).
  ts::configure(ts::Config::from_string("[world]\ntransport = \"local\"\nranks_per_process = 6\n"));
}

// [world] keys given to configure() in code, once the process world exists, and the topology preset
// init_world() checks against it. The cases make the process world, which lasts until the process
// ends and refuses any later configuration with other [world] keys: it is a suite of its own, so
// that the test_config cases, run one after another in one process (the executable run directly),
// never meet that world.
#include <doctest/doctest.h>

#include <tessera/tessera.hpp>

#include "plugin/plugin_test_support.hpp"

namespace ts = tessera;
using plugin_test::contains;

// A topology preset that does not fit the world init_world() makes is an error there, naming the
// preset and both sizes; with a fitting preset the same world is returned. (Before the case below:
// the world it checks the size of is this one.)
TEST_CASE("init_world refuses a configured topology preset that does not fit its world") {
  ts::configure(
      ts::Config::from_string("[world]\ntransport = \"local\"\nranks_per_process = 6\n"
                              "[topology]\npreset = \"nodes:4\"\n"));
  try {
    (void)ts::init_world();
    FAIL("init_world accepted nodes:4 for a world of 6 ranks");
  } catch (const ts::ConfigError& e) {
    CHECK(contains(e.what(), "init_world: [topology] preset does not fit this world of 6 ranks"));
    CHECK(contains(e.what(), "'nodes:4': 4 ranks per node does not divide the world of 6 ranks"));
  }
  ts::set_default_topology("torus:2x2");
  CHECK_THROWS_WITH_AS(ts::init_world(),
                       doctest::Contains("'torus:2x2' has 2x2 = 4 ranks but the world has 6"),
                       ts::ConfigError);
  ts::set_default_topology("nodes:3");
  CHECK(ts::init_world().size() == 6);
  ts::set_default_topology("");
}

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

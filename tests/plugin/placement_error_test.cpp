// A placement strategy's layout that fails without a message: the error names the strategy and the
// request and says there was no message.
#include <string>

#include "dtensor/placement_strategy.hpp"
#include "plugin/registry.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;

TEST_CASE("a placement layout that fails without a message says so") {
  tessera::load_plugin(test_plugin("bad-silent-layout").string());
  const auto strategy = tessera::plugin::Registry::instance().placement("bad-silent-layout");
  REQUIRE(strategy != nullptr);
  CHECK(strategy->prefix() == "Q");
  const std::string message = error_of([&] { (void)strategy->layout(10, 3, 2); });
  CHECK(message == "placement 'bad-silent-layout' failed to lay out 10 elements over 3 shards (shard 2): no message");
  tessera::unload_plugin("bad-silent-layout");
  check_cpu_still_works();
}

// A placement strategy's layout that fails without a message: the error names the strategy and the
// request and says there was no message.
#include <string>

#include "dtensor/placement_strategies.hpp"
#include "dtensor/placement_strategy.hpp"
#include "plugin_test_support.hpp"

using namespace plugin_test;

TEST_CASE("a placement layout that fails without a message says so") {
  tessera::load_plugin(test_plugin("bad-silent-layout").string());
  const auto strategy = tessera::dtensor::placement("bad-silent-layout");
  REQUIRE(strategy != nullptr);
  CHECK(strategy->prefix() == "Q");
  const std::string message = error_of([&] { (void)strategy->layout(10, 3, 2); });
  CHECK(message ==
        "placement 'bad-silent-layout' failed to lay out 10 elements over 3 shards (shard 2): no message");
  tessera::unload_plugin("bad-silent-layout");
  check_cpu_still_works();
}

TEST_CASE("a strategy with layout_with_arguments but no check_arguments is rejected at load") {
  const std::string message = load_error(test_plugin("bad-layout-half-arguments"));
  CHECK(contains(message, "placement 'bad-layout-half-arguments'"));
  CHECK(contains(message, "'check_arguments' is NULL but 'layout_with_arguments' is set"));
  CHECK_FALSE(is_loaded("bad-layout-half-arguments"));
  check_cpu_still_works();
}

TEST_CASE("a strategy refusing arguments without a message: the placement and arguments are named") {
  tessera::load_plugin(test_plugin("bad-layout-arguments-silent").string());
  const std::string message = error_of([] { (void)tessera::Placement::parse("T(0, 3)"); });
  CHECK(message ==
        "placement 'T(0, 3)': strategy 'bad-layout-arguments-silent' refuses arguments '3': no message");
  // Without arguments the strategy is asked too (it may require some): refused the same way.
  CHECK(contains(error_of([] { (void)tessera::Placement::parse("T(1)"); }),
                 "refuses arguments '': no message"));
  tessera::unload_plugin("bad-layout-arguments-silent");
  check_cpu_still_works();
}

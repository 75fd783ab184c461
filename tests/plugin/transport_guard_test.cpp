// Every call the link makes into a transport is guarded: an exception escaping the plugin
// (bad_plugins/transport_throws.cpp, which throws from the function TRANSPORT_THROWS names) becomes
// an Error naming the transport, its plugin, the call and the exception's text; it breaks the link
// like any other transport failure; and from finalize at the link's end it is logged, not fatal.
#include <memory>
#include <string>

#include "plugin/registry.hpp"
#include "plugin_test_support.hpp"
#include "tensor/tensor_impl.hpp"
#include "world/process_link.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

std::shared_ptr<const ts::plugin::Transport> throwing_transport() {
  if (!is_loaded("transport-throws")) ts::load_plugin(test_plugin("bad-transport-throws").string());
  auto transport = ts::plugin::Registry::instance().transport("transport-throws");
  REQUIRE(transport != nullptr);
  return transport;
}

}  // namespace

TEST_CASE("an exception escaping a transport's init is an error naming the plugin and the call") {
  const ResetAndUnload cleanup({"transport-throws"});
  const ScopedEnv throws("TRANSPORT_THROWS", "init");
  const std::string message = error_of([] { ts::world::ProcessLink link(throwing_transport(), 1, 500); });
  CAPTURE(message);
  CHECK(contains(message, "transport 'transport-throws' (plugin"));
  CHECK(contains(message, "init failed: init threw: transport-throws: init lost its device"));
}

TEST_CASE(
    "an exception escaping isend, irecv, test or allgather is an error naming the call, and breaks the "
    "link") {
  const ResetAndUnload cleanup({"transport-throws"});
  const ts::Tensor values = ts::arange(8).to(ts::kFloat32);
  for (const char* function : {"isend", "irecv", "test", "allgather"}) {
    CAPTURE(function);
    ts::world::ProcessLink link(throwing_transport(), 1, 500);
    const ScopedEnv throws("TRANSPORT_THROWS", function);
    const std::string message = error_of([&] {
      if (std::string(function) == "allgather") {
        link.allgather(std::string(16, 'x'), "comparing");
      } else if (std::string(function) == "irecv") {
        ts::world::ProcessLink::ScratchReceive receive = link.receive_scratch(*values.impl(), 8, 1, 3);
        link.end_scratch(std::move(receive));
      } else {
        std::shared_ptr<ts::world::ProcessLink::Request> sent = link.isend(values, 1, 3);
        link.test(*sent, [] { return std::string("moving"); });
      }
    });
    CAPTURE(message);
    CHECK(contains(message, "(plugin transport-throws, process 0 of 2)"));
    CHECK(contains(message,
                   std::string(function) + " threw: transport-throws: " + function + " lost its device"));
    CHECK(link.broken());
  }
}

TEST_CASE("an exception escaping finalize at the link's end is logged, and the host carries on") {
  const ResetAndUnload cleanup({"transport-throws"});
  {
    const ScopedEnv throws("TRANSPORT_THROWS", "finalize");  // outlives the link: set when it finalizes
    ts::world::ProcessLink link(throwing_transport(), 1, 500);
    CHECK_FALSE(link.broken());
  }  // ~ProcessLink: finalize throws inside the plugin; the guard turns it into a log line
  ts::world::ProcessLink again(throwing_transport(), 1, 500);  // the host is alive and loads it again
  CHECK(again.process_count() == 2);
}

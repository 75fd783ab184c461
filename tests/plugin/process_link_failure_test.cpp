// The link's error paths, driven by a transport whose failures are scripted
// (bad_plugins/scripted_transport.c): a staged send that fails is reported by a later call naming
// the send, is freed once, and the sends after it carry on; receives into the link's scratch
// reuse it; at the end every request the transport made has been freed exactly once.
#include <dlfcn.h>

#include <memory>
#include <string>

#include "plugin/registry.hpp"
#include "plugin_test_support.hpp"
#include "tensor/tensor_impl.hpp"
#include "world/process_link.hpp"

using namespace plugin_test;
namespace ts = tessera;

namespace {

// The scripted transport's count of requests made and not yet freed.
long open_requests() {
  void* library = ::dlopen(test_plugin("bad-scripted-transport").c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  void* symbol = ::dlsym(library, "scripted_transport_open");
  REQUIRE(symbol != nullptr);
  const long count = reinterpret_cast<long (*)()>(symbol)();
  ::dlclose(library);
  return count;
}

std::shared_ptr<const ts::plugin::Transport> scripted_transport() {
  if (!is_loaded("transport-scripted")) ts::load_plugin(test_plugin("bad-scripted-transport").string());
  auto transport = ts::plugin::Registry::instance().transport("transport-scripted");
  REQUIRE(transport != nullptr);
  return transport;
}

}  // namespace

TEST_CASE("a staged send that fails is reported once, by a later call naming it, and the rest carry on") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv fail("SCRIPTED_FAIL_SEND", "3");
  const ts::Tensor values = ts::arange(16).to(ts::kFloat32);
  {
    ts::world::ProcessLink link(scripted_transport(), 1, 1000);
    constexpr size_t kSends = ts::world::ProcessLink::kReapAfter;
    // The link looks at its staged sends once kReapAfter are pending: up to then nothing fails.
    for (size_t i = 0; i < kSends; ++i)
      link.send_staged(*values.impl(), 0, 16, 1, static_cast<int64_t>(100 + i), 700 + i);
    CHECK(open_requests() == static_cast<long>(kSends));
    // The next post reaps: sends 1 and 2 completed and are freed, send 3 failed.
    std::string message;
    try {
      link.send_staged(*values.impl(), 0, 16, 1, 999, 999);
    } catch (const ts::Error& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(contains(message, "staged send of 64 bytes to process 1 (tag 102) of collective call #702"));
    CHECK(contains(message, "scripted failure of send #3"));
    CHECK(open_requests() == static_cast<long>(kSends - 3));  // the failed one is freed as well
    // The link carries on: the remaining sends complete and are reaped as new ones come.
    for (size_t i = 0; i < 2 * kSends; ++i) link.send_staged(*values.impl(), 0, 16, 1, 5, 800 + i);
    CHECK(open_requests() <= static_cast<long>(kSends));
  }
  CHECK(open_requests() == 0);  // the link settled and freed the rest before it finalized
}

TEST_CASE("a receive into the link's scratch writes it, and the next receive of that size reuses it") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ts::Tensor like = ts::zeros({8}, ts::TensorOptions(ts::kFloat32));
  ts::world::ProcessLink link(scripted_transport(), 1, 1000);
  ts::world::ProcessLink::ScratchReceive first = link.receive_scratch(*like.impl(), 8, 1, 7);
  REQUIRE(first.scratch != nullptr);
  CHECK(first.scratch->numel() >= 8);
  CHECK(open_requests() == 1);
  CHECK(link.test(first.request, [] { return std::string("first receive"); }));
  const auto* bytes = static_cast<const unsigned char*>(first.scratch->storage()->data);
  for (int i = 0; i < 32; ++i) CHECK(bytes[i] == 0x3f);
  const void* memory = first.scratch->storage()->data;
  link.end_scratch(std::move(first));
  CHECK(open_requests() == 0);
  // Smaller fits: the same memory; larger does not: new memory, and the small one stays kept.
  ts::world::ProcessLink::ScratchReceive second = link.receive_scratch(*like.impl(), 4, 1, 8);
  CHECK(second.scratch->storage()->data == memory);
  ts::world::ProcessLink::ScratchReceive third = link.receive_scratch(*like.impl(), 64, 1, 9);
  CHECK(third.scratch->storage()->data != memory);
  CHECK(open_requests() == 2);
  // Dropped without end_scratch (an error path): the request is freed before the scratch goes.
  { const ts::world::ProcessLink::ScratchReceive dropped = std::move(third); }
  CHECK(open_requests() == 1);
  CHECK(link.test(second.request, [] { return std::string("second receive"); }));
  link.end_scratch(std::move(second));
  CHECK(open_requests() == 0);
}

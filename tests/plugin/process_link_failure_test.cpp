// The link's error paths, driven by a transport whose failures are scripted
// (bad_plugins/scripted_transport.c): a staged send that fails is reported by a later call naming
// the send and breaks the link (later calls are refused naming the first failure, and nothing the
// transport may still read is freed); receives into the link's scratch reuse it; on an intact link
// every request the transport made is freed exactly once.
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

TEST_CASE("a staged send that fails is reported by a later call naming it, and breaks the link") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv fail("SCRIPTED_FAIL_SEND", "3");
  const ts::Tensor values = ts::arange(16).to(ts::kFloat32);
  {
    ts::world::ProcessLink link(scripted_transport(), 1, 1000);
    constexpr size_t kSends = ts::world::ProcessLink::kReapAfter;
    // The link looks at its staged sends once kReapAfter are pending: up to then nothing fails.
    for (size_t i = 0; i < kSends; ++i)
      link.send_staged(nullptr, 0, *values.impl(), 0, 16, 1, static_cast<int64_t>(100 + i), 700 + i);
    CHECK(open_requests() == static_cast<long>(kSends));
    // The next post reaps: sends 1 and 2 completed and are freed, send 3 failed.
    std::string message;
    try {
      link.send_staged(nullptr, 0, *values.impl(), 0, 16, 1, 999, 999);
    } catch (const ts::Error& e) {
      message = e.what();
    }
    CAPTURE(message);
    CHECK(contains(message, "staged send of 64 bytes to process 1 (tag 102) of collective call #702"));
    CHECK(contains(message, "scripted failure of send #3"));
    CHECK(open_requests() == static_cast<long>(kSends - 3));  // the failed one is freed as well
    // The processes no longer agree on which message is which: the link is broken, and every later
    // call is refused naming the first failure, before it reaches the transport.
    CHECK(link.broken());
    std::string later;
    try {
      link.send_staged(nullptr, 0, *values.impl(), 0, 16, 1, 5, 800);
    } catch (const ts::Error& e) {
      later = e.what();
    }
    CAPTURE(later);
    CHECK(contains(later,
                   "staged send: the link of process 0 to the other processes of its world broke earlier"));
    CHECK(contains(later, "scripted failure of send #3"));
    CHECK(open_requests() == static_cast<long>(kSends - 3));
  }
  // The link's end aborts instead of settling and finalizing (this transport has no abort: it is
  // left as it is): the pending sends are not freed, as the transport may still read their bytes.
  CHECK(open_requests() == static_cast<long>(ts::world::ProcessLink::kReapAfter - 3));
}

TEST_CASE("a link the world's end finds with a send the peer never took is aborted, not finalized") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv pending("SCRIPTED_PENDING_SEND", "1");
  const ts::Tensor values = ts::arange(16).to(ts::kFloat32);
  {
    ts::world::ProcessLink link(scripted_transport(), 1, 200);
    link.send_staged(nullptr, 0, *values.impl(), 0, 16, 1, 3, 1);
    CHECK_FALSE(link.broken());
  }
  CHECK(open_requests() == 1);  // still the transport's: never freed, never finalized
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
  const auto* bytes = static_cast<const unsigned char*>(first.scratch->storage()->data.load());
  for (int i = 0; i < 32; ++i) CHECK(bytes[i] == 0x3f);
  const void* memory = first.scratch->storage()->data.load();
  link.end_scratch(std::move(first));
  CHECK(open_requests() == 0);
  // Smaller fits: the same memory; larger does not: new memory, and the small one stays kept.
  ts::world::ProcessLink::ScratchReceive second = link.receive_scratch(*like.impl(), 4, 1, 8);
  CHECK(second.scratch->storage()->data.load() == memory);
  ts::world::ProcessLink::ScratchReceive third = link.receive_scratch(*like.impl(), 64, 1, 9);
  CHECK(third.scratch->storage()->data.load() != memory);
  CHECK(open_requests() == 2);
  // Dropped without end_scratch (an error path): a receive that has completed (its message landed,
  // though nobody tested it) is freed before the scratch goes, and the link stays intact.
  { const ts::world::ProcessLink::ScratchReceive dropped = std::move(third); }
  CHECK(open_requests() == 1);
  CHECK_FALSE(link.broken());
  CHECK(link.test(second.request, [] { return std::string("second receive"); }));
  link.end_scratch(std::move(second));
  CHECK(open_requests() == 0);
}

TEST_CASE("a receive dropped before its message arrived is cancelled and breaks the link") {
  const ResetAndUnload cleanup({"transport-scripted"});
  const ScopedEnv pending("SCRIPTED_PENDING_RECV", "1");
  const ts::Tensor like = ts::zeros({8}, ts::TensorOptions(ts::kFloat32));
  ts::world::ProcessLink link(scripted_transport(), 1, 1000);
  { const ts::world::ProcessLink::ScratchReceive dropped = link.receive_scratch(*like.impl(), 8, 1, 7); }
  CHECK(open_requests() == 0);  // cancelled: its buffer is free again
  CHECK(link.broken());
}

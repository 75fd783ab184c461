// tessera::sdk::TransportBuilder: the table it fills from a C++ class, called the way the host will
// call a transport's table (no plugin loading here: the table is used directly).
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/sdk/cpp/plugin_builder.hpp"
#include "tessera/sdk/cpp/transport_builder.hpp"

namespace {

// Records what reaches it; test and wait report completion as `wait_completes` says.
struct FakeTransport {
  int32_t last_peer = -1;
  int64_t last_tag = -1;
  const void* last_data = nullptr;
  bool last_was_send = false;
  int64_t last_timeout = -1;
  bool wait_completes = true;
  std::vector<tessera_transport_request> freed;
  int finalized = 0;

  tessera::sdk::TransportWorld init(const tessera_transport_config& config) {
    last_timeout = config.timeout_ms;
    return {2, 3, 1 << 20, 3e-6, 25e9, 1 << 16, true};
  }
  void finalize() { ++finalized; }
  tessera_transport_request post(const DLTensor& chunk, int32_t peer, int64_t tag, bool send) {
    if (peer < 0)
      throw tessera::sdk::Error(TESSERA_INVALID_ARGUMENT, "peer " + std::to_string(peer) + " is negative");
    last_peer = peer;
    last_tag = tag;
    last_data = chunk.data;
    last_was_send = send;
    return reinterpret_cast<tessera_transport_request>(static_cast<uintptr_t>(0x1000 + tag));
  }
  tessera_transport_request isend(const DLTensor& chunk, int32_t peer, int64_t tag) {
    return post(chunk, peer, tag, true);
  }
  tessera_transport_request irecv(const DLTensor& chunk, int32_t peer, int64_t tag) {
    return post(chunk, peer, tag, false);
  }
  bool test(tessera_transport_request) { return wait_completes; }
  bool wait(tessera_transport_request, int64_t timeout_ms) {
    last_timeout = timeout_ms;
    return wait_completes;
  }
  void free_request(tessera_transport_request request) { freed.push_back(request); }
};

// The same with the optional all-gather: every "process" contributed the same bytes.
struct GatheringTransport : FakeTransport {
  int32_t processes = 3;
  bool allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms) {
    last_timeout = timeout_ms;
    for (int32_t p = 0; p < processes; ++p)
      for (size_t i = 0; i < bytes; ++i)
        static_cast<char*>(recv)[p * bytes + i] = static_cast<const char*>(send)[i];
    return timeout_ms > 0;
  }
};

// The same with the optional abort (SDK 1.5): records the exit code, or throws when asked to.
struct AbortingTransport : FakeTransport {
  int32_t aborted_with = -1;
  bool throws = false;
  void abort(int32_t exit_code) {
    if (throws) throw std::runtime_error("cannot abort");
    aborted_with = exit_code;
  }
};

tessera_error make_error() {
  tessera_error error{};
  error.struct_size = sizeof(error);
  return error;
}

DLTensor chunk_of(std::vector<float>& data) {
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  return t;
}

}  // namespace

TEST_CASE("TransportBuilder fills every required function and leaves allgather and abort NULL without them") {
  FakeTransport impl;
  tessera::sdk::TransportBuilder<FakeTransport> builder("fake", impl);
  const tessera_transport& t = *builder.table();
  CHECK(t.struct_size == sizeof(tessera_transport));
  CHECK(std::string(t.name) == "fake");
  CHECK((t.init != nullptr));
  CHECK((t.finalize != nullptr));
  CHECK((t.isend != nullptr));
  CHECK((t.irecv != nullptr));
  CHECK((t.test != nullptr));
  CHECK((t.wait != nullptr));
  CHECK((t.free_request != nullptr));
  CHECK((t.allgather == nullptr));
  CHECK((t.abort == nullptr));

  tessera::sdk::PluginBuilder plugin("transport-fake", "0.1", "test");
  plugin.add_transport(builder.table());
  REQUIRE(plugin.info()->num_components == 1);
  CHECK(plugin.info()->components[0]->kind == TESSERA_COMPONENT_TRANSPORT);
  CHECK((plugin.info()->components[0]->table == builder.table()));
  CHECK(plugin.info()->sdk_minor == 7);  // this SDK, 1.7
}

TEST_CASE("TransportBuilder init writes only the info fields within the host's struct_size") {
  FakeTransport impl;
  tessera::sdk::TransportBuilder<FakeTransport> builder("fake", impl);
  const tessera_transport& t = *builder.table();
  tessera_transport_config config{sizeof(tessera_transport_config), nullptr, 60000};
  tessera_error error = make_error();

  tessera_transport_info full{};
  full.struct_size = sizeof(full);
  REQUIRE(t.init(t.context, &config, &full, &error) == TESSERA_OK);
  CHECK(impl.last_timeout == 60000);
  CHECK(full.process_index == 2);
  CHECK(full.process_count == 3);
  CHECK(full.max_tag == (1 << 20));
  CHECK(full.latency == 3e-6);  // SDK 1.5 link properties
  CHECK(full.bandwidth == 25e9);
  CHECK(full.max_message_bytes == (1 << 16));
  CHECK(full.device_memory == 1);

  // A host of SDK 1.1 to 1.4, whose info ends after max_tag (32 bytes): the properties are not its to
  // receive, and what lies beyond is left alone.
  tessera_transport_info older{};
  older.struct_size = 32;
  older.latency = -1.0;
  older.device_memory = 9;
  REQUIRE(t.init(t.context, &config, &older, &error) == TESSERA_OK);
  CHECK(older.max_tag == (1 << 20));
  CHECK(older.latency == -1.0);
  CHECK(older.device_memory == 9);

  // A host whose info ends before max_tag (16 + 4 + 4 = 24 bytes): max_tag is not its to receive.
  tessera_transport_info shorter{};
  shorter.struct_size = 24;
  shorter.max_tag = -7;
  REQUIRE(t.init(t.context, &config, &shorter, &error) == TESSERA_OK);
  CHECK(shorter.process_count == 3);
  CHECK(shorter.max_tag == -7);

  REQUIRE(t.finalize(t.context, &error) == TESSERA_OK);
  CHECK(impl.finalized == 1);
}

TEST_CASE("TransportBuilder passes chunks, peers and tags through and frees requests") {
  FakeTransport impl;
  tessera::sdk::TransportBuilder<FakeTransport> builder("fake", impl);
  const tessera_transport& t = *builder.table();
  tessera_error error = make_error();
  std::vector<float> data(4, 1.f);
  const DLTensor chunk = chunk_of(data);

  tessera_transport_request send = nullptr;
  REQUIRE(t.isend(t.context, &chunk, 1, 7, &send, &error) == TESSERA_OK);
  CHECK(impl.last_was_send);
  CHECK(impl.last_peer == 1);
  CHECK(impl.last_tag == 7);
  CHECK(impl.last_data == data.data());
  CHECK((send == reinterpret_cast<tessera_transport_request>(uintptr_t{0x1007})));  // 0x1000 + tag

  tessera_transport_request recv = nullptr;
  REQUIRE(t.irecv(t.context, &chunk, 0, 9, &recv, &error) == TESSERA_OK);
  CHECK_FALSE(impl.last_was_send);
  CHECK(impl.last_peer == 0);

  int32_t done = -1;
  REQUIRE(t.test(t.context, send, &done, &error) == TESSERA_OK);
  CHECK(done == 1);
  impl.wait_completes = false;
  REQUIRE(t.test(t.context, send, &done, &error) == TESSERA_OK);
  CHECK(done == 0);

  REQUIRE(t.free_request(t.context, send, &error) == TESSERA_OK);
  REQUIRE(t.free_request(t.context, recv, &error) == TESSERA_OK);
  CHECK((impl.freed == std::vector<tessera_transport_request>{send, recv}));
}

TEST_CASE("TransportBuilder reports a timed-out wait as TESSERA_TIMEOUT and an exception as its status") {
  FakeTransport impl;
  tessera::sdk::TransportBuilder<FakeTransport> builder("fake", impl);
  const tessera_transport& t = *builder.table();
  tessera_error error = make_error();
  tessera_transport_request request = reinterpret_cast<tessera_transport_request>(uintptr_t{0x1000});

  CHECK(t.wait(t.context, request, 0, &error) == TESSERA_OK);  // 0 only polls; this one is done
  impl.wait_completes = false;
  CHECK(t.wait(t.context, request, 25, &error) == TESSERA_TIMEOUT);
  CHECK(impl.last_timeout == 25);
  CHECK(std::string(error.message) == "transport 'fake': wait did not complete within 25 ms");

  CHECK(t.wait(t.context, request, -1, &error) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(error.message) == "wait: negative timeout -1");

  std::vector<float> data(1);
  const DLTensor chunk = chunk_of(data);
  tessera_transport_request out = nullptr;
  CHECK(t.isend(t.context, &chunk, -3, 0, &out, &error) == TESSERA_INVALID_ARGUMENT);
  CHECK(std::string(error.message) == "peer -3 is negative");
  CHECK((out == nullptr));
}

TEST_CASE("TransportBuilder fills allgather when the class has one") {
  GatheringTransport impl;
  tessera::sdk::TransportBuilder<GatheringTransport> builder("gathering", impl);
  const tessera_transport& t = *builder.table();
  REQUIRE((t.allgather != nullptr));
  tessera_error error = make_error();
  const char send[2] = {'a', 'b'};
  char recv[6] = {};
  REQUIRE(t.allgather(t.context, send, 2, recv, 100, &error) == TESSERA_OK);
  CHECK(std::string(recv, 6) == "ababab");
  CHECK(t.allgather(t.context, send, 2, recv, 0, &error) == TESSERA_TIMEOUT);
  CHECK(std::string(error.message) == "transport 'gathering': allgather did not complete within 0 ms");
}

TEST_CASE("TransportBuilder fills abort when the class has one, and turns its exception into a status") {
  AbortingTransport impl;
  tessera::sdk::TransportBuilder<AbortingTransport> builder("aborting", impl);
  const tessera_transport& t = *builder.table();
  REQUIRE((t.abort != nullptr));
  tessera_error error = make_error();
  CHECK(t.abort(t.context, 3, &error) == TESSERA_OK);
  CHECK(impl.aborted_with == 3);
  impl.throws = true;
  CHECK(t.abort(t.context, 1, &error) != TESSERA_OK);
  CHECK(std::string(error.message).find("cannot abort") != std::string::npos);
}

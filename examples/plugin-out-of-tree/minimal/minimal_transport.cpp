// libtessera-transport-minimal.so: a transport "solo" for a world of one process, the skeleton of a
// real one. Ranks of one process exchange messages in memory, never through a transport, so isend
// and irecv (which would name another process) can only refuse; transport.h says what each does.
#include <cstdint>
#include <string>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

namespace sdk = tessera::sdk;

struct SoloTransport {
  // Called once, first: join the world and say where this process stands in it.
  sdk::TransportWorld init(const tessera_transport_config&) {
    return {.process_index = 0, .process_count = 1};
  }
  // Called once, last, with no request pending (after a failure, abort is called instead).
  void finalize() {}

  tessera_transport_request isend(const DLTensor&, int32_t peer, int64_t) { throw no_peer(peer); }
  tessera_transport_request irecv(const DLTensor&, int32_t peer, int64_t) { throw no_peer(peer); }
  // No request is ever made, so the host never has one to test, wait for or free.
  bool test(tessera_transport_request) { throw no_request(); }
  bool wait(tessera_transport_request, int64_t) { throw no_request(); }
  void free_request(tessera_transport_request) { throw no_request(); }
  // SDK 1.5, optional: leave the world at once after a failure. Alone, there is nobody to tell.
  void abort(int32_t) {}

  static sdk::Error no_peer(int32_t peer) {
    return sdk::Error(TESSERA_NOT_FOUND, "solo: process " + std::to_string(peer) +
                                             " does not exist; this transport's world is one process");
  }
  static sdk::Error no_request() { return sdk::Error(TESSERA_INVALID_ARGUMENT, "solo: no such request"); }
};

void describe(sdk::PluginBuilder& plugin) {
  static SoloTransport solo;
  static sdk::TransportBuilder<SoloTransport> transport("solo", solo);
  plugin.add_transport(transport.table());
}

}  // namespace

TESSERA_DEFINE_PLUGIN("transport-minimal", "0.1.0", "a world of one process", describe)

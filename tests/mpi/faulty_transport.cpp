// "mpi-faulty": the mpi transport with a fault on cue, for the host's checks of what arrives
// (tests/mpi/CMakeLists.txt). FAULTY_TRANSPORT says which:
//   corrupt  from the third message of at least 16 bytes on, every such message's last byte is
//            flipped on its way (a transport that damages payloads);
//   replay   from the third message on, a message as long as an earlier one to the same process is
//            sent with the bytes of the last such one (a transport that delivers an old message in
//            place of a new one, as one that reorders them would);
//   same_index  every process reports process index 0 at init (a transport that numbers its
//            processes wrongly: the indices are not a permutation).
// Messages go from copies this plugin keeps until the process ends, as MPI may read them until then.
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "mpi_transport.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

using tessera::transport_mpi::MpiTransport;

size_t byte_length(const DLTensor& chunk) {
  size_t n = (static_cast<size_t>(chunk.dtype.bits) * chunk.dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < chunk.ndim; ++d) n *= static_cast<size_t>(chunk.shape[d]);
  return n;
}

class FaultyTransport {
 public:
  tessera::sdk::TransportWorld init(const tessera_transport_config& config) {
    const char* fault = std::getenv("FAULTY_TRANSPORT");
    fault_ = fault == nullptr ? "" : fault;
    tessera::sdk::TransportWorld world = mpi_.init(config);
    if (fault_ == "same_index") world.process_index = 0;
    return world;
  }
  void finalize() { mpi_.finalize(); }
  void abort(int32_t exit_code) { mpi_.abort(exit_code); }
  tessera_transport_request isend(const DLTensor& chunk, int32_t peer, int64_t tag) {
    return mpi_.isend(faulty(chunk, peer), peer, tag);
  }
  tessera_transport_request irecv(const DLTensor& chunk, int32_t peer, int64_t tag) {
    return mpi_.irecv(chunk, peer, tag);
  }
  bool test(tessera_transport_request request) { return mpi_.test(request); }
  bool wait(tessera_transport_request request, int64_t timeout_ms) { return mpi_.wait(request, timeout_ms); }
  void free_request(tessera_transport_request request) { mpi_.free_request(request); }
  bool allgather(const void* send, size_t bytes, void* recv, int64_t timeout_ms) {
    return mpi_.allgather(send, bytes, recv, timeout_ms);
  }

 private:
  DLTensor faulty(const DLTensor& chunk, int32_t peer) {
    const size_t bytes = byte_length(chunk);
    const auto* source = static_cast<const std::byte*>(chunk.data) + chunk.byte_offset;
    std::vector<std::byte> sent(source, source + bytes);
    ++messages_;
    if (fault_ == "corrupt" && bytes >= 16 && ++long_messages_ >= 3) sent.back() ^= std::byte{0x01};
    if (fault_ == "replay") {
      std::vector<std::byte>& previous = previous_[{peer, bytes}];
      std::vector<std::byte> fresh = sent;
      if (messages_ >= 3 && !previous.empty()) sent = previous;
      previous = std::move(fresh);
    }
    copies_.push_back(std::move(sent));
    DLTensor copy = chunk;
    copy.data = copies_.back().data();
    copy.byte_offset = 0;
    copy.strides = nullptr;
    return copy;
  }

  MpiTransport mpi_;
  std::string fault_;
  long messages_ = 0;
  long long_messages_ = 0;
  std::map<std::pair<int32_t, size_t>, std::vector<std::byte>> previous_;  // by (peer, length)
  std::deque<std::vector<std::byte>> copies_;
};

// Never destroyed (as transport-mpi's own plugin.cpp explains: the host finalizes the transport
// from its static destructors, which may run after this library's).
template <class T>
T& never_destroyed() {
  alignas(T) static unsigned char storage[sizeof(T)];
  static T* made = ::new (static_cast<void*>(storage)) T();
  return *made;
}

void describe(tessera::sdk::PluginBuilder& plugin) {
  static tessera::sdk::TransportBuilder<FaultyTransport>* builder =
      ::new tessera::sdk::TransportBuilder<FaultyTransport>("mpi-faulty", never_destroyed<FaultyTransport>());
  plugin.add_transport(builder->table());
}

}  // namespace

TESSERA_DEFINE_PLUGIN("transport-mpi-faulty", "0.1.0", "The mpi transport with a fault on cue (tests only)",
                      describe)

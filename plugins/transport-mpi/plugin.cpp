// Entry point of libtessera-transport-mpi.so: one transport, "mpi" (transport.h), on Open MPI.
#include <new>
#include <utility>

#include "mpi_transport.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

// An object built in place in this library's static storage and never destroyed: the host keeps
// pointers into the transport's table until the plugin is unloaded, and a process world that lives
// until exit finalizes the transport from the host's own static destructors, which may run after
// this library's (exit runs them in reverse order of creation). Static storage, not the heap: a leak
// checker that runs after the library is unloaded finds nothing of it left allocated.
template <class T>
class NeverDestroyed {
 public:
  template <class... Args>
  explicit NeverDestroyed(Args&&... args) {
    ::new (static_cast<void*>(storage_)) T(std::forward<Args>(args)...);
  }
  T& get() { return *std::launder(reinterpret_cast<T*>(storage_)); }

 private:
  alignas(T) unsigned char storage_[sizeof(T)];
};

void describe(tessera::sdk::PluginBuilder& plugin) {
  static NeverDestroyed<tessera::transport_mpi::MpiTransport> mpi;
  // [plugins.transport-mpi] latency = 2e-6, bandwidth = 12.5e9: what the network between the
  // processes costs (MPI cannot tell); the world's topology costs its links between processes so.
  static const auto& latency = plugin.parameter<double>("latency", 0.0, tessera::sdk::non_negative_number());
  static const auto& bandwidth =
      plugin.parameter<double>("bandwidth", 0.0, tessera::sdk::non_negative_number());
  mpi.get().link_costs_from([] { return latency.get(); }, [] { return bandwidth.get(); });
  static NeverDestroyed<tessera::sdk::TransportBuilder<tessera::transport_mpi::MpiTransport>> transport(
      "mpi", mpi.get());
  plugin.add_transport(transport.get().table());
}

}  // namespace

TESSERA_DEFINE_PLUGIN("transport-mpi", "0.1.0",
                      "Processes of a world exchange chunks over MPI (Open MPI: MPI_Isend, MPI_Irecv)",
                      describe)

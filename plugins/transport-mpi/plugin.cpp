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
  static NeverDestroyed<tessera::sdk::TransportBuilder<tessera::transport_mpi::MpiTransport>> transport("mpi",
                                                                                                        mpi.get());
  plugin.add_transport(transport.get().table());
}

}  // namespace

TESSERA_DEFINE_PLUGIN("transport-mpi", "0.1.0",
                      "Processes of a world exchange chunks over MPI (Open MPI: MPI_Isend, MPI_Irecv)",
                      describe)

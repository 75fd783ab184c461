// Entry point of libtessera-transport-mpi.so: one transport, "mpi" (transport.h), on Open MPI.
#include "mpi_transport.hpp"
#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace {

void describe(tessera::sdk::PluginBuilder& plugin) {
  // Never destroyed: the host keeps pointers into the table until the plugin is unloaded, and a
  // process world that lives until exit finalizes the transport from the host's own static
  // destructors, which may run after this library's (exit runs them in reverse order of creation).
  static auto& mpi = *new tessera::transport_mpi::MpiTransport();
  static auto& transport =
      *new tessera::sdk::TransportBuilder<tessera::transport_mpi::MpiTransport>("mpi", mpi);
  plugin.add_transport(transport.table());
}

}  // namespace

TESSERA_DEFINE_PLUGIN("transport-mpi", "0.1.0",
                      "Processes of a world exchange chunks over MPI (Open MPI: MPI_Isend, MPI_Irecv)",
                      describe)

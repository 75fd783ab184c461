// import tessera._tessera: the whole binding, registered piece by piece (one file per concept).
#include "bindings.hpp"

NB_MODULE(_tessera, m) {
  using namespace tessera::python;
  m.doc() = "Tessera: SPMD distributed tensor programs, simulated on one machine or run across processes";
  m.attr("__version__") = tessera::kVersion;
  // Order matters where one piece's signatures name another's types.
  bind_errors(m);
  bind_dtypes(m);
  bind_sym_int(m);
  bind_tensor(m);
  bind_local_tensor(m);
  bind_ops(m);
  bind_factories(m);
  bind_dlpack(m);
  bind_local(m);
  bind_mesh(m);
  bind_placements(m);
  bind_dist(m);
  bind_dtensor(m);
  bind_observe(m);
  bind_plugins(m);
  bind_checkpoint(m);
  bind_signatures(m);
}

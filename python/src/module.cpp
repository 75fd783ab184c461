// import tessera._tessera: the whole binding, registered piece by piece (one file per concept).
#include "bindings.hpp"
#include "nn_values.hpp"

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
  bind_spawn(m);
  nb::module_ nn = m.def_submodule("nn", "ts.nn (PyTorch: torch.nn): modules, parameters, functional ops.");
  bind_nn_parameter(nn);
  bind_nn_module(nn);
  bind_nn_modules(nn);
  bind_nn_functional(nn);
  bind_models(m);
  bind_optim(m);
  bind_parallel(m);
  bind_pipelining(m);
  bind_signatures(m);
}

// Tessera's exceptions as Python ones: ts.Error is a RuntimeError carrying the C++ message, and
// ts.PluginError / ts.ConfigError derive from it, as their C++ classes do.
#include "bindings.hpp"

namespace tessera::python {

void bind_errors(nb::module_& m) {
  // nanobind tries translators newest first, so the derived classes are registered after Error.
  nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  nb::exception<PluginError> plugin_error(m, "PluginError", error);
  nb::exception<ConfigError> config_error(m, "ConfigError", error);
  // Tracebacks then say tessera.Error, the name users catch, not tessera._tessera.Error.
  for (nb::handle type : {nb::handle(error), nb::handle(plugin_error), nb::handle(config_error)})
    nb::setattr(type, "__module__", nb::str("tessera"));
  nb::setattr(
      error, "__doc__",
      nb::str("An error Tessera reports (a RuntimeError): its message names what was wrong and what was "
              "expected."));
  nb::setattr(plugin_error, "__doc__",
              nb::str("A plugin that could not be found, loaded or validated; the process keeps working."));
  nb::setattr(
      config_error, "__doc__",
      nb::str("A configuration mistake: an unknown key or a bad value, naming the key and where it came "
              "from (file, variable or call)."));
}

}  // namespace tessera::python

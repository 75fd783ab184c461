// Defect: the plugin's init (SDK 1.3) lets a C++ exception escape across the C ABI. The host must
// reject the plugin with the exception's text, not die of it, and never call finalize.
#include <cstdlib>
#include <stdexcept>

#include "bad_plugin.h"

namespace {

tessera_status throwing_init(void*, const tessera_host_info*, tessera_error*) {
  throw std::runtime_error("bad-init-throws: the device could not be opened");
}

// Would abort the test if the host called it after a failed init.
void forbidden_finalize(void*) { std::abort(); }

}  // namespace

extern "C" {
BAD_PLUGIN_QUERY("bad-init-throws", "init throws",
                 (plugin.info.init = throwing_init, plugin.info.finalize = forbidden_finalize))
}

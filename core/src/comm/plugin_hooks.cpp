// comm's side of plugin/component_hooks.hpp: what the registry tells comm when collective
// algorithms or tuners change.
#include "comm/algorithm.hpp"
#include "comm/run_collective.hpp"
#include "comm/selection.hpp"
#include "plugin/component_hooks.hpp"

namespace tessera::comm {
namespace {

const bool component_hooks_installed = (plugin::install_component_hooks({
                                            .algorithm_changed = &forget_schedules,
                                            .choices_stale = &note_algorithms_changed,
                                            .rules_naming = &rules_naming,
                                        }),
                                        true);

}  // namespace
}  // namespace tessera::comm

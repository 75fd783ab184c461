// What the registry holds of a registered component: the object that the layer owning its kind
// made of the plugin's table (dispatch::Backend, comm::CollectiveAlgorithm, comm::Tuner,
// dtensor::PlacementStrategy), untyped, so that the plugin layer stores and replaces components
// without naming the layers above it. Each owning layer installs the maker of its kinds while the
// library loads, and casts what its typed lookups get back (it alone made those objects).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "plugin/loaded_plugin.hpp"
#include "tessera/sdk/plugin.h"

namespace tessera::plugin {

struct Component {
  std::shared_ptr<const void> object;    // the owning layer's object for this kind
  const LoadedPlugin* plugin = nullptr;  // the plugin that provides it; `object` keeps it alive
  std::string prefix;                    // a placement strategy's text prefix; empty for other kinds
};

// Makes the owning layer's object of `component`, a validated table of `plugin`.
using ComponentMaker = Component (*)(const tessera_component& component,
                                     const std::shared_ptr<LoadedPlugin>& plugin);

// Installed once per kind by the layer that owns it, while the library loads. A kind outside the
// SDK's (1 to TESSERA_COMPONENT_TUNER) is an Error naming it.
void install_component_maker(int32_t kind, ComponentMaker maker);
// The maker of `kind`; a PluginError naming the kind when no layer installed one.
ComponentMaker component_maker(int32_t kind);

}  // namespace tessera::plugin

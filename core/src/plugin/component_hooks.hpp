// What the registry tells the layer that uses collective algorithms and tuners (comm) when they
// change: a schedule built by an algorithm replaced or reconfigured must be built again, and
// choices made under another tuner are stale. comm installs these when the library loads, so that
// the registry, below it, tells it without naming it; until then there is nothing to forget.
#pragma once

#include <string>
#include <vector>

namespace tessera::plugin {

struct ComponentHooks {
  // Schedules built by `algorithm` are stale (it was replaced, unloaded or given a new parameter).
  void (*algorithm_changed)(const std::string& algorithm) = nullptr;
  // The choices the rule "auto" made are stale (the tuner in force changed or was reconfigured).
  void (*choices_stale)() = nullptr;
  // The collective rules in force that name any of `algorithms`, as text; empty when none do.
  std::string (*rules_naming)(const std::vector<std::string>& algorithms) = nullptr;
};

// Installed once by comm while the library loads.
void install_component_hooks(ComponentHooks hooks);

// Calls to the installed hooks; each does nothing (rules_naming answers "") while none is installed.
void algorithm_changed(const std::string& algorithm);
void choices_stale();
std::string rules_naming(const std::vector<std::string>& algorithms);

}  // namespace tessera::plugin

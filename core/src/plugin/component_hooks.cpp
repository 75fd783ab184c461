#include "plugin/component_hooks.hpp"

#include <atomic>

namespace tessera::plugin {
namespace {

// Set while the library loads and only read after: code, not state a world could change.
// constinit, so that the installer, in another file's static initialization, finds them ready.
constinit std::atomic<void (*)(const std::string&)> algorithm_changed_hook{nullptr};
constinit std::atomic<void (*)()> choices_stale_hook{nullptr};
constinit std::atomic<std::string (*)(const std::vector<std::string>&)> rules_naming_hook{nullptr};

}  // namespace

void install_component_hooks(ComponentHooks hooks) {
  algorithm_changed_hook.store(hooks.algorithm_changed);
  choices_stale_hook.store(hooks.choices_stale);
  rules_naming_hook.store(hooks.rules_naming);
}

void algorithm_changed(const std::string& algorithm) {
  if (auto* hook = algorithm_changed_hook.load()) hook(algorithm);
}

void choices_stale() {
  if (auto* hook = choices_stale_hook.load()) hook();
}

std::string rules_naming(const std::vector<std::string>& algorithms) {
  auto* hook = rules_naming_hook.load();
  return hook != nullptr ? hook(algorithms) : std::string();
}

}  // namespace tessera::plugin

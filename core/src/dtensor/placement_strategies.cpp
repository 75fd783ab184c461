#include "dtensor/placement_strategies.hpp"

#include "plugin/component.hpp"
#include "plugin/lookup_memo.hpp"
#include "plugin/registry.hpp"

namespace tessera::dtensor {
namespace {

plugin::Component make_strategy(const tessera_component& component,
                                const std::shared_ptr<plugin::LoadedPlugin>& owner) {
  auto made = std::make_shared<const PlacementStrategy>(
      static_cast<const tessera_placement_strategy*>(component.table), owner);
  std::string prefix = made->prefix();
  return {std::move(made), owner.get(), std::move(prefix)};
}

const bool maker_installed =
    (plugin::install_component_maker(TESSERA_COMPONENT_PLACEMENT, &make_strategy), true);

// The registry holds what make_strategy made for this kind, so the cast is exact.
std::shared_ptr<const PlacementStrategy> typed(std::shared_ptr<const void> object) {
  return std::static_pointer_cast<const PlacementStrategy>(std::move(object));
}

// Placements find their strategy by name for every piece they cut (per rank and mesh dim of a
// redistribution): answered from this thread's memo (plugin/lookup_memo.hpp) while no plugin has
// changed since.
thread_local plugin::LookupMemo<PlacementStrategy> strategies;

}  // namespace

std::shared_ptr<const PlacementStrategy> placement(const std::string& name) {
  return strategies.find(name, [](plugin::Registry& registry, const std::string& key) {
    return registry.component(TESSERA_COMPONENT_PLACEMENT, key);
  });
}

std::shared_ptr<const PlacementStrategy> placement_by_prefix(const std::string& prefix) {
  for (const auto& [name, component] : plugin::Registry::instance().components(TESSERA_COMPONENT_PLACEMENT))
    if (component.prefix == prefix) return typed(component.object);
  return nullptr;
}

std::vector<std::shared_ptr<const PlacementStrategy>> placement_strategies() {
  std::vector<std::shared_ptr<const PlacementStrategy>> strategies;
  for (const auto& [name, component] : plugin::Registry::instance().components(TESSERA_COMPONENT_PLACEMENT))
    strategies.push_back(typed(component.object));
  return strategies;
}

}  // namespace tessera::dtensor

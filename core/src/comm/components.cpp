#include "comm/components.hpp"

#include "plugin/component.hpp"
#include "plugin/lookup_memo.hpp"
#include "plugin/registry.hpp"

namespace tessera::comm {
namespace {

plugin::Component make_algorithm(const tessera_component& component,
                                 const std::shared_ptr<plugin::LoadedPlugin>& owner) {
  return {std::make_shared<const CollectiveAlgorithm>(
              static_cast<const tessera_collective_algorithm*>(component.table), owner),
          owner.get(),
          {}};
}

plugin::Component make_tuner(const tessera_component& component,
                             const std::shared_ptr<plugin::LoadedPlugin>& owner) {
  return {std::make_shared<const Tuner>(static_cast<const tessera_tuner*>(component.table), owner),
          owner.get(),
          {}};
}

const bool makers_installed =
    (plugin::install_component_maker(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, &make_algorithm),
     plugin::install_component_maker(TESSERA_COMPONENT_TUNER, &make_tuner), true);

// Every collective chooses its algorithm by name (the rules in force name them): answered from
// this thread's memo (plugin/lookup_memo.hpp) while no plugin has changed since.
thread_local plugin::LookupMemo<CollectiveAlgorithm> algorithms;

}  // namespace

// The registry holds what the makers above made for these kinds, so the casts below are exact.
std::shared_ptr<const CollectiveAlgorithm> algorithm(const std::string& name) {
  return algorithms.find(name, [](plugin::Registry& registry, const std::string& key) {
    return registry.component(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, key);
  });
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& [name, unused] :
       plugin::Registry::instance().components(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM))
    names.push_back(name);
  return names;
}

std::shared_ptr<const Tuner> tuner() {
  return std::static_pointer_cast<const Tuner>(plugin::Registry::instance().tuner());
}

}  // namespace tessera::comm

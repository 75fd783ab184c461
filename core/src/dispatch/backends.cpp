#include "dispatch/backends.hpp"

#include "plugin/component.hpp"
#include "plugin/lookup_memo.hpp"
#include "plugin/registry.hpp"

namespace tessera::dispatch {
namespace {

plugin::Component make_backend(const tessera_component& component,
                               const std::shared_ptr<plugin::LoadedPlugin>& owner) {
  std::shared_ptr<const Backend> made =
      Backend::of(static_cast<const tessera_backend*>(component.table), owner);
  // A backend reloaded while tensors of it live is the Backend of its first load, whose plugin it names.
  const plugin::LoadedPlugin* provider = &made->plugin();
  return {std::move(made), provider, {}};
}

const bool maker_installed =
    (plugin::install_component_maker(TESSERA_COMPONENT_BACKEND, &make_backend), true);

// The registry holds what make_backend made for this kind, so the casts are exact. The default
// backend has a memo of its own (under the key ""), apart from the backends asked for by name.
thread_local plugin::LookupMemo<Backend> by_name;
thread_local plugin::LookupMemo<Backend> the_default;

}  // namespace

std::shared_ptr<const Backend> backend(const std::string& name) {
  return by_name.find(
      name, [](plugin::Registry& registry, const std::string& key) { return registry.backend(key); });
}

std::shared_ptr<const Backend> default_backend() {
  return the_default.find(
      {}, [](plugin::Registry& registry, const std::string&) { return registry.default_backend(); });
}

void set_backend_threads(int32_t num_threads) {
  for (const auto& [name, component] : plugin::Registry::instance().components(TESSERA_COMPONENT_BACKEND))
    std::static_pointer_cast<const Backend>(component.object)->set_num_threads(num_threads);
}

}  // namespace tessera::dispatch

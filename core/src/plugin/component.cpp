#include "plugin/component.hpp"

#include <array>
#include <atomic>

#include <fmt/format.h>

#include "plugin/validation.hpp"
#include "tessera/errors.hpp"

namespace tessera::plugin {
namespace {

constexpr int32_t kLastKind = TESSERA_COMPONENT_TUNER;

// Set while the library loads and only read after: code, not state a world could change.
// constinit, so that the installers, in other files' static initialization, find them ready.
constinit std::array<std::atomic<ComponentMaker>, kLastKind + 1> makers{};

}  // namespace

void install_component_maker(int32_t kind, ComponentMaker maker) {
  if (kind < 1 || kind > kLastKind)
    throw Error(fmt::format("install_component_maker: component kind {} is not one of the SDK's (1 to {})",
                            kind, kLastKind));
  makers[static_cast<size_t>(kind)].store(maker);
}

ComponentMaker component_maker(int32_t kind) {
  ComponentMaker maker = kind >= 1 && kind <= kLastKind ? makers[static_cast<size_t>(kind)].load() : nullptr;
  if (maker == nullptr)
    throw PluginError(fmt::format("no layer handles components of kind {} ({}): its maker is not installed",
                                  kind, component_kind_name(kind)));
  return maker;
}

}  // namespace tessera::plugin

#include "plugin/loaded_plugin.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "log/log.hpp"
#include "plugin/guarded_call.hpp"
#include "plugin/validation.hpp"
#include "tessera/errors.hpp"
#include "tessera/version.hpp"

namespace tessera::plugin {
namespace {

[[noreturn]] void reject(const std::filesystem::path& file, const std::string& reason) {
  throw PluginError(fmt::format("plugin '{}' rejected: {}", file.string(), reason));
}

void forward_plugin_log(int32_t level, const char* message) {
  if (message == nullptr) return;
  switch (level) {
    case TESSERA_LOG_DEBUG: observe::logger().debug("plugin: {}", message); break;
    case TESSERA_LOG_INFO: observe::logger().info("plugin: {}", message); break;
    case TESSERA_LOG_WARN: observe::logger().warn("plugin: {}", message); break;
    default: observe::logger().error("plugin: {}", message); break;
  }
}

}  // namespace

std::shared_ptr<LoadedPlugin> LoadedPlugin::open(const std::filesystem::path& file) {
  std::error_code fs_error;
  if (!std::filesystem::is_regular_file(file, fs_error)) reject(file, "no such file");

  std::shared_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  boost::dll::fs::error_code load_error;
  // rtld_now: an unresolved symbol fails here, with the loader's message, not at first call.
  plugin->library_.load(file, load_error, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (load_error) {
    const char* loader_message = dlerror();
    reject(file, fmt::format("cannot be loaded as a shared object: {}",
                             loader_message != nullptr ? loader_message : load_error.message()));
  }
  if (!plugin->library_.has(TESSERA_PLUGIN_QUERY_SYMBOL))
    reject(file, fmt::format("it does not export the entry point '{}' (is it a Tessera plugin?)",
                             TESSERA_PLUGIN_QUERY_SYMBOL));

  const std::string host_name = fmt::format("tessera {}", kVersion);
  tessera_host_info host{};
  host.struct_size = sizeof(host);
  host.sdk_major = TESSERA_SDK_VERSION_MAJOR;
  host.sdk_minor = TESSERA_SDK_VERSION_MINOR;
  host.host_name = host_name.c_str();
  host.log = &forward_plugin_log;
  tessera_error error{};
  error.struct_size = sizeof(error);

  auto query = plugin->library_.get<tessera_status(const tessera_host_info*, const tessera_plugin_info**,
                                                   tessera_error*)>(TESSERA_PLUGIN_QUERY_SYMBOL);
  const tessera_plugin_info* raw = nullptr;
  tessera_status status = TESSERA_INTERNAL;
  const auto call_query = [&] { status = query(&host, &raw, &error); };
  if (std::string escaped = exception_escaping(TESSERA_PLUGIN_QUERY_SYMBOL, call_query); !escaped.empty())
    reject(file, escaped);
  if (status != TESSERA_OK)
    reject(file, fmt::format("the plugin refused the host (SDK {}.{}), status {}: {}", host.sdk_major,
                             host.sdk_minor, status, error_text(error)));
  if (std::string reason = check_plugin_info(raw); !reason.empty()) reject(file, reason);

  PluginInfo& info = plugin->info_;
  info.name = raw->name;
  info.version = raw->version != nullptr ? raw->version : "";
  info.description = raw->description != nullptr ? raw->description : "";
  info.sdk_major = raw->sdk_major;
  info.sdk_minor = raw->sdk_minor;
  info.file = std::filesystem::weakly_canonical(file);
  for (size_t i = 0; i < raw->num_components; ++i) {
    const tessera_component* component = raw->components[i];
    if (std::string reason = check_component(component, i, raw->sdk_minor); !reason.empty()) reject(file, reason);
    info.components.push_back({component_kind_name(component->kind), component->name});
  }
  plugin->raw_ = raw;
  return plugin;
}

}  // namespace tessera::plugin

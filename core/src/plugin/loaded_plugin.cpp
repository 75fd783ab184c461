#include "plugin/loaded_plugin.hpp"

#include <dlfcn.h>

#include <fmt/format.h>

#include "log/log.hpp"
#include "plugin/extension_chain.hpp"
#include "plugin/guarded_call.hpp"
#include "plugin/parameter_schema.hpp"
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
    case TESSERA_LOG_DEBUG:
      observe::logger().debug("plugin: {}", message);
      break;
    case TESSERA_LOG_INFO:
      observe::logger().info("plugin: {}", message);
      break;
    case TESSERA_LOG_WARN:
      observe::logger().warn("plugin: {}", message);
      break;
    default:
      observe::logger().error("plugin: {}", message);
      break;
  }
}

// What the host tells a plugin about itself (query and init). `host_name` backs the name pointer.
tessera_host_info host_info(const std::string& host_name) {
  tessera_host_info host{};
  host.struct_size = sizeof(host);
  host.extension = nullptr;  // the host offers no extensions
  host.sdk_major = TESSERA_SDK_VERSION_MAJOR;
  host.sdk_minor = TESSERA_SDK_VERSION_MINOR;
  host.host_name = host_name.c_str();
  host.log = &forward_plugin_log;
  return host;
}

// The entry point a host of this major calls: the versioned one when the object exports it (it may
// serve several majors, plugin.h), else the one every 1.x plugin exports.
const char* entry_point_of(const boost::dll::shared_library& library, const std::filesystem::path& file) {
  static_assert(TESSERA_SDK_VERSION_MAJOR == 1, "the versioned entry point below is this major's");
  if (library.has(TESSERA_PLUGIN_QUERY_SYMBOL_V1)) return TESSERA_PLUGIN_QUERY_SYMBOL_V1;
  if (library.has(TESSERA_PLUGIN_QUERY_SYMBOL)) return TESSERA_PLUGIN_QUERY_SYMBOL;
  // Versioned entry points of other majors only: a plugin for another host.
  std::string others;
  for (int major = 2; major <= 9; ++major) {
    const std::string symbol = fmt::format("{}{}", TESSERA_PLUGIN_QUERY_SYMBOL_PREFIX, major);
    if (library.has(symbol))
      others += fmt::format("{}'{}' (SDK major {})", others.empty() ? "" : ", ", symbol, major);
  }
  if (!others.empty())
    reject(file,
           fmt::format("it exports {} but neither '{}' nor '{}', which this host (SDK {}.{}) calls: it was "
                       "built for hosts of another major",
                       others, TESSERA_PLUGIN_QUERY_SYMBOL_V1, TESSERA_PLUGIN_QUERY_SYMBOL,
                       TESSERA_SDK_VERSION_MAJOR, TESSERA_SDK_VERSION_MINOR));
  reject(file, fmt::format("it does not export the entry point '{}' (is it a Tessera plugin?)",
                           TESSERA_PLUGIN_QUERY_SYMBOL));
}

}  // namespace

std::shared_ptr<LoadedPlugin> LoadedPlugin::open(const std::filesystem::path& file) {
  std::error_code fs_error;
  if (!std::filesystem::is_regular_file(file, fs_error)) reject(file, "no such file");

  std::shared_ptr<LoadedPlugin> plugin(new LoadedPlugin());
  boost::dll::fs::error_code load_error;
  // rtld_now: an unresolved symbol fails here, with the loader's message, not at first call.
  plugin->library_.load(file, load_error,
                        boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (load_error) {
    const char* loader_message = dlerror();
    reject(file, fmt::format("cannot be loaded as a shared object: {}",
                             loader_message != nullptr ? loader_message : load_error.message()));
  }
  const char* entry_point = entry_point_of(plugin->library_, file);

  const std::string host_name = fmt::format("tessera {}", kVersion);
  const tessera_host_info host = host_info(host_name);
  tessera_error error{};
  error.struct_size = sizeof(error);

  auto query =
      plugin->library_
          .get<tessera_status(const tessera_host_info*, const tessera_plugin_info**, tessera_error*)>(
              entry_point);
  const tessera_plugin_info* raw = nullptr;
  tessera_status status = TESSERA_INTERNAL;
  const auto call_query = [&] { status = query(&host, &raw, &error); };
  if (std::string escaped = exception_escaping(entry_point, call_query); !escaped.empty())
    reject(file, escaped);
  if (status != TESSERA_OK)
    reject(file, fmt::format("the plugin refused the host (SDK {}.{}), status {}: {}", host.sdk_major,
                             host.sdk_minor, status_text(status), error_text(error)));
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
    if (std::string reason = check_component(component, i, raw->sdk_minor); !reason.empty())
      reject(file, reason);
    info.components.push_back({component_kind_name(component->kind), component->name});
  }
  if (raw->sdk_minor >= kFirstMinorWithExtensionChains)
    if (std::string reason = check_extension_chains(*raw); !reason.empty()) reject(file, reason);
  if (std::string reason = read_parameter_schema(*raw, info.parameters); !reason.empty())
    reject(file, reason);
  info.declares_parameters = !info.parameters.empty();
  plugin->raw_ = raw;
  plugin->lifecycle_ = plugin_lifecycle(*raw);
  return plugin;
}

void LoadedPlugin::start() {
  if (started_) return;
  if (lifecycle_.init != nullptr) {
    const std::string host_name = fmt::format("tessera {}", kVersion);
    const tessera_host_info host = host_info(host_name);
    tessera_error error{};
    error.struct_size = sizeof(error);
    tessera_status status = TESSERA_INTERNAL;
    const auto call_init = [&] { status = lifecycle_.init(lifecycle_.context, &host, &error); };
    if (std::string escaped = exception_escaping("init", call_init); !escaped.empty())
      throw PluginError(fmt::format("plugin '{}' rejected: {}", info_.file.string(), escaped));
    if (status != TESSERA_OK)
      throw PluginError(fmt::format("plugin '{}' rejected: its init refused, status {}: {}",
                                    info_.file.string(), status_text(status), error_text(error)));
  }
  started_ = true;
}

LoadedPlugin::~LoadedPlugin() { finalize_now(); }

void LoadedPlugin::finalize_now() noexcept {
  if (!started_ || lifecycle_.finalize == nullptr || finalized_.exchange(true, std::memory_order_acq_rel))
    return;
  // Nothing can report from here (a destructor, or the exit handler): what escapes finalize (which
  // must not fail) is logged.
  try {
    const auto call_finalize = [&] { lifecycle_.finalize(lifecycle_.context); };
    if (std::string escaped = exception_escaping("finalize", call_finalize); !escaped.empty())
      observe::logger().error("plugin '{}': {}", info_.name, escaped);
  } catch (...) {  // formatting or logging failed: nothing more can be said
  }
}

std::string LoadedPlugin::set_parameter(const std::string& key, const std::string& value) {
  tessera_error error{};
  error.struct_size = sizeof(error);
  tessera_status status = TESSERA_INTERNAL;
  const auto call = [&] {
    status = lifecycle_.set_parameter(lifecycle_.context, key.c_str(), value.c_str(), &error);
  };
  if (std::string escaped = exception_escaping("set_parameter", call); !escaped.empty()) return escaped;
  return status == TESSERA_OK ? std::string() : error_text(error);
}

}  // namespace tessera::plugin

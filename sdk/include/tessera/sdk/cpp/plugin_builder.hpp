// Header-only helper that describes a plugin and defines its entry point.
//
//   static void describe(tessera::sdk::PluginBuilder& plugin) {
//     static tessera::sdk::BackendBuilder cpu("cpu", kDLCPU);
//     ... cpu.kernel<...>(...) ...
//     plugin.add_backend(cpu);
//   }
//   TESSERA_DEFINE_PLUGIN("backend-cpu", "0.1.0", "CPU kernels on OpenBLAS", describe)
//
// The macro exports tessera_plugin_query (the only symbol a plugin exports), builds the
// description once, and refuses a host whose SDK major version differs from the plugin's.
//
// SDK 1.3 lifecycle and parameters, set up in `describe`:
//   plugin.on_init([](const tessera_host_info& host) { ... throw tessera::sdk::Error(...) to refuse ... });
//   plugin.on_finalize([] { ... });
//   static const auto& group_size = plugin.parameter<int64_t>("group_size", 2, tessera::sdk::integer_at_least(1));
//   ... group_size.get() in check/build, from any thread ...
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/sdk/cpp/algorithm_builder.hpp"
#include "tessera/sdk/cpp/backend_builder.hpp"
#include "tessera/sdk/cpp/parse.hpp"
#include "tessera/sdk/cpp/placement_builder.hpp"
#include "tessera/sdk/cpp/transport_builder.hpp"
#include "tessera/sdk/plugin.h"

namespace tessera::sdk {

// A configuration parameter's current value. The host sets it from one thread while the plugin's
// other functions may read it on others, hence the mutex (T may be a string, so no atomic).
template <class T>
class Parameter {
 public:
  explicit Parameter(T initial) : value_(std::move(initial)) {}
  T get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }
  void set(T value) {
    std::lock_guard lock(mutex_);
    value_ = std::move(value);
  }

 private:
  mutable std::mutex mutex_;
  T value_;
};

// Parsers for PluginBuilder::parameter: each turns the host's text into a value or throws
// sdk::Error naming the parameter, the text and what was expected.
inline std::function<int64_t(const std::string&, const std::string&)> integer_at_least(int64_t least) {
  return [least](const std::string& name, const std::string& text) { return parse_integer(text, name, least); };
}
inline std::function<int64_t(const std::string&, const std::string&)> integer_in(int64_t least, int64_t most) {
  return [least, most](const std::string& name, const std::string& text) {
    return parse_integer(text, name, least, most);
  };
}
inline std::function<double(const std::string&, const std::string&)> non_negative_number() {
  return [](const std::string& name, const std::string& text) { return parse_non_negative(text, name); };
}
inline std::function<bool(const std::string&, const std::string&)> boolean() {
  return [](const std::string& name, const std::string& text) {
    if (text == "true" || text == "1") return true;
    if (text == "false" || text == "0") return false;
    throw Error(TESSERA_INVALID_ARGUMENT, name + " must be true or false, got '" + text + "'");
  };
}
inline std::function<std::string(const std::string&, const std::string&)> any_text() {
  return [](const std::string&, const std::string& text) { return text; };
}

class PluginBuilder {
 public:
  PluginBuilder(const char* name, const char* version, const char* description) {
    info_.struct_size = sizeof(tessera_plugin_info);
    info_.sdk_major = TESSERA_SDK_VERSION_MAJOR;
    info_.sdk_minor = TESSERA_SDK_VERSION_MINOR;
    info_.name = name;
    info_.version = version;
    info_.description = description;
  }
  PluginBuilder(const PluginBuilder&) = delete;
  PluginBuilder& operator=(const PluginBuilder&) = delete;

  // `table` must outlive the plugin (a static).
  PluginBuilder& add_component(int32_t kind, const char* name, const void* table) {
    components_.push_back(tessera_component{sizeof(tessera_component), nullptr, kind, name, table, 0});
    component_pointers_.push_back(&components_.back());
    info_.num_components = component_pointers_.size();
    info_.components = component_pointers_.data();
    return *this;
  }
  // SDK 1.3: marks the component added last as replacing a loaded one of the same name
  // (TESSERA_COMPONENT_OVERRIDES); the host allows it only when configured to.
  PluginBuilder& overriding() {
    if (!components_.empty()) components_.back().flags |= TESSERA_COMPONENT_OVERRIDES;
    return *this;
  }
  PluginBuilder& add_backend(const BackendBuilder& backend) {
    return add_component(TESSERA_COMPONENT_BACKEND, backend.table()->name, backend.table());
  }

  PluginBuilder& add_algorithm(const AlgorithmBuilder& algorithm) {
    return add_component(TESSERA_COMPONENT_COLLECTIVE_ALGORITHM, algorithm.table()->name, algorithm.table());
  }

  PluginBuilder& add_placement(const PlacementBuilder& placement) {
    return add_component(TESSERA_COMPONENT_PLACEMENT, placement.table()->name, placement.table());
  }

  // A transport table (SDK 1.1), e.g. TransportBuilder<Impl>::table().
  PluginBuilder& add_transport(const tessera_transport* transport) {
    return add_component(TESSERA_COMPONENT_TRANSPORT, transport->name, transport);
  }

  // SDK 1.3: called once when the host has accepted the plugin; throwing sdk::Error refuses the
  // host with that message.
  PluginBuilder& on_init(std::function<void(const tessera_host_info&)> init) {
    init_ = std::move(init);
    info_.context = this;
    info_.init = &init_entry;
    return *this;
  }
  // SDK 1.3: called once before the shared object is unloaded; must not throw (what it throws is
  // dropped, the host cannot act on it).
  PluginBuilder& on_finalize(std::function<void()> finalize) {
    finalize_ = std::move(finalize);
    info_.context = this;
    info_.finalize = &finalize_entry;
    return *this;
  }
  // SDK 1.3: a parameter the host sets from [plugins.<plugin name>] or TESSERA_PLUGIN_PARAMS.
  // `parse(name, text)` returns the value or throws sdk::Error saying what is wrong; the value is
  // only changed when it succeeds. The returned reference lives as long as the builder.
  template <class T>
  const Parameter<T>& parameter(const char* name, T initial,
                                std::function<T(const std::string&, const std::string&)> parse) {
    auto value = std::make_shared<Parameter<T>>(std::move(initial));
    parameters_.push_back({name, [value, parse = std::move(parse), key = std::string(name)](const std::string& text) {
                             value->set(parse(key, text));
                           }});
    values_.push_back(value);
    info_.context = this;
    info_.set_parameter = &set_parameter_entry;
    return *value;
  }

  const tessera_plugin_info* info() const { return &info_; }

 private:
  struct NamedParameter {
    std::string name;
    std::function<void(const std::string&)> set;
  };
  static PluginBuilder& self(void* context) { return *static_cast<PluginBuilder*>(context); }

  static tessera_status init_entry(void* context, const tessera_host_info* host, tessera_error* error) {
    return guarded(error, [&] { self(context).init_(*host); });
  }
  static void finalize_entry(void* context) {
    tessera_error ignored{};
    ignored.struct_size = sizeof(ignored);
    guarded(&ignored, [&] { self(context).finalize_(); });
  }
  static tessera_status set_parameter_entry(void* context, const char* key, const char* value, tessera_error* error) {
    return guarded(error, [&] {
      std::string known;
      for (const NamedParameter& parameter : self(context).parameters_) {
        if (parameter.name == key) return parameter.set(value);
        known += (known.empty() ? "" : ", ") + parameter.name;
      }
      throw Error(TESSERA_INVALID_ARGUMENT, "unknown parameter '" + std::string(key) + "'; known: " + known);
    });
  }

  tessera_plugin_info info_{};
  std::function<void(const tessera_host_info&)> init_;
  std::function<void()> finalize_;
  std::deque<NamedParameter> parameters_;
  std::vector<std::shared_ptr<void>> values_;  // owns every Parameter<T>
  std::deque<tessera_component> components_;
  std::vector<const tessera_component*> component_pointers_;
};

inline tessera_status answer_query(const tessera_host_info* host, const tessera_plugin_info* info,
                                   const tessera_plugin_info** out, tessera_error* error) {
  if (host == nullptr || out == nullptr)
    return report(error, TESSERA_INVALID_ARGUMENT, "tessera_plugin_query: host or out is NULL");
  if (host->sdk_major != TESSERA_SDK_VERSION_MAJOR) {
    const std::string message = "plugin '" + std::string(info->name) + "' needs SDK major " +
                                std::to_string(TESSERA_SDK_VERSION_MAJOR) + ", host offers " +
                                std::to_string(host->sdk_major);
    return report(error, TESSERA_VERSION_MISMATCH, message.c_str());
  }
  *out = info;
  return TESSERA_OK;
}

}  // namespace tessera::sdk

#define TESSERA_DEFINE_PLUGIN(NAME, VERSION, DESCRIPTION, DESCRIBE)                                 \
  extern "C" __attribute__((visibility("default"))) tessera_status tessera_plugin_query(           \
      const tessera_host_info* host, const tessera_plugin_info** info, tessera_error* error) {      \
    return ::tessera::sdk::guarded(error, [&] {                                                     \
      static ::tessera::sdk::PluginBuilder plugin(NAME, VERSION, DESCRIPTION);                      \
      static const bool described = (DESCRIBE(plugin), true);                                       \
      (void)described;                                                                              \
      tessera_status status = ::tessera::sdk::answer_query(host, plugin.info(), info, error);       \
      if (status != TESSERA_OK) throw ::tessera::sdk::Error(status, error->message);                \
    });                                                                                             \
  }

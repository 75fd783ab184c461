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
//   static const auto& group_size = plugin.parameter<int64_t>("group_size", 2,
//   tessera::sdk::integer_at_least(1));
//   ... group_size.get() in check/build, from any thread ...
//
// SDK 1.5 declared parameters (the parameter schema: the host checks values against it, and
// `tessera plugins --params` lists it); a plugin declares all its parameters this way or none:
//   static const auto& chunk = plugin.integer_parameter("chunk_bytes", 65536, 1, INT64_MAX,
//                                                       "Bytes per pipelined piece of a message.");
#pragma once

#include <cstdio>
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
#include "tessera/sdk/tuner.h"

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
  return
      [least](const std::string& name, const std::string& text) { return parse_integer(text, name, least); };
}
inline std::function<int64_t(const std::string&, const std::string&)> integer_in(int64_t least,
                                                                                 int64_t most) {
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

  // SDK 1.5: a tuner table (tuner.h), a static the plugin fills.
  PluginBuilder& add_tuner(const tessera_tuner* tuner) {
    return add_component(TESSERA_COMPONENT_TUNER, tuner->name, tuner);
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
    choose_style(name, /*declared=*/false);
    return add_parameter(name, std::move(initial), std::move(parse));
  }

  // SDK 1.5: declared parameters, each with its type, default, valid values and help text (see
  // tessera_parameter). The returned reference lives as long as the builder.
  const Parameter<int64_t>& integer_parameter(const char* name, int64_t initial, int64_t minimum,
                                              int64_t maximum, const char* help) {
    tessera_parameter& declared = declare(name, TESSERA_PARAMETER_INTEGER, std::to_string(initial), help);
    declared.integer_min = minimum;
    declared.integer_max = maximum;
    return declared_value<int64_t>(name, initial,
                                   [minimum, maximum](const std::string& key, const std::string& text) {
                                     return parse_integer(text, key, minimum, maximum);
                                   });
  }
  const Parameter<double>& real_parameter(const char* name, double initial, double minimum, double maximum,
                                          const char* help) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.17g", initial);  // exactly the double's value again when parsed
    tessera_parameter& declared = declare(name, TESSERA_PARAMETER_REAL, text, help);
    declared.real_min = minimum;
    declared.real_max = maximum;
    return declared_value<double>(name, initial,
                                  [minimum, maximum](const std::string& key, const std::string& text) {
                                    return parse_real(text, key, minimum, maximum);
                                  });
  }
  const Parameter<bool>& boolean_parameter(const char* name, bool initial, const char* help) {
    declare(name, TESSERA_PARAMETER_BOOLEAN, initial ? "true" : "false", help);
    return declared_value<bool>(name, initial, boolean());
  }
  const Parameter<std::string>& text_parameter(const char* name, std::string initial, const char* help) {
    declare(name, TESSERA_PARAMETER_TEXT, initial, help);
    return declared_value<std::string>(name, std::move(initial), any_text());
  }
  const Parameter<std::string>& choice_parameter(const char* name, std::string initial,
                                                 std::vector<std::string> choices, const char* help) {
    tessera_parameter& declared = declare(name, TESSERA_PARAMETER_CHOICE, initial, help);
    Declaration& declaration = declarations_.back();
    declaration.choice_texts = std::move(choices);
    for (const std::string& choice : declaration.choice_texts)
      declaration.choice_pointers.push_back(choice.c_str());
    declared.num_choices = declaration.choice_pointers.size();
    declared.choices = declaration.choice_pointers.data();
    const std::vector<std::string>& valid = declaration.choice_texts;  // in the deque: stays put
    return declared_value<std::string>(
        name, std::move(initial), [&valid](const std::string& key, const std::string& text) {
          std::string listed;
          for (const std::string& choice : valid) {
            if (choice == text) return text;
            listed += (listed.empty() ? "" : ", ") + choice;
          }
          throw Error(TESSERA_INVALID_ARGUMENT, key + " must be one of: " + listed + ", got '" + text + "'");
        });
  }

  const tessera_plugin_info* info() const { return &info_; }

 private:
  struct NamedParameter {
    std::string name;
    std::function<void(const std::string&)> set;
  };
  // A declared parameter's table and the texts it points into (a deque: addresses stay put).
  struct Declaration {
    tessera_parameter table{};
    std::string name, default_text, help;
    std::vector<std::string> choice_texts;
    std::vector<const char*> choice_pointers;
  };

  tessera_parameter& declare(const char* name, int32_t type, std::string default_text, const char* help) {
    Declaration& declaration = declarations_.emplace_back();
    declaration.name = name;
    declaration.default_text = std::move(default_text);
    declaration.help = help != nullptr ? help : "";
    tessera_parameter& table = declaration.table;
    table.struct_size = sizeof(tessera_parameter);
    table.name = declaration.name.c_str();
    table.type = type;
    table.default_value = declaration.default_text.c_str();
    table.help = declaration.help.c_str();
    declared_pointers_.push_back(&table);
    info_.num_parameters = declared_pointers_.size();
    info_.parameters = declared_pointers_.data();
    return table;
  }
  template <class T>
  const Parameter<T>& declared_value(const char* name, T initial,
                                     std::function<T(const std::string&, const std::string&)> parse) {
    choose_style(name, /*declared=*/true);
    return add_parameter(name, std::move(initial), std::move(parse));
  }
  // A plugin declares all its parameters (integer_parameter and the like: the host then refuses
  // keys outside the schema) or none (parameter()).
  void choose_style(const char* name, bool declared) {
    (declared ? declaring_ : undeclared_) = true;
    if (declaring_ && undeclared_)
      throw Error(TESSERA_INVALID_ARGUMENT,
                  std::string("parameter '") + name +
                      "': a plugin declares all its parameters (integer_parameter, ...) "
                      "or none (parameter()), not some of them");
  }
  template <class T>
  const Parameter<T>& add_parameter(const char* name, T initial,
                                    std::function<T(const std::string&, const std::string&)> parse) {
    auto value = std::make_shared<Parameter<T>>(std::move(initial));
    parameters_.push_back({name, [value, parse = std::move(parse), key = std::string(name)](
                                     const std::string& text) { value->set(parse(key, text)); }});
    values_.push_back(value);
    info_.context = this;
    info_.set_parameter = &set_parameter_entry;
    return *value;
  }

  static PluginBuilder& self(void* context) { return *static_cast<PluginBuilder*>(context); }

  static tessera_status init_entry(void* context, const tessera_host_info* host, tessera_error* error) {
    return guarded(error, [&] { self(context).init_(*host); });
  }
  static void finalize_entry(void* context) {
    tessera_error ignored{};
    ignored.struct_size = sizeof(ignored);
    guarded(&ignored, [&] { self(context).finalize_(); });
  }
  static tessera_status set_parameter_entry(void* context, const char* key, const char* value,
                                            tessera_error* error) {
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
  std::deque<Declaration> declarations_;
  std::vector<const tessera_parameter*> declared_pointers_;
  bool declaring_ = false;   // integer_parameter() and the like were used
  bool undeclared_ = false;  // parameter() was used
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

// Exports tessera_plugin_query and, for SDK 1.5 hosts and later, the same entry point under its
// versioned name tessera_plugin_query_v<major> (plugin.h).
#define TESSERA_DEFINE_PLUGIN(NAME, VERSION, DESCRIPTION, DESCRIBE)                            \
  extern "C" __attribute__((visibility("default"))) tessera_status tessera_plugin_query(       \
      const tessera_host_info* host, const tessera_plugin_info** info, tessera_error* error) { \
    return ::tessera::sdk::guarded(error, [&] {                                                \
      static ::tessera::sdk::PluginBuilder plugin(NAME, VERSION, DESCRIPTION);                 \
      static const bool described = (DESCRIBE(plugin), true);                                  \
      (void)described;                                                                         \
      tessera_status status = ::tessera::sdk::answer_query(host, plugin.info(), info, error);  \
      if (status != TESSERA_OK) throw ::tessera::sdk::Error(status, error->message);           \
    });                                                                                        \
  }                                                                                            \
  extern "C" __attribute__((visibility("default"))) tessera_status tessera_plugin_query_v1(    \
      const tessera_host_info* host, const tessera_plugin_info** info, tessera_error* error) { \
    return tessera_plugin_query(host, info, error);                                            \
  }

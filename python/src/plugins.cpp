// Plugins, backends and configuration from Python: ts.load_plugin / ts.unload_plugin /
// ts.loaded_plugins / ts.discover_plugins, ts.backend_names / ts.default_backend,
// ts.backend_capabilities, and ts.Config / ts.configure. Failures come out as ts.PluginError and
// ts.ConfigError (registered by bind_errors).
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace tessera::python {
namespace {

std::string kind_of(nb::handle value) {
  return nb::cast<std::string>(nb::str(value.type().attr("__name__")));
}
std::string repr_of(nb::handle value) { return nb::cast<std::string>(nb::repr(value)); }

[[noreturn]] void bad_value(const std::string& key, const char* expected, nb::handle value) {
  throw ConfigError("configure: " + key + " must be " + expected + ", got " + kind_of(value) + " " +
                    repr_of(value));
}

std::string text_value(const std::string& key, nb::handle value) {
  if (!PyUnicode_Check(value.ptr()) && !nb::isinstance<std::filesystem::path>(value) &&
      !nb::hasattr(value, "__fspath__"))
    bad_value(key, "a string", value);
  return nb::cast<std::string>(nb::str(value));
}

int64_t int_value(const std::string& key, nb::handle value) {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) bad_value(key, "an int", value);
  return nb::cast<int64_t>(nb::steal(PyNumber_Index(value.ptr())));
}

bool bool_value(const std::string& key, nb::handle value) {
  if (!PyBool_Check(value.ptr())) bad_value(key, "True or False", value);
  return value.ptr() == Py_True;
}

std::vector<std::string> list_value(const std::string& key, nb::handle value) {
  // A lone string is one entry, not a sequence of characters.
  if (PyUnicode_Check(value.ptr())) return {nb::cast<std::string>(value)};
  if (!PySequence_Check(value.ptr())) bad_value(key, "a list of strings", value);
  std::vector<std::string> out;
  for (nb::handle item : nb::iter(value)) out.push_back(text_value(key + " entry", item));
  return out;
}

// A plugin parameter's value as the TOML file would give it to the plugin: as text.
std::string parameter_text(const std::string& key, nb::handle value) {
  if (PyBool_Check(value.ptr())) return value.ptr() == Py_True ? "true" : "false";
  if (PyUnicode_Check(value.ptr()) || PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr()))
    return nb::cast<std::string>(nb::str(value));
  bad_value(key, "a string, int, float or bool", value);
}

using Setter = std::function<void(Config&, const std::string&, nb::handle)>;

// Every key users may set, by its keyword name; the [section] key of tessera.toml in the comment.
const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"default_backend", [](Config& c, const std::string& k,
                             nb::handle v) { c.default_backend = text_value(k, v); }},  // [backend] default
      {"log_level",
       [](Config& c, const std::string& k, nb::handle v) { c.log_level = text_value(k, v); }},  // [log] level
      {"threads",
       [](Config& c, const std::string& k, nb::handle v) {
         c.threads = static_cast<int>(int_value(k, v));
       }},                       // [execution] threads
      {"collective_algorithms",  // [collectives] algorithms
       [](Config& c, const std::string& k, nb::handle v) { c.collective_algorithms = text_value(k, v); }},
      {"collective_tuner",  // [collectives] tuner
       [](Config& c, const std::string& k, nb::handle v) { c.collective_tuner = text_value(k, v); }},
      {"topology", [](Config& c, const std::string& k,
                      nb::handle v) { c.topology = text_value(k, v); }},  // [topology] preset
      {"trace_file", [](Config& c, const std::string& k,
                        nb::handle v) { c.trace_file = text_value(k, v); }},  // [trace] file
      {"plugin_search_path",                                                  // [plugins] search_path
       [](Config& c, const std::string& k, nb::handle v) {
         c.plugin_search_path.clear();
         for (const std::string& dir : list_value(k, v)) c.plugin_search_path.emplace_back(dir);
       }},
      {"plugins_to_load", [](Config& c, const std::string& k,
                             nb::handle v) { c.plugins_to_load = list_value(k, v); }},  // [plugins] load
      {"plugin_allow_override",  // [plugins] allow_override
       [](Config& c, const std::string& k, nb::handle v) { c.plugin_allow_override = bool_value(k, v); }},
      {"plugin_parameters",  // [plugins.<name>] key = value
       [](Config& c, const std::string& k, nb::handle v) {
         if (!PyDict_Check(v.ptr())) bad_value(k, "a dict {plugin: {key: value}}", v);
         c.plugin_parameters.clear();
         for (auto [plugin, params] : nb::cast<nb::dict>(v)) {
           const std::string name = text_value(k + " plugin name", plugin);
           if (!PyDict_Check(params.ptr())) bad_value(k + "['" + name + "']", "a dict {key: value}", params);
           for (auto [key, value] : nb::cast<nb::dict>(params)) {
             const std::string key_text = text_value(k + "['" + name + "'] key", key);
             c.plugin_parameters[name][key_text] =
                 parameter_text(k + "['" + name + "']['" + key_text + "']", value);
             c.plugin_parameter_origins[name + "." + key_text] = "ts.configure(plugin_parameters=...)";
           }
         }
       }},
      {"world_transport", [](Config& c, const std::string& k,
                             nb::handle v) { c.world_transport = text_value(k, v); }},  // [world] transport
      {"ranks_per_process",  // [world] ranks_per_process
       [](Config& c, const std::string& k, nb::handle v) {
         c.ranks_per_process = static_cast<int>(int_value(k, v));
       }},
      {"world_timeout",  // [world] timeout: "60s", "250ms", or seconds as a number
       [](Config& c, const std::string& k, nb::handle v) {
         c.world_timeout_ms = parse_timeout(
             PyUnicode_Check(v.ptr()) ? nb::cast<std::string>(v) : nb::cast<std::string>(nb::str(v)), k);
       }},
      {"check_collectives",  // [world] check_collectives; None = the build's default
       [](Config& c, const std::string& k, nb::handle v) {
         if (v.is_none())
           c.check_collectives.reset();
         else
           c.check_collectives = bool_value(k, v);
       }},
  };
  return table;
}

std::string known_keys() {
  std::string out;
  for (const auto& [key, setter] : setters()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

void apply_keywords(Config& config, const nb::kwargs& kwargs) {
  for (auto [key, value] : kwargs) {
    const std::string name = nb::cast<std::string>(key);
    const auto it = setters().find(name);
    if (it == setters().end())
      throw ConfigError("configure: unknown key '" + name + "'; the keys are " + known_keys());
    it->second(config, name, value);
  }
}

nb::object probe_info(const PluginProbe& probe) { return probe.accepted ? nb::cast(probe.info) : nb::none(); }

}  // namespace

void bind_plugins(nb::module_& m) {
  nb::class_<ComponentInfo>(m, "ComponentInfo", "One thing a plugin provides: its kind and name.")
      .def_ro("kind", &ComponentInfo::kind,
              "'backend', 'collective', 'placement', 'transport' (or 'unknown')")
      .def_ro("name", &ComponentInfo::name)
      .def("__repr__", [](const ComponentInfo& c) {
        return "ComponentInfo(kind='" + c.kind + "', name='" + c.name + "')";
      });
  nb::class_<PluginInfo>(m, "PluginInfo",
                         "A plugin: name, version, what it provides and the file it came from.")
      .def_ro("name", &PluginInfo::name)
      .def_ro("version", &PluginInfo::version)
      .def_ro("description", &PluginInfo::description)
      .def_prop_ro("sdk_version",
                   [](const PluginInfo& p) { return nb::make_tuple(p.sdk_major, p.sdk_minor); })
      .def_prop_ro("file", [](const PluginInfo& p) { return p.file.string(); })
      .def_ro("components", &PluginInfo::components)
      .def("__repr__", [](const PluginInfo& p) {
        return "PluginInfo(name='" + p.name + "', version='" + p.version + "', file='" + p.file.string() +
               "')";
      });
  nb::class_<PluginProbe>(m, "PluginProbe",
                          "The outcome of trying one plugin file: accepted, or the reason it was not.")
      .def_prop_ro("file", [](const PluginProbe& p) { return p.file.string(); })
      .def_ro("accepted", &PluginProbe::accepted)
      .def_prop_ro("info", &probe_info, "The plugin's PluginInfo when accepted; None otherwise.")
      .def_ro("reason", &PluginProbe::reason, "Why it was rejected ('' when accepted).")
      .def("__repr__", [](const PluginProbe& p) {
        return "PluginProbe(file='" + p.file.string() + "', accepted=" + (p.accepted ? "True" : "False") +
               (p.accepted ? "" : ", reason='" + p.reason + "'") + ")";
      });

  m.def(
      "load_plugin",
      [](const std::string& name_or_path) { return without_gil([&] { return load_plugin(name_or_path); }); },
      nb::arg("name_or_path"),
      "Loads a plugin by name ('backend-cpu', found on the search path) or by path; ts.PluginError when it "
      "is "
      "missing or rejected (the process keeps working).");
  m.def(
      "unload_plugin", [](const std::string& name) { without_gil([&] { unload_plugin(name); }); },
      nb::arg("name"),
      "Removes a loaded plugin's components (one it had overridden comes back); its library stays mapped "
      "until the last tensor made from it is gone.");
  m.def("loaded_plugins", &loaded_plugins, "The PluginInfo of every plugin loaded now.");
  m.def(
      "discover_plugins", [] { return without_gil([] { return discover_plugins(); }); },
      "Tries every libtessera-*.so on the search path without registering anything.");
  m.def(
      "probe_plugin", [](const std::string& file) { return without_gil([&] { return probe_plugin(file); }); },
      nb::arg("file"),
      "Tries one plugin file without registering it: a PluginProbe saying whether load_plugin would accept "
      "it, or why not.");
  m.def(
      "plugin_search_path",
      [] {
        std::vector<std::string> out;
        for (const auto& dir : plugin_search_path()) out.push_back(dir.string());
        return out;
      },
      "The directories searched for plugins, in order: TESSERA_PLUGIN_PATH, the configured search path, "
      "then the plugin directory beside the Tessera library.");
  m.def("backend_names", &backend_names, "The names of the registered backends (devices), e.g. ['cpu'].");
  m.def("default_backend", &default_backend, "The backend factories use when no device is given.");
  m.def(
      "set_default_backend", [](const std::string& name) { without_gil([&] { set_default_backend(name); }); },
      nb::arg("name"),
      "Makes `name` the backend factories use by default, loading its plugin when needed; an error when "
      "there is no such backend.");
  m.def(
      "transport_names", [] { return without_gil([] { return transport_names(); }); },
      "The names of the registered transports (which move data between processes), after loading every "
      "transport plugin on the search path.");
  m.def("set_num_threads", &set_threads, nb::arg("threads"),
        "Threads running ranks in parallel (0 = one per hardware thread); results are the same for every "
        "count.");
  m.def("get_num_threads", &threads, "Threads running ranks in parallel (0 = one per hardware thread).");

  nb::class_<BackendCapabilities>(m, "BackendCapabilities",
                                  "What a backend can run, against the kernel catalogue.")
      .def_ro("backend", &BackendCapabilities::backend)
      .def_ro("plugin", &BackendCapabilities::plugin)
      .def_ro("shapes_only", &BackendCapabilities::shapes_only)
      .def_prop_ro("ops",
                   [](const BackendCapabilities& c) {
                     nb::dict out;  // op name -> the dtypes it has a kernel for
                     for (const auto& op : c.ops) out[nb::str(op.name.c_str())] = nb::cast(op.dtypes);
                     return out;
                   })
      .def_ro("missing_ops", &BackendCapabilities::missing_ops)
      .def_ro("catalogue_size", &BackendCapabilities::catalogue_size)
      .def_prop_ro("unserved_calls",
                   [](const BackendCapabilities& c) {
                     nb::list out;
                     for (const auto& call : c.unserved_calls) {
                       nb::dict row;
                       row["call"] = call.call;
                       row["variant"] = call.variant;
                       row["missing"] = nb::cast(call.missing);
                       out.append(row);
                     }
                     return out;
                   })
      .def("__repr__", [](const BackendCapabilities& c) {
        return "BackendCapabilities(backend='" + c.backend + "', plugin='" + c.plugin +
               "', ops=" + std::to_string(c.ops.size()) + "/" + std::to_string(c.catalogue_size) + ")";
      });
  m.def(
      "backend_capabilities",
      [](const std::string& name) { return without_gil([&] { return backend_capabilities(name); }); },
      nb::arg("backend"),
      "What the named backend can run against the kernel catalogue (loading its plugin when needed); an "
      "error "
      "naming the available backends when there is none of that name.");

  nb::class_<Config>(
      m, "Config",
      "A configuration, as tessera.toml holds it: ts.Config(threads=2, ...), Config.from_file(path), "
      "Config.from_string(toml), Config.from_environment(); apply it with ts.configure(config).")
      .def("__init__",
           [](Config* self, nb::kwargs kwargs) {
             Config config;
             apply_keywords(config, kwargs);
             new (self) Config(std::move(config));
           })
      .def_static(
          "from_file", [](const std::string& path) { return Config::from_file(path); }, nb::arg("path"),
          "Reads a tessera.toml file; a ts.ConfigError names the file, line and key of a mistake.")
      .def_static(
          "from_string",
          [](const std::string& toml, const std::string& source_name) {
            return Config::from_string(toml, source_name);
          },
          nb::arg("toml"), nb::arg("source_name") = "<string>",
          "Parses TOML text as a tessera.toml file; errors name source_name as the file.")
      .def_static("from_environment", &Config::from_environment,
                  "TESSERA_CONFIG's file when that variable is set, else the defaults (the other TESSERA_* "
                  "variables are not applied: see with_environment).")
      .def(
          "with_environment", [](const Config& c) { return with_environment(c); },
          "This configuration with every TESSERA_* variable that is set put over it.")
      .def_prop_ro("plugin_search_path",
                   [](const Config& c) {
                     std::vector<std::string> out;
                     for (const auto& dir : c.plugin_search_path) out.push_back(dir.string());
                     return out;
                   })
      .def_ro("plugins_to_load", &Config::plugins_to_load)
      .def_ro("plugin_allow_override", &Config::plugin_allow_override)
      .def_ro("plugin_parameters", &Config::plugin_parameters)
      .def_ro("default_backend", &Config::default_backend)
      .def_ro("log_level", &Config::log_level)
      .def_ro("threads", &Config::threads)
      .def_ro("collective_algorithms", &Config::collective_algorithms)
      .def_ro("collective_tuner", &Config::collective_tuner)
      .def_ro("topology", &Config::topology)
      .def_prop_ro("trace_file", [](const Config& c) { return c.trace_file.string(); })
      .def_ro("world_transport", &Config::world_transport)
      .def_ro("ranks_per_process", &Config::ranks_per_process)
      .def_ro("world_timeout_ms", &Config::world_timeout_ms)
      .def_ro("check_collectives", &Config::check_collectives)
      .def_prop_ro(
          "source", [](const Config& c) { return c.source.string(); },
          "The file it was read from ('' if none).")
      .def_static("current", &current_config,
                  "The configuration in force (ts.configure's last, or the environment's).")
      .def(
          "replace",
          [](const Config& c, nb::kwargs kwargs) {
            Config out = c;
            apply_keywords(out, kwargs);
            return out;
          },
          "A copy with the given keys changed, e.g. config.replace(threads=2).")
      .def("__repr__", [](const Config& c) {
        return "Config(default_backend='" + c.default_backend + "', log_level='" + c.log_level +
               "', threads=" + std::to_string(c.threads) + ", topology='" + c.topology +
               "', collective_algorithms='" + c.collective_algorithms + "'" +
               (c.source.empty() ? "" : ", source='" + c.source.string() + "'") + ")";
      });

  m.def(
      "configure",
      [](std::optional<Config> config, nb::kwargs kwargs) {
        // Keywords alone change those keys of the configuration in force and keep the rest.
        Config next = config ? *config : current_config();
        apply_keywords(next, kwargs);
        without_gil([&] { configure(next); });  // may load plugins
      },
      nb::arg("config") = nb::none(), nb::arg("kwargs"),
      "Applies a ts.Config, or changes the keys given as keywords (default_backend, log_level, threads, "
      "collective_algorithms, collective_tuner, topology, trace_file, plugin_search_path, plugins_to_load, "
      "plugin_allow_override, "
      "plugin_parameters, world_transport, ranks_per_process, world_timeout, check_collectives); TESSERA_* "
      "variables still win. A bad value is a ts.ConfigError, a plugin that cannot load a ts.PluginError.");
}

}  // namespace tessera::python

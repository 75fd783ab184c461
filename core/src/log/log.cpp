#include "log/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "tessera/errors.hpp"

namespace tessera::observe {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto made = spdlog::stderr_color_mt("tessera");
    made->set_level(spdlog::level::warn);
    made->set_pattern("[tessera %l] %v");
    return made;
  }();
  return *instance;
}

void set_log_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  // from_str maps unknown text to "off"; only the literal "off" may mean off.
  if (parsed == spdlog::level::off && level != "off")
    throw ConfigError("unknown log level '" + level +
                      "'; expected one of trace, debug, info, warn, error, critical, off");
  logger().set_level(parsed);
}

}  // namespace tessera::observe

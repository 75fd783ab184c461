// The one `tessera` logger (spdlog), silent below `warn` unless configured otherwise.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace tessera::observe {

spdlog::logger& logger();
// "trace", "debug", "info", "warn", "error", "off"; anything else is a ConfigError.
void set_log_level(const std::string& level);

}  // namespace tessera::observe

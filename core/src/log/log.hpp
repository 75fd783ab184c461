// The one `tessera` logger (spdlog), silent below `warn` unless configured otherwise.
//
// Its own bottom layer (core/src/README.md): every layer logs, so the logger cannot live with the
// observe hooks at the top. It keeps the observe:: namespace its callers already use.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace tessera::observe {

spdlog::logger& logger();
// "trace", "debug", "info", "warn", "error", "off"; anything else is a ConfigError.
void set_log_level(const std::string& level);

}  // namespace tessera::observe

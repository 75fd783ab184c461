// What Tessera logs while a LogCapture lives, at info level and above, collected as text for a test
// to search (the level in force before is restored).
#pragma once

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>

#include "log/log.hpp"

namespace tessera_test {

struct LogCapture {
  LogCapture()
      : sink(std::make_shared<spdlog::sinks::ostream_sink_mt>(text)),
        level(tessera::observe::logger().level()) {
    tessera::observe::logger().sinks().push_back(sink);
    tessera::observe::logger().set_level(spdlog::level::info);
  }
  ~LogCapture() {
    auto& sinks = tessera::observe::logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
    tessera::observe::logger().set_level(level);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::ostringstream text;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink;
  spdlog::level::level_enum level;
};

}  // namespace tessera_test

// Calls into plugin code under a guard. The SDK forbids exceptions across the ABI, but a plugin
// written in C++ may still let one escape; the host must not die of it.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

#include "tessera/sdk/status.h"

namespace tessera::plugin {

// Runs `call`, a lambda around one call into a plugin named `call_name` (e.g.
// "tessera_plugin_query"). Returns empty when nothing escaped it, else "<call_name> threw: <what()>"
// or "<call_name> threw a non-standard exception". Only that text leaves the handler: the exception
// object, whose code may live in the plugin, is destroyed before anything can unload the library.
template <typename Call>
std::string exception_escaping(const char* call_name, Call&& call) {
  try {
    call();
    return {};
  } catch (const std::exception& e) {
    return fmt::format("{} threw: {}", call_name, e.what());
  } catch (...) {
    return fmt::format("{} threw a non-standard exception", call_name);
  }
}

// Runs `call`, a lambda returning the status of one call into a plugin named `function`; an
// exception escaping it becomes TESSERA_INTERNAL with exception_escaping's text in `error`, as if
// the plugin had reported it.
template <typename Call>
tessera_status guarded_status(const char* function, tessera_error& error, Call&& call) {
  tessera_status status = TESSERA_OK;
  const std::string escaped = exception_escaping(function, [&] { status = call(); });
  if (escaped.empty()) return status;
  error.code = TESSERA_INTERNAL;
  std::snprintf(error.message, sizeof(error.message), "%s", escaped.c_str());
  return TESSERA_INTERNAL;
}

}  // namespace tessera::plugin

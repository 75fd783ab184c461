// Header-only C++ helpers for plugin authors: exceptions inside a plugin, status at the boundary.
#pragma once

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "tessera/sdk/status.h"

namespace tessera::sdk {

// Thrown inside plugin code; the helpers turn it into a status + message before the ABI boundary.
class Error : public std::runtime_error {
 public:
  Error(tessera_status code, const std::string& message) : std::runtime_error(message), code_(code) {}
  tessera_status code() const { return code_; }

 private:
  tessera_status code_;
};

inline tessera_status report(tessera_error* error, tessera_status code, const char* message) {
  if (error != nullptr && error->struct_size >= sizeof(tessera_error)) {
    error->code = code;
    std::snprintf(error->message, sizeof(error->message), "%s", message);
  }
  return code;
}

// Runs `body` and converts whatever it throws into a status; nothing escapes.
template <class Body>
tessera_status guarded(tessera_error* error, Body&& body) {
  try {
    body();
    return TESSERA_OK;
  } catch (const Error& e) {
    return report(error, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return report(error, TESSERA_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return report(error, TESSERA_INTERNAL, e.what());
  } catch (...) {
    return report(error, TESSERA_INTERNAL, "unknown exception inside plugin");
  }
}

}  // namespace tessera::sdk

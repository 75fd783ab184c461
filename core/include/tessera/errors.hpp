// Exceptions thrown by Tessera. Every message names what was wrong, the offending value and what
// was expected.
#pragma once

#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A plugin could not be loaded or was rejected during negotiation.
class PluginError : public Error {
 public:
  using Error::Error;
};

// A configuration file or environment variable is malformed.
class ConfigError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera

// tessera::sdk::parse_non_negative and the parameter parser built on it (non_negative_number):
// finite decimal numbers >= 0 only, with a message naming the parameter and the text otherwise.
#include <doctest/doctest.h>

#include <string>

#include "tessera/sdk/cpp/plugin_builder.hpp"

namespace sdk = tessera::sdk;

TEST_CASE("parse_non_negative takes finite numbers >= 0, written any way strtod reads them") {
  CHECK(sdk::parse_non_negative("0", "latency") == 0.0);
  CHECK(sdk::parse_non_negative("2e-6", "latency") == 2e-6);
  CHECK(sdk::parse_non_negative("12.5e9", "bandwidth") == 12.5e9);
  CHECK(sdk::non_negative_number()("bandwidth", "1000") == 1000.0);
}

TEST_CASE("parse_non_negative refuses negative, infinite, NaN, partial and empty text, naming both") {
  for (const std::string text : {"-1", "inf", "nan", "1e999", "3 s", "", "fast"}) {
    CAPTURE(text);
    try {
      sdk::parse_non_negative(text, "latency");
      FAIL_CHECK("no error for '" << text << "'");
    } catch (const sdk::Error& e) {
      CHECK(std::string(e.what()) == "latency must be a finite number >= 0, got '" + text + "'");
      CHECK(e.code() == TESSERA_INVALID_ARGUMENT);
    }
  }
}

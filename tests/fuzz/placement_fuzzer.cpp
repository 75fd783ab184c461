// libFuzzer target: placement text ("S(0),R", "P(max)", "B(1)") through parse_placements, as
// `tessera plan --from/--to` and user code give it. Any input must parse or throw tessera::Error;
// what parses must print as text that parses back to the same placements.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tessera/errors.hpp"
#include "tessera/placement.hpp"

namespace {

[[noreturn]] void broken(const std::string& what, const std::string& input) {
  std::fprintf(stderr, "placement_fuzzer: %s\ninput: '%s'\n", what.c_str(), input.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // placements are short; long inputs only slow the search down
  const std::string text(reinterpret_cast<const char*>(data), size);
  tessera::Placements placements;
  try {
    placements = tessera::parse_placements(text);
  } catch (const tessera::Error&) {
    return 0;
  } catch (const std::exception& e) {
    broken(std::string("escaped exception: ") + e.what(), text);
  }
  const std::string printed = tessera::placements_text(placements);
  try {
    if (tessera::parse_placements(printed) != placements)
      broken("'" + printed + "' parses to other placements", text);
  } catch (const tessera::Error& e) {
    broken("its own text '" + printed + "' is rejected: " + e.what(), text);
  }
  return 0;
}

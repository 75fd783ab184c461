// libFuzzer target: configuration text (tessera.toml) through Config::from_string, the parser behind
// Config::from_file and TESSERA_CONFIG. Any input must give a Config or a ConfigError naming the
// source; nothing else may escape, and the sanitizers must see no bad access. A Config accepted
// must hold only what the parser promises (threads in 0..4096, paths made relative to the file).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tessera/config.hpp"
#include "tessera/errors.hpp"

namespace {

[[noreturn]] void broken(const std::string& what, const std::string& input) {
  std::fprintf(stderr, "config_fuzzer: %s\ninput:\n%s\n", what.c_str(), input.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const tessera::Config config = tessera::Config::from_string(text, "/fuzz/tessera.toml");
    if (config.threads < 0 || config.threads > 4096) broken("threads out of range", text);
    for (const auto& dir : config.plugin_search_path)
      if (!dir.is_absolute()) broken("a search path entry not made absolute from the file's directory", text);
    if (!config.trace_file.empty() && !config.trace_file.is_absolute())
      broken("a trace file not made absolute from the file's directory", text);
  } catch (const tessera::ConfigError& e) {
    // Every rejection names where: the source given, a line, and usually a key.
    if (std::string(e.what()).rfind("/fuzz/tessera.toml:", 0) != 0)
      broken(std::string("unnamed error: ") + e.what(), text);
  } catch (const std::exception& e) {
    broken(std::string("escaped exception: ") + e.what(), text);
  }
  return 0;
}

#include "options.hpp"

#include <charconv>
#include <string_view>

namespace conformance {

namespace {

uint64_t parse_seed(const std::string& text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end)
    throw UsageError("--seed expects a non-negative integer, got '" + text + "'");
  return value;
}

}  // namespace

std::string usage_text() {
  return "Usage: tessera-conformance --backend NAME|FILE [--oracle cpu] [--seed N] [--verbose]\n"
         "Runs every kernel of sdk/KERNELS.md the backend provides, on every key dtype it declares,\n"
         "against the oracle backend. FILE is a plugin (libtessera-*.so) whose backends are tested.\n"
         "Exit status: 0 all checks passed, 1 a check failed, 2 usage error, 77 backend unavailable here.\n";
}

Options parse_options(int argc, const char* const* argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    // Options taking a value accept both "--name value" and "--name=value".
    auto value_of = [&](std::string_view name) -> std::string {
      if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=')
        return std::string(arg.substr(name.size() + 1));
      if (i + 1 >= argc) throw UsageError(std::string(name) + " expects a value");
      return argv[++i];
    };
    auto is = [&](std::string_view name) {
      return arg == name ||
             (arg.substr(0, name.size()) == name && arg.size() > name.size() && arg[name.size()] == '=');
    };
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--verbose" || arg == "-v") {
      options.verbose = true;
    } else if (is("--backend")) {
      options.backend = value_of("--backend");
    } else if (is("--oracle")) {
      options.oracle = value_of("--oracle");
    } else if (is("--seed")) {
      options.seed = parse_seed(value_of("--seed"));
    } else {
      throw UsageError("unknown argument '" + std::string(arg) +
                       "'; expected --backend, --oracle, --seed or --verbose");
    }
  }
  if (!options.help && options.backend.empty()) throw UsageError("--backend NAME|FILE is required");
  if (!options.help && options.oracle.empty()) throw UsageError("--oracle expects a backend name, got ''");
  return options;
}

}  // namespace conformance

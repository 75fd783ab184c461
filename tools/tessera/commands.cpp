// What the subcommands share: usage errors, finding a plugin by name, sizes as text.
#include "commands.hpp"

#include <system_error>

#include <fmt/format.h>

namespace tessera::cli {
namespace fs = std::filesystem;

std::string bytes_text(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  return unit == 0 ? fmt::format("{} bytes", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent != nullptr; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

UsageError subcommand_required(const CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + sub->get_name();
  return UsageError(command_path(app), fmt::format("a subcommand is required: one of {}", names));
}

fs::path find_plugin(const std::string& name_or_path, const std::vector<fs::path>& dirs) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".so")) return name_or_path;
  const std::string file_name = "libtessera-" + name_or_path + ".so";
  std::vector<std::string> tried;
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (fs::is_regular_file(dir / file_name, error)) return dir / file_name;
    tried.push_back(dir.lexically_normal().string());
  }
  throw PluginError(fmt::format("plugin '{}' not found: no {} in the search path ({})", name_or_path,
                                file_name,
                                tried.empty() ? "empty" : fmt::format("{}", fmt::join(tried, ", "))));
}

}  // namespace tessera::cli

// The subcommands of the `tessera` tool. Each lives in its own file and is added by one function
// that declares its options on a new subcommand of `app` and returns what to run when it was given.
// Adding a subcommand: write <name>_command.cpp, declare add_<name>_command here, list the file in
// tools/CMakeLists.txt and call it from main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <tessera/config.hpp>
#include <tessera/errors.hpp>

namespace tessera::cli {

struct Command {
  CLI::App* app;             // the subcommand; parsed() tells whether it was given
  std::function<int()> run;  // its action; returns the exit status; may throw std::exception
  bool configures = true;    // whether the start-up configuration is applied before it runs
};

// A mistake in how a command was called; reported with a pointer to that command's --help.
class UsageError : public Error {
 public:
  UsageError(std::string command, const std::string& message)
      : Error(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }  // e.g. "tessera plan"

 private:
  std::string command_;
};

// "tessera config": the words that run `app` (a subcommand, or the tool itself).
std::string command_path(const CLI::App& app);
// The error for a command given without one of its subcommands, naming them.
UsageError subcommand_required(const CLI::App& app);

// Where plugin `name_or_path` is: a path when it contains '/' or ends in ".so" (as load_plugin reads
// its argument), else libtessera-<name>.so in the first of `dirs` that has it. A name found nowhere
// is a PluginError listing the directories looked in.
std::filesystem::path find_plugin(const std::string& name_or_path,
                                  const std::vector<std::filesystem::path>& dirs);

// "4.0 MiB"; plain bytes below 1 KiB (the plan tables' sizes).
std::string bytes_text(int64_t bytes);

// `tessera plugins --params [NAME]`: the parameters each plugin on the search path (or the one
// named) declares, with current value, type, valid values and help; exit status 0.
int list_parameters(const std::string& name);
// For `tessera config check`: every [plugins.<name>] section whose plugin is not found or would be
// rejected, and every key or value its parameter schema refuses (none for a plugin without one).
std::vector<std::string> parameter_problems(const Config& config,
                                            const std::vector<std::filesystem::path>& dirs);

Command add_plugins_command(CLI::App& app);
// "tessera plugins check FILE", added by add_plugins_command to its subcommand `plugins`.
Command add_plugins_check_command(CLI::App& plugins);
Command add_plan_command(CLI::App& app);
Command add_config_command(CLI::App& app);
// "tessera checkpoint inspect DIR" and "tessera checkpoint consolidate DIR FILE".
Command add_checkpoint_command(CLI::App& app);
Command add_help_command(CLI::App& app);
#ifdef TESSERA_CLI_HAS_TOUR  // only when the tutorial scenarios are built (TESSERA_BUILD_EXAMPLES)
Command add_tour_command(CLI::App& app);
#endif

}  // namespace tessera::cli

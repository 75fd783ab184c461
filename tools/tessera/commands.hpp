// The subcommands of the `tessera` tool. Each lives in its own file and is added by one function
// that declares its options on a new subcommand of `app` and returns what to run when it was given.
// Adding a subcommand: write <name>_command.cpp, declare add_<name>_command here, list the file in
// tools/CMakeLists.txt and call it from main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tessera::cli {

struct Command {
  CLI::App* app;             // the subcommand; parsed() tells whether it was given
  std::function<int()> run;  // its action; returns the exit status; may throw std::exception
};

Command add_plugins_command(CLI::App& app);
Command add_plan_command(CLI::App& app);
Command add_config_command(CLI::App& app);
#ifdef TESSERA_CLI_HAS_TOUR  // only when the tutorial scenarios are built (TESSERA_BUILD_EXAMPLES)
Command add_tour_command(CLI::App& app);
#endif

}  // namespace tessera::cli

// tessera: the command-line tool. Every failure is reported as "tessera: error: ..." with exit
// status 1; no exception escapes main. A usage mistake also says which --help to read.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <tessera/config.hpp>

#include "commands.hpp"
#include "tessera/version.hpp"

namespace {

// The innermost subcommand given, so a usage mistake points at its own --help.
const CLI::App& innermost(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed() > 0) return innermost(*sub);
  return app;
}

int usage_error(const std::string& command, const std::string& message) {
  std::cerr << "tessera: error: " << message << "\nRun '" << command << " --help' for usage.\n";
  return 1;
}

int run_cli(int argc, char** argv) {
  CLI::App app("Tessera: simulate distributed tensor programs.", "tessera");
  app.set_version_flag("--version", std::string("tessera ") + tessera::kVersion,
                       "Print the version and exit");
  app.require_subcommand(0, 1);  // none is reported below; this way an unknown one is named

  const std::vector<tessera::cli::Command> commands = {
#ifdef TESSERA_CLI_HAS_TOUR
      tessera::cli::add_tour_command(app),
#endif
      tessera::cli::add_plan_command(app),       tessera::cli::add_config_command(app),
      tessera::cli::add_checkpoint_command(app), tessera::cli::add_plugins_command(app),
      tessera::cli::add_help_command(app),
  };

  try {
    app.parse(argc, argv);
    for (const tessera::cli::Command& command : commands) {
      if (!command.app->parsed()) continue;
      // TESSERA_CONFIG and the environment are applied before the command starts, so a mistake in
      // them is reported as theirs, not as one of whatever option first used the library.
      if (command.configures) tessera::configure_from_environment();
      return command.run();
    }
    throw tessera::cli::subcommand_required(app);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version
    return usage_error(tessera::cli::command_path(innermost(app)), e.what());
  } catch (const tessera::cli::UsageError& e) {
    return usage_error(e.command(), e.what());
  } catch (const std::exception& e) {
    std::cerr << "tessera: error: " << e.what() << '\n';
    return 1;
  } catch (...) {
    std::cerr << "tessera: error: unknown exception\n";
    return 1;
  }
}

}  // namespace

// What escapes run_cli (setting the commands up, or writing an error out) still ends the process
// with a message and status 1 rather than std::terminate.
int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (...) {
    std::fputs("tessera: error: the command line interface failed unexpectedly\n", stderr);
    return 1;
  }
}

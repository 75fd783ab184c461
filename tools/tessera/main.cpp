// tessera: the command-line tool. Every failure is reported as "tessera: error: ..." with exit
// status 1; no exception escapes main.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tessera/version.hpp"

int main(int argc, char** argv) {
  CLI::App app("Tessera: simulate distributed tensor programs.", "tessera");
  app.set_version_flag("--version", std::string("tessera ") + tessera::kVersion,
                       "Print the version and exit");
  app.require_subcommand(0, 1);  // none is reported below; this way an unknown one is named

  const std::vector<tessera::cli::Command> commands = {
#ifdef TESSERA_CLI_HAS_TOUR
      tessera::cli::add_tour_command(app),
#endif
      tessera::cli::add_plan_command(app),
      tessera::cli::add_config_command(app),
      tessera::cli::add_plugins_command(app),
  };

  try {
    app.parse(argc, argv);
    for (const tessera::cli::Command& command : commands)
      if (command.app->parsed()) return command.run();
    std::cerr << "tessera: error: a subcommand is required\nRun 'tessera --help' for usage.\n";
    return 1;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version
    std::cerr << "tessera: error: " << e.what() << "\nRun 'tessera --help' for usage.\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessera: error: " << e.what() << '\n';
    return 1;
  } catch (...) {
    std::cerr << "tessera: error: unknown exception\n";
    return 1;
  }
}

// tessera help [SUBCOMMAND...]: the same text as --help, for those who type it as a word.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"

namespace tessera::cli {

Command add_help_command(CLI::App& app) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* sub = app.add_subcommand("help", "Show the usage of tessera or of one of its subcommands");
  sub->add_option("SUBCOMMAND", *words, "e.g. plan, or config check");
  return {sub,
          [&app, sub, words] {
            CLI::App* shown = &app;
            for (const std::string& word : *words) {
              CLI::App* next = nullptr;
              for (CLI::App* candidate : shown->get_subcommands([](const CLI::App*) { return true; }))
                if (candidate->get_name() == word) next = candidate;
              if (next == nullptr) {
                std::string known;
                for (const CLI::App* candidate : shown->get_subcommands([](const CLI::App*) { return true; }))
                  known += (known.empty() ? "" : ", ") + candidate->get_name();
                throw UsageError(command_path(*sub),
                                 fmt::format("'{}' has no subcommand '{}'; expected one of {}",
                                             command_path(*shown), word, known));
              }
              shown = next;
            }
            // Not shown->help(): CLI11 hands that on to the subcommand parsed, which for `tessera help`
            // is this very one. The formatter prints exactly `shown`, named as --help names it.
            std::cout << shown->get_formatter()->make_help(shown, command_path(*shown),
                                                           CLI::AppFormatMode::Normal);
            return 0;
          },
          /*configures=*/false};
}

}  // namespace tessera::cli

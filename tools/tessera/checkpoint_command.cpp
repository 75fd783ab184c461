// tessera checkpoint inspect DIR: the entries of a distributed checkpoint (key, kind, dtype, global
// shape, placements saved, chunks and bytes) and its data files, read from its metadata.
// tessera checkpoint consolidate DIR FILE: the checkpoint as one ordinary .safetensors file.
#include <iostream>
#include <memory>
#include <string>
#include <tessera/checkpoint.hpp>

#include "commands.hpp"

namespace tessera::cli {

Command add_checkpoint_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto file = std::make_shared<std::string>();
  CLI::App* sub =
      app.add_subcommand("checkpoint", "Inspect or consolidate a distributed checkpoint directory");
  sub->require_subcommand(0, 1);  // none is reported as main reports it for tessera itself
  CLI::App* inspect_sub = sub->add_subcommand(
      "inspect",
      "List a checkpoint's entries: kind, dtype, global shape, placements saved, chunks and sizes");
  inspect_sub->add_option("DIR", *dir, "The checkpoint directory (holding .metadata)")->required();
  CLI::App* consolidate_sub = sub->add_subcommand(
      "consolidate", "Write the checkpoint as one .safetensors file holding every tensor entry in full");
  consolidate_sub->add_option("DIR", *dir, "The checkpoint directory (holding .metadata)")->required();
  consolidate_sub->add_option("FILE", *file, "The .safetensors file to write")->required();
  return {sub, [sub, inspect_sub, consolidate_sub, dir, file] {
            if (inspect_sub->parsed()) {
              std::cout << dcp::inspect(*dir);
              return 0;
            }
            if (consolidate_sub->parsed()) {
              dcp::consolidate(*dir, *file);
              std::cout << "wrote " << *file << "\n";
              return 0;
            }
            throw subcommand_required(*sub);
          }};
}

}  // namespace tessera::cli

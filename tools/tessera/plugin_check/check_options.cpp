#include "plugin_check/check_options.hpp"

namespace tessera::cli::check {

std::vector<std::string> worker_arguments(const CheckOptions& options, int worker_fd) {
  std::vector<std::string> args = {"plugins",          "check",
                                   "--worker-fd",      std::to_string(worker_fd),
                                   "--timeout",        std::to_string(options.timeout_s),
                                   "--cycles",         std::to_string(options.cycles),
                                   "--leak-threshold", std::to_string(options.leak_threshold_kib)};
  for (const std::string& arguments : options.placement_arguments) {
    args.emplace_back("--placement-arguments");
    args.push_back(arguments);
  }
  args.emplace_back("--");  // the file may start with '-'
  args.push_back(options.file.string());
  return args;
}

}  // namespace tessera::cli::check

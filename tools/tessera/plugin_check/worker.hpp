// The worker of `tessera plugins check`: the same executable, started by the supervisor with the
// hidden option --worker-fd, which runs the stages on the plugin and reports each over that pipe
// (protocol.hpp). Whatever the plugin does to this process (a crash, a hang, a leak) is the
// supervisor's to observe; the worker only announces each stage before running it.
#pragma once

#include "plugin_check/check_options.hpp"

namespace tessera::cli::check {

// Runs every stage; returns 0 when it got to the end (the verdicts travel over the pipe).
int run_worker(const CheckOptions& options);

}  // namespace tessera::cli::check

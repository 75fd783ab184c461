#include "plugin_check/worker.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <string>
#include <tessera/plugins.hpp>
#include <vector>

#include "plugin_check/protocol.hpp"
#include "plugin_check/stages.hpp"

namespace tessera::cli::check {
namespace {

struct Stage {
  std::string name;
  std::function<StageOutcome()> run;
};

class Worker {
 public:
  explicit Worker(int fd) : fd_(fd) {}

  void plan(const std::vector<Stage>& stages) const {
    for (const Stage& stage : stages) send(fd_, Message::plan(stage.name));
  }

  // Announces the stage, runs it and reports its outcome; an exception escaping it fails it.
  StageOutcome run(const Stage& stage) const {
    send(fd_, Message::begin(stage.name));
    StageOutcome outcome;
    try {
      outcome = stage.run();
    } catch (const std::exception& e) {
      outcome = {Verdict::failed, e.what(), {}};
    } catch (...) {
      outcome = {Verdict::failed, "a non-standard exception escaped the stage", {}};
    }
    for (const std::string& detail : outcome.details) send(fd_, Message::detail(stage.name, detail));
    send(fd_, Message::end(stage.name, outcome.verdict, outcome.summary));
    return outcome;
  }

  // The last stage: what runs after the worker returns (static destructors, the process world's
  // transport finalize) until the process ends. Its end is the process's exit status.
  void begin_exit() const { send(fd_, Message::begin("exit")); }

 private:
  int fd_;
};

std::string components_text(const PluginInfo& info) {
  std::vector<std::string> parts;
  for (const ComponentInfo& component : info.components)
    parts.push_back(component.kind + " " + component.name);
  return parts.empty() ? "no components" : fmt::format("{}", fmt::join(parts, ", "));
}

// The stage that checks one component, by its kind.
Stage component_stage(const ComponentInfo& component, const CheckOptions& options, bool& transport_checked) {
  const std::string stage = component.kind + " " + component.name;
  const std::string name = component.name;
  if (component.kind == "backend") return {stage, [name] { return check_backend(name); }};
  if (component.kind == "collective") return {stage, [name] { return check_collective(name); }};
  if (component.kind == "placement")
    return {stage,
            [name, arguments = options.placement_arguments] { return check_placement(name, arguments); }};
  if (component.kind == "transport") {
    if (transport_checked)  // init_world makes one process world per process
      return {
          stage, [] {
            return StageOutcome{Verdict::skipped, "a process initialises one transport; check it alone", {}};
          }};
    transport_checked = true;
    return {stage, [name, timeout = options.timeout_s] { return check_transport(name, timeout); }};
  }
  return {
      stage, [kind = component.kind] {
        return StageOutcome{Verdict::skipped, fmt::format("no checks for components of kind '{}'", kind), {}};
      }};
}

}  // namespace

int run_worker(const CheckOptions& options) {
  // A pipe to a supervisor that died is useless: die with it, and let no program this one might
  // start inherit the pipe (the supervisor waits for this process, not for the pipe's end).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::fcntl(options.worker_fd, F_SETFD, FD_CLOEXEC);
  const Worker worker(options.worker_fd);

  PluginInfo info;
  const StageOutcome loaded = worker.run(
      {"load", [&] {
         info = load_plugin(options.file.string());
         return StageOutcome{Verdict::ok,
                             fmt::format("{} {} (SDK {}.{}): {}; its init succeeded", info.name, info.version,
                                         info.sdk_major, info.sdk_minor, components_text(info)),
                             {}};
       }});
  if (loaded.verdict != Verdict::ok) {
    worker.begin_exit();
    return 0;
  }
  std::vector<Stage> stages;
  bool transport_checked = false;
  for (const ComponentInfo& component : info.components)
    stages.push_back(component_stage(component, options, transport_checked));
  stages.push_back(
      {"unload", [&] {
         unload_plugin(info.name);
         return StageOutcome{
             Verdict::ok, "unregistered; its finalize runs once no object made from it is left", {}};
       }});
  if (options.cycles > 0)
    stages.push_back(
        {"cycles", [&] { return check_cycles(options.file, options.cycles, options.leak_threshold_kib); }});
  worker.plan(stages);
  for (const Stage& stage : stages) worker.run(stage);
  worker.begin_exit();
  return 0;
}

}  // namespace tessera::cli::check

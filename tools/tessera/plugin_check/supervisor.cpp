#include "plugin_check/supervisor.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>
#include <tessera/errors.hpp>

#include "plugin_check/protocol.hpp"

extern char** environ;

namespace tessera::cli::check {
namespace {

using Clock = std::chrono::steady_clock;

// The descriptor the worker finds its end of the pipe on.
constexpr int kWorkerFd = 3;

std::string os_error_text(const std::string& what, int error) {
  return fmt::format("plugins check: {}: {}", what, std::strerror(error));
}

// The worker's environment: this process's, with ASAN_OPTIONS extended when the tool runs under
// AddressSanitizer (a build of the sanitizer preset, or a plugin author's). The sanitizer would turn
// a plugin's SIGSEGV into an exit status of its own and hide the signal the report names, would
// keep freed memory in quarantine so that resident memory grows by every free and the load/unload
// cycles read as a leak, and would fail the exit on leaks the cycles stage measures itself. Later
// options win in ASAN_OPTIONS, so these follow the caller's. Without the sanitizer it is ignored.
std::vector<std::string> worker_environment() {
  constexpr const char* kWorkerAsanOptions =
      "handle_segv=0:handle_sigbus=0:handle_abort=0:quarantine_size_mb=0:"
      "detect_leaks=0";
  std::vector<std::string> environment;
  std::string asan_options;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (text.starts_with("ASAN_OPTIONS="))
      asan_options = text.substr(std::string("ASAN_OPTIONS=").size());
    else
      environment.push_back(text);
  }
  environment.push_back("ASAN_OPTIONS=" + asan_options + (asan_options.empty() ? "" : ":") +
                        kWorkerAsanOptions);
  return environment;
}

std::string signal_name(int signal) {
  const char* abbreviation = ::sigabbrev_np(signal);
  return abbreviation != nullptr ? fmt::format("SIG{}", abbreviation) : fmt::format("signal {}", signal);
}

// The worker process, with the read end of its message pipe; killed (with its group) if still
// running when this is destroyed.
class WorkerProcess {
 public:
  explicit WorkerProcess(const CheckOptions& options) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(os_error_text("cannot make a pipe", errno));
    read_fd_ = fds[0];
    int write_fd = fds[1];
    if (write_fd == kWorkerFd) {  // dup2 onto itself would keep close-on-exec set
      write_fd = ::fcntl(fds[1], F_DUPFD_CLOEXEC, kWorkerFd + 1);
      ::close(fds[1]);
    }
    ::fcntl(read_fd_, F_SETFL, O_NONBLOCK);

    const std::string program = std::filesystem::read_symlink("/proc/self/exe").string();
    std::vector<std::string> args = worker_arguments(options, kWorkerFd);
    args.insert(args.begin(), program);
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_adddup2(&actions, write_fd, kWorkerFd);
    // The worker's stdout (the plugin's prints) joins stderr: stdout is the report's alone.
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    // A group of its own, so that a hung worker is killed with whatever it started.
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    std::vector<std::string> environment = worker_environment();
    std::vector<char*> envp;
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    const int error = ::posix_spawn(&pid_, program.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(write_fd);
    if (error != 0) {
      ::close(read_fd_);
      throw Error(os_error_text(fmt::format("cannot start the worker {}", program), error));
    }
  }
  ~WorkerProcess() {
    if (!reaped_) {
      kill_group();
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    ::close(read_fd_);
  }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  int read_fd() const { return read_fd_; }
  void kill_group() const { ::kill(-pid_, SIGKILL); }
  // The wait status once the worker has ended; nothing while it runs.
  std::optional<int> ended() {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    reaped_ = true;
    return status;
  }
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  bool reaped_ = false;
};

// Turns the worker's messages into stage results.
class Collector {
 public:
  explicit Collector(CheckResult& result) : result_(result) {}

  // Takes bytes read from the pipe; returns true when a stage began (which restarts the timeout).
  // Throws std::runtime_error for a line that is not a message.
  bool take(const char* data, size_t size) {
    pending_.append(data, size);
    bool began = false;
    for (size_t newline; (newline = pending_.find('\n')) != std::string::npos;) {
      const std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      began = handle(decode(line)) || began;
    }
    return began;
  }

  // The stage that began and has not ended, if any.
  StageResult* open() { return open_ ? &result_.stages[*open_] : nullptr; }
  // The open stage, or a new one named `stage` when none is open.
  StageResult& open_or(const std::string& stage) {
    if (!open_) {
      result_.stages.push_back(StageResult::named(stage));
      open_ = result_.stages.size() - 1;
    }
    return result_.stages[*open_];
  }
  void close() { open_.reset(); }

  // Stages announced but never begun: not run.
  void add_unrun() {
    for (const std::string& stage : planned_)
      result_.stages.push_back(
          StageResult::named(stage, Verdict::not_run, "the worker did not get this far"));
    planned_.clear();
  }

 private:
  bool handle(const Message& message) {
    switch (message.kind) {
      case Message::Kind::plan:
        planned_.push_back(message.stage);
        return false;
      case Message::Kind::begin:
        planned_.erase(std::remove(planned_.begin(), planned_.end(), message.stage), planned_.end());
        result_.stages.push_back(StageResult::named(message.stage));
        open_ = result_.stages.size() - 1;
        return true;
      case Message::Kind::detail:
        if (StageResult* stage = open()) stage->details.push_back(message.text);
        return false;
      case Message::Kind::end:
        if (StageResult* stage = open()) {
          stage->verdict = message.verdict;
          stage->summary = message.text;
        }
        open_.reset();
        return false;
    }
    return false;
  }

  CheckResult& result_;
  std::string pending_;
  std::vector<std::string> planned_;
  std::optional<size_t> open_;
};

// Reads whatever the pipe holds now; false at its end.
bool drain(int fd, Collector& collector, bool& began) {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      began = collector.take(buffer, static_cast<size_t>(n)) || began;
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: nothing more now
  }
}

// What the worker's end says about the stage it was in (or about its exit, when none was open).
void conclude(Collector& collector, int status) {
  // No stage open: it ended between stages, before announcing its exit.
  StageResult* stage = &collector.open_or("exit");
  if (WIFSIGNALED(status)) {
    stage->verdict = Verdict::crashed;
    stage->signal = signal_name(WTERMSIG(status));
    stage->summary =
        fmt::format("{} ({}): the worker died during this stage", stage->signal, strsignal(WTERMSIG(status)));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    stage->verdict = Verdict::failed;
    stage->summary = fmt::format("the worker exited with status {} during this stage", WEXITSTATUS(status));
  } else if (stage->stage == "exit") {
    stage->verdict = Verdict::ok;
    stage->summary = "the worker exited cleanly (static destructors, a transport's finalize)";
  } else {
    stage->verdict = Verdict::failed;
    stage->summary = "the worker exited during this stage without finishing it";
  }
  collector.close();
}

}  // namespace

bool CheckResult::passed() const {
  return !stages.empty() && std::all_of(stages.begin(), stages.end(),
                                        [](const StageResult& s) { return verdict_passes(s.verdict); });
}

CheckResult supervise(const CheckOptions& options) {
  CheckResult result;
  result.file = options.file.string();
  result.timeout_s = options.timeout_s;
  Collector collector(result);
  WorkerProcess worker(options);
  const auto timeout = std::chrono::seconds(options.timeout_s);
  Clock::time_point deadline = Clock::now() + timeout;
  bool pipe_open = true;
  for (;;) {
    bool began = false;
    try {
      if (pipe_open) {
        pollfd watched{worker.read_fd(), POLLIN, 0};
        ::poll(&watched, 1, 50);
        pipe_open = drain(worker.read_fd(), collector, began);
      } else {
        ::usleep(50 * 1000);  // the pipe is closed but the worker still runs (its exit)
      }
      if (began) deadline = Clock::now() + timeout;
      if (const std::optional<int> status = worker.ended()) {
        drain(worker.read_fd(), collector, began);  // what it wrote just before it ended
        conclude(collector, *status);
        break;
      }
    } catch (const std::runtime_error& e) {  // not a message: something else wrote to the pipe
      worker.kill_group();
      worker.wait();
      StageResult& stage = collector.open_or("start");
      stage.verdict = Verdict::failed;
      stage.summary = fmt::format("{}; the worker was killed", e.what());
      collector.close();
      break;
    }
    if (Clock::now() > deadline) {
      worker.kill_group();
      worker.wait();
      StageResult& stage = collector.open_or("start");
      stage.verdict = Verdict::hung;
      stage.summary = fmt::format("no progress within {} s: the worker was killed", options.timeout_s);
      collector.close();
      break;
    }
  }
  collector.add_unrun();
  return result;
}

}  // namespace tessera::cli::check

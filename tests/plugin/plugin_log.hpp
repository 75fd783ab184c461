// The call log the lifecycle test plugins write (good_plugin/params.cpp): one line per call into
// them, in the file TESSERA_TEST_PLUGIN_LOG names. A PluginLog points the variable at a fresh file
// of its own for its lifetime.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "plugin_test_support.hpp"

namespace plugin_test {

class PluginLog {
 public:
  PluginLog()
      : file_(std::filesystem::temp_directory_path() / ("tessera-plugin-log-" + std::to_string(::getpid()) +
                                                        "-" + std::to_string(counter()++) + ".txt")),
        env_("TESSERA_TEST_PLUGIN_LOG", file_.string()) {
    std::filesystem::remove(file_);
  }
  ~PluginLog() {
    std::error_code error;
    std::filesystem::remove(file_, error);
  }
  PluginLog(const PluginLog&) = delete;
  PluginLog& operator=(const PluginLog&) = delete;

  std::vector<std::string> lines() const {
    std::vector<std::string> lines;
    std::ifstream in(file_);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  // How many lines are exactly `line`, or start with it when it ends in '*'.
  size_t count(const std::string& line) const {
    size_t n = 0;
    const bool prefix = !line.empty() && line.back() == '*';
    const std::string wanted = prefix ? line.substr(0, line.size() - 1) : line;
    for (const std::string& l : lines()) n += prefix ? l.starts_with(wanted) : l == wanted;
    return n;
  }
  const std::filesystem::path& file() const { return file_; }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path file_;
  ScopedEnv env_;
};

}  // namespace plugin_test

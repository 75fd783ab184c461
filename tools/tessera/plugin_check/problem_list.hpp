// The problems one stage found: all counted, the first few kept as detail lines, so that a plugin
// wrong in every case does not flood the report.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

namespace tessera::cli::check {

class ProblemList {
 public:
  explicit ProblemList(size_t shown = 20) : shown_(shown) {}

  void add(std::string problem) {
    ++count_;
    if (lines_.size() < shown_) lines_.push_back(std::move(problem));
  }
  size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The kept lines, and one saying how many were left out.
  std::vector<std::string> lines() const {
    std::vector<std::string> lines = lines_;
    if (count_ > lines_.size()) lines.push_back(fmt::format("... and {} more", count_ - lines_.size()));
    return lines;
  }

 private:
  size_t shown_;
  size_t count_ = 0;
  std::vector<std::string> lines_;
};

}  // namespace tessera::cli::check

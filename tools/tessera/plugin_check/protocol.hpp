// The lines a `tessera plugins check` worker writes to its supervisor over a pipe, one message a
// line, fields separated by tabs (escaped inside fields, like newlines and backslashes):
//   plan   <stage>                       a stage the worker will run after the current one
//   begin  <stage>                       the worker starts the stage now
//   detail <stage> <text>                one problem the stage found
//   end    <stage> <verdict> <summary>   the stage finished
// A stage is announced before it starts so that a crash or a hang is blamed on the stage that was
// running: the worker cannot report its own death.
#pragma once

#include <string>
#include <utility>

#include "plugin_check/verdict.hpp"

namespace tessera::cli::check {

struct Message {
  enum class Kind { plan, begin, detail, end };
  Kind kind = Kind::begin;
  std::string stage;
  Verdict verdict = Verdict::ok;  // end only
  std::string text;               // detail: the problem; end: the summary

  static Message plan(std::string stage) { return make(Kind::plan, std::move(stage), Verdict::ok, {}); }
  static Message begin(std::string stage) { return make(Kind::begin, std::move(stage), Verdict::ok, {}); }
  static Message detail(std::string stage, std::string text) {
    return make(Kind::detail, std::move(stage), Verdict::ok, std::move(text));
  }
  static Message end(std::string stage, Verdict verdict, std::string summary) {
    return make(Kind::end, std::move(stage), verdict, std::move(summary));
  }

 private:
  static Message make(Kind kind, std::string stage, Verdict verdict, std::string text) {
    Message message;
    message.kind = kind;
    message.stage = std::move(stage);
    message.verdict = verdict;
    message.text = std::move(text);
    return message;
  }
};

// One line, ending in '\n'.
std::string encode(const Message& message);
// A line without its '\n'; throws std::runtime_error naming the line when it is not a message.
Message decode(const std::string& line);

// Writes every byte of `message`'s line to `fd`, retrying after interruptions; throws
// std::runtime_error when the pipe is gone.
void send(int fd, const Message& message);

}  // namespace tessera::cli::check

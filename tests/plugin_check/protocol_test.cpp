// The worker's messages survive the pipe whatever their text holds, and a line that is not a
// message is refused, naming it.
#include "plugin_check/protocol.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "plugin_check/problem_list.hpp"

using namespace tessera::cli::check;

namespace {

Message round_trip(const Message& message) {
  std::string line = encode(message);
  REQUIRE(line.size() > 0);
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);  // one line, whatever the text held
  line.pop_back();
  return decode(line);
}

std::string decode_error(const std::string& line) {
  try {
    (void)decode(line);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("every kind of message comes back as it was sent, tabs, newlines and backslashes included") {
  const std::string awkward = "a\tb\nc\\d\\te \\n f\t";
  const Message plan = round_trip(Message::plan("collective ring"));
  CHECK(plan.kind == Message::Kind::plan);
  CHECK(plan.stage == "collective ring");
  const Message begin = round_trip(Message::begin(awkward));
  CHECK(begin.kind == Message::Kind::begin);
  CHECK(begin.stage == awkward);
  const Message detail = round_trip(Message::detail("load", awkward));
  CHECK(detail.kind == Message::Kind::detail);
  CHECK(detail.stage == "load");
  CHECK(detail.text == awkward);
  for (Verdict verdict : {Verdict::ok, Verdict::failed, Verdict::skipped, Verdict::leak}) {
    const Message end = round_trip(Message::end(awkward, verdict, awkward + "!"));
    CHECK(end.kind == Message::Kind::end);
    CHECK(end.stage == awkward);
    CHECK(end.verdict == verdict);
    CHECK(end.text == awkward + "!");
  }
  const Message empty = round_trip(Message::end("unload", Verdict::ok, ""));
  CHECK(empty.text.empty());
}

TEST_CASE("a line that is not a message is refused, naming the line") {
  CHECK(decode_error("bogus\tload") == "the worker sent a malformed line: 'bogus\tload'");
  CHECK(decode_error("end\tload") ==
        "the worker sent a malformed line: 'end\tload'");  // no verdict, no summary
  CHECK(decode_error("end\tload\tmaybe\tfine") ==
        "the worker sent a malformed line: 'end\tload\tmaybe\tfine'");
  CHECK(decode_error("begin\tload\textra") == "the worker sent a malformed line: 'begin\tload\textra'");
  CHECK(decode_error("") == "the worker sent a malformed line: ''");
}

TEST_CASE("verdict names read back, and only ok and skipped pass") {
  for (Verdict verdict : {Verdict::ok, Verdict::failed, Verdict::skipped, Verdict::leak, Verdict::crashed,
                          Verdict::hung, Verdict::not_run})
    CHECK(verdict_from_name(verdict_name(verdict)) == verdict);
  CHECK(verdict_name(Verdict::not_run) == "not_run");
  CHECK_FALSE(verdict_from_name("OK").has_value());
  CHECK(verdict_passes(Verdict::ok));
  CHECK(verdict_passes(Verdict::skipped));
  for (Verdict verdict : {Verdict::failed, Verdict::leak, Verdict::crashed, Verdict::hung, Verdict::not_run})
    CHECK_FALSE(verdict_passes(verdict));
}

TEST_CASE("a problem list counts every problem and keeps the first few") {
  ProblemList problems(3);
  CHECK(problems.empty());
  CHECK(problems.lines().empty());
  for (int i = 0; i < 3; ++i) problems.add("problem " + std::to_string(i));
  CHECK(problems.lines() == std::vector<std::string>{"problem 0", "problem 1", "problem 2"});
  problems.add("problem 3");
  problems.add("problem 4");
  CHECK(problems.count() == 5);
  CHECK(problems.lines() ==
        std::vector<std::string>{"problem 0", "problem 1", "problem 2", "... and 2 more"});
}

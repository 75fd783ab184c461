#include "plugin_check/protocol.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace tessera::cli::check {
namespace {

constexpr const char* kKindWords[] = {"plan", "begin", "detail", "end"};

std::string escaped(const std::string& field) {
  std::string out;
  for (char c : field) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string unescaped(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    const char next = field[++i];
    out += next == 't' ? '\t' : next == 'n' ? '\n' : next;
  }
  return out;
}

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(
        unescaped(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start)));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

}  // namespace

std::string encode(const Message& message) {
  std::string line = kKindWords[static_cast<int>(message.kind)];
  line += '\t' + escaped(message.stage);
  if (message.kind == Message::Kind::end) line += '\t' + std::string(verdict_name(message.verdict));
  if (message.kind == Message::Kind::detail || message.kind == Message::Kind::end)
    line += '\t' + escaped(message.text);
  return line + '\n';
}

Message decode(const std::string& line) {
  const std::vector<std::string> fields = fields_of(line);
  const auto malformed = [&] {
    return std::runtime_error("the worker sent a malformed line: '" + line + "'");
  };
  Message message;
  int kind = -1;
  for (int k = 0; k < 4; ++k)
    if (fields[0] == kKindWords[k]) kind = k;
  if (kind < 0) throw malformed();
  message.kind = static_cast<Message::Kind>(kind);
  const size_t expected = message.kind == Message::Kind::end      ? 4
                          : message.kind == Message::Kind::detail ? 3
                                                                  : 2;
  if (fields.size() != expected) throw malformed();
  message.stage = fields[1];
  if (message.kind == Message::Kind::end) {
    const std::optional<Verdict> verdict = verdict_from_name(fields[2]);
    if (!verdict) throw malformed();
    message.verdict = *verdict;
  }
  if (expected > 2) message.text = fields.back();
  return message;
}

void send(int fd, const Message& message) {
  const std::string line = encode(message);
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("cannot report to the supervisor: ") + std::strerror(errno));
    written += static_cast<size_t>(n);
  }
}

}  // namespace tessera::cli::check

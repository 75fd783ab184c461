// Actions in PyTorch's spelling: stage number, action name, micro-batch number ("0F1", "2SEND_B0").
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <utility>

#include "tessera/errors.hpp"
#include "tessera/pipelining.hpp"

namespace tessera::pipelining {
namespace {

// Longest names first, so that parsing "SEND_F" is not taken for "S..." of a shorter one.
constexpr std::array<std::pair<ActionType, std::string_view>, 8> kNames = {{
    {ActionType::SEND_F, "SEND_F"},
    {ActionType::RECV_F, "RECV_F"},
    {ActionType::SEND_B, "SEND_B"},
    {ActionType::RECV_B, "RECV_B"},
    {ActionType::F, "F"},
    {ActionType::I, "I"},
    {ActionType::W, "W"},
    {ActionType::B, "B"},
}};

std::string_view name_of(ActionType type) {
  for (const auto& [t, name] : kNames)
    if (t == type) return name;
  return "?";
}

// Reads a non-negative decimal number at the front of `text`, advancing it; false when none.
bool read_number(std::string_view& text, int& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value < 0) return false;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return true;
}

}  // namespace

std::string Action::to_string() const { return fmt::format("{}{}{}", stage, name_of(type), microbatch); }

std::ostream& operator<<(std::ostream& os, const Action& action) { return os << action.to_string(); }

Action Action::parse(std::string_view text) {
  const std::string quoted(text);
  auto bad = [&](const char* why) {
    return Error(
        fmt::format("pipelining::Action::parse(\"{}\"): {}; expected stage, action and micro-batch, "
                    "like \"0F1\", \"1B0\", \"2SEND_F3\" (actions F, I, W, B, SEND_F, RECV_F, SEND_B, "
                    "RECV_B)",
                    quoted, why));
  };
  Action action;
  if (!read_number(text, action.stage)) throw bad("it does not start with a stage number");
  bool known = false;
  for (const auto& [type, name] : kNames)
    if (text.starts_with(name)) {
      action.type = type;
      text.remove_prefix(name.size());
      known = true;
      break;
    }
  if (!known) throw bad("the action after the stage number is unknown");
  if (!read_number(text, action.microbatch)) throw bad("it does not end with a micro-batch number");
  if (!text.empty()) throw bad("text follows the micro-batch number");
  return action;
}

}  // namespace tessera::pipelining

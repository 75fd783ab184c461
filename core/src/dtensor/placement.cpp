#include "tessera/placement.hpp"

#include <cctype>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "dtensor/placement_strategies.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

using dtensor::PlacementStrategy;

const std::set<std::string> kReduceOps = {"sum", "avg", "min", "max", "product", "band", "bor", "bxor"};

// "balanced_shard" -> "BalancedShard": the class-style name PyTorch prints ("Shard(dim=0)").
std::string class_name(const std::string& strategy_name) {
  std::string name;
  bool upper = true;
  for (char c : strategy_name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

// The argument text each kind of placement takes, for messages.
std::string argument_form(const PlacementStrategy& strategy, bool class_style) {
  switch (strategy.kind()) {
    case TESSERA_PLACEMENT_REPLICATE:
      return class_style ? "()" : "";
    case TESSERA_PLACEMENT_PARTIAL:
      return "(sum)";
    default:
      if (strategy.takes_arguments()) return class_style ? "(dim=0, <arguments>)" : "(0,<arguments>)";
      return class_style ? "(dim=0)" : "(0)";
  }
}

std::string known_forms() {
  std::string short_forms, class_forms;
  for (const auto& strategy : dtensor::placement_strategies()) {
    short_forms += (short_forms.empty() ? "" : ", ") + strategy->prefix() + argument_form(*strategy, false);
    class_forms +=
        (class_forms.empty() ? "" : ", ") + class_name(strategy->name()) + argument_form(*strategy, true);
  }
  if (short_forms.empty()) return "none (no placement plugin loaded)";
  return short_forms + " or " + class_forms;
}

// The strategy `word` names: a text prefix ("S") or a class-style name ("Shard", "BalancedShard").
std::shared_ptr<const PlacementStrategy> strategy_named(const std::string& word) {
  if (auto by_prefix = dtensor::placement_by_prefix(word)) return by_prefix;
  for (const auto& strategy : dtensor::placement_strategies())
    if (class_name(strategy->name()) == word) return strategy;
  return nullptr;
}

// "dim=0" -> "0" for key "dim"; "'sum'" -> "sum": the keyword and quotes PyTorch's spellings carry.
std::string bare_argument(std::string argument, const std::string& key) {
  if (argument.rfind(key + "=", 0) == 0) argument.erase(0, key.size() + 1);
  if (argument.size() >= 2 && (argument.front() == '\'' || argument.front() == '"') &&
      argument.back() == argument.front())
    argument = argument.substr(1, argument.size() - 2);
  return argument;
}

std::string trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  return first == std::string::npos ? std::string()
                                    : text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The text after the dim in a placement's raw text ("C(0, 4 , 2)" -> "4,2"): whitespace around
// each argument dropped, whitespace inside one kept. Called only when the text has a comma.
std::string raw_arguments(const std::string& raw) {
  const size_t open = raw.find('(');
  const std::string inside = raw.substr(open + 1, raw.rfind(')') - open - 1);
  const std::string rest = inside.substr(inside.find(',') + 1);
  std::string arguments;
  for (size_t start = 0;;) {
    const size_t end = rest.find(',', start);
    arguments += trimmed(rest.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return arguments;
    arguments += ',';
    start = end + 1;
  }
}

}  // namespace

Placement Placement::shard(int64_t dim, std::string strategy, std::string arguments) {
  // The plain Shard(d) is made often (every op's output placements) and takes no arguments: only
  // other strategies, or arguments, need the strategy itself.
  if (strategy != "shard" || !arguments.empty()) {
    auto found = dtensor::placement(strategy);
    if (found == nullptr)
      throw Error(
          fmt::format("placement strategy '{}' is not loaded; known forms: {}", strategy, known_forms()));
    found->check_arguments(
        arguments, fmt::format("{}({}{}{})", found->prefix(), dim, arguments.empty() ? "" : ",", arguments));
  }
  Placement p;
  p.kind_ = Kind::Shard;
  p.dim_ = dim;
  p.strategy_ = std::move(strategy);
  p.arguments_ = std::move(arguments);
  return p;
}

Placement Placement::replicate() { return Placement(); }

Placement Placement::partial(std::string reduce_op) {
  if (kReduceOps.count(reduce_op) == 0)
    throw Error(fmt::format(
        "Partial: unknown reduce op '{}'; expected one of sum, avg, min, max, product, band, bor, "
        "bxor",
        reduce_op));
  Placement p;
  p.kind_ = Kind::Partial;
  p.strategy_ = "partial";
  p.reduce_op_ = std::move(reduce_op);
  return p;
}

Placement Placement::with_dim(int64_t dim) const {
  Placement p = *this;
  p.dim_ = dim;
  return p;
}

bool Placement::operator==(const Placement& other) const {
  return kind_ == other.kind_ && strategy_ == other.strategy_ &&
         (kind_ != Kind::Shard || dim_ == other.dim_) && reduce_op_ == other.reduce_op_ &&
         arguments_ == other.arguments_;
}

std::string Placement::to_string() const {
  switch (kind_) {
    case Kind::Replicate:
      return "R";
    case Kind::Partial:
      return fmt::format("P({})", reduce_op_);
    case Kind::Shard: {
      auto strategy = dtensor::placement(strategy_);
      return fmt::format("{}({}{}{})", strategy != nullptr ? strategy->prefix() : strategy_, dim_,
                         arguments_.empty() ? "" : ",", arguments_);
    }
  }
  return {};
}

std::string Placement::repr() const {
  switch (kind_) {
    case Kind::Replicate:
      return "Replicate()";
    case Kind::Partial:
      return fmt::format("Partial({})", reduce_op_);
    case Kind::Shard:
      return fmt::format("{}(dim={}{}{})", class_name(strategy_), dim_, arguments_.empty() ? "" : ", ",
                         arguments_);
  }
  return {};
}

Placement Placement::parse(const std::string& raw) {
  std::string text;
  for (char c : raw)
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  size_t letters = 0;
  while (letters < text.size() && std::isalpha(static_cast<unsigned char>(text[letters]))) ++letters;
  const std::string prefix = text.substr(0, letters);
  std::string argument;
  bool has_argument = false;
  if (letters < text.size()) {
    if (text[letters] != '(' || text.back() != ')' || text.size() < letters + 2)
      throw Error(fmt::format(
          "placement '{}' is malformed; expected a prefix optionally followed by (argument), e.g. "
          "S(0), R, P(sum), Shard(dim=0), Replicate()",
          raw));
    argument = text.substr(letters + 1, text.size() - letters - 2);
    has_argument = true;
  }
  const auto strategy = prefix.empty() ? nullptr : strategy_named(prefix);
  if (strategy == nullptr)
    throw Error(
        fmt::format("placement '{}': unknown prefix '{}'; known forms: {}", raw, prefix, known_forms()));
  switch (strategy->kind()) {
    case TESSERA_PLACEMENT_REPLICATE:
      if (!argument.empty()) throw Error(fmt::format("placement '{}': {} takes no argument", raw, prefix));
      return replicate();
    case TESSERA_PLACEMENT_PARTIAL: {
      const std::string reduce_op = bare_argument(argument, "reduce_op");
      return partial(reduce_op.empty() ? "sum" : reduce_op);
    }
    default: {
      // "0,4" -> dim "0", the strategy's arguments "4", taken from the raw text so that whitespace
      // inside an argument reaches the strategy ("1 0" is refused, not read as "10").
      const size_t comma = argument.find(',');
      std::string arguments = comma == std::string::npos ? std::string() : raw_arguments(raw);
      if (comma != std::string::npos) argument.erase(comma);
      const std::string dim_text = bare_argument(argument, "dim");
      size_t used = 0;
      int64_t dim = 0;
      try {
        dim = std::stoll(dim_text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (!has_argument || used == 0 || used != dim_text.size())
        throw Error(fmt::format("placement '{}': {} needs a tensor dim, e.g. {}(0) or {}(dim=0)", raw, prefix,
                                strategy->prefix(), class_name(strategy->name())));
      strategy->check_arguments(arguments, raw);
      Placement p;
      p.kind_ = Kind::Shard;
      p.dim_ = dim;
      p.strategy_ = strategy->name();
      p.arguments_ = std::move(arguments);
      return p;
    }
  }
}

Placements parse_placements(const std::string& raw) {
  // PyTorch prints placements as a tuple, "(Shard(dim=0), Replicate())": the outer parentheses
  // and a trailing comma are accepted too, so that form parses back.
  std::string text = raw;
  const size_t first = text.find_first_not_of(" \t");
  const size_t last = text.find_last_not_of(" \t");
  const bool tuple = first != std::string::npos && text[first] == '(' && text[last] == ')';
  if (tuple) text = text.substr(first + 1, last - first - 1);
  Placements placements;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      const std::string piece = text.substr(start, i - start);
      const bool trailing_comma = tuple && i == text.size() && !placements.empty() &&
                                  piece.find_first_not_of(" \t") == std::string::npos;
      if (!trailing_comma) placements.push_back(Placement::parse(piece));
      start = i + 1;
    }
  }
  return placements;
}

std::string placements_text(const Placements& placements) {
  std::string text;
  for (const Placement& p : placements) text += (text.empty() ? "" : ",") + p.to_string();
  return text;
}

std::string placements_repr(const Placements& placements) {
  std::string text;
  for (const Placement& p : placements) text += (text.empty() ? "" : ", ") + p.repr();
  return "(" + text + (placements.size() == 1 ? ",)" : ")");
}

std::ostream& operator<<(std::ostream& os, const Placement& placement) { return os << placement.repr(); }
std::ostream& operator<<(std::ostream& os, const Placements& placements) {
  return os << placements_repr(placements);
}

}  // namespace tessera

#include "tessera/placement.hpp"

#include <cctype>
#include <set>

#include <fmt/format.h>

#include "plugin/registry.hpp"
#include "tessera/errors.hpp"

namespace tessera {
namespace {

const std::set<std::string> kReduceOps = {"sum", "avg", "min", "max", "product", "band", "bor", "bxor"};

std::string known_forms() {
  std::string forms;
  for (const std::string& prefix : plugin::Registry::instance().placement_prefixes())
    forms += (forms.empty() ? "" : ", ") + prefix;
  return forms.empty() ? "none (no placement plugin loaded)" : forms;
}

}  // namespace

Placement Placement::shard(int64_t dim, std::string strategy) {
  Placement p;
  p.kind_ = Kind::Shard;
  p.dim_ = dim;
  p.strategy_ = std::move(strategy);
  return p;
}

Placement Placement::replicate() { return Placement(); }

Placement Placement::partial(std::string reduce_op) {
  if (kReduceOps.count(reduce_op) == 0)
    throw Error(fmt::format("Partial: unknown reduce op '{}'; expected one of sum, avg, min, max, product, band, bor, "
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
  return kind_ == other.kind_ && strategy_ == other.strategy_ && (kind_ != Kind::Shard || dim_ == other.dim_) &&
         reduce_op_ == other.reduce_op_;
}

std::string Placement::to_string() const {
  switch (kind_) {
    case Kind::Replicate: return "R";
    case Kind::Partial: return fmt::format("P({})", reduce_op_);
    case Kind::Shard: {
      auto strategy = plugin::Registry::instance().placement(strategy_);
      return fmt::format("{}({})", strategy != nullptr ? strategy->prefix() : strategy_, dim_);
    }
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
      throw Error(fmt::format("placement '{}' is malformed; expected a prefix optionally followed by (argument), e.g. "
                              "S(0), R, P(sum)",
                              raw));
    argument = text.substr(letters + 1, text.size() - letters - 2);
    has_argument = true;
  }
  auto strategy = plugin::Registry::instance().placement_by_prefix(prefix);
  if (prefix.empty() || strategy == nullptr)
    throw Error(fmt::format("placement '{}': unknown prefix '{}'; known prefixes: {}", raw, prefix, known_forms()));
  switch (strategy->kind()) {
    case TESSERA_PLACEMENT_REPLICATE:
      if (has_argument) throw Error(fmt::format("placement '{}': {} takes no argument", raw, prefix));
      return replicate();
    case TESSERA_PLACEMENT_PARTIAL: return partial(has_argument ? argument : "sum");
    default: {
      size_t used = 0;
      int64_t dim = 0;
      try {
        dim = std::stoll(argument, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (!has_argument || used == 0 || used != argument.size())
        throw Error(fmt::format("placement '{}': {} needs a tensor dim, e.g. {}(0)", raw, prefix, prefix));
      return shard(dim, strategy->name());
    }
  }
}

Placements parse_placements(const std::string& text) {
  Placements placements;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      placements.push_back(Placement::parse(text.substr(start, i - start)));
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

}  // namespace tessera

// Placements: how a DTensor is laid out along each mesh dim (PyTorch: Shard, Replicate, Partial).
//
// Text forms parse back: "S(0)" shard (torch.chunk layout), "B(0)" balanced shard, "R"
// replicate, "P(sum)" partial with a pending reduction (sum, avg, min, max, product, band, bor,
// bxor); and PyTorch's spellings of the same, "Shard(dim=0)" (or "Shard(0)"), "BalancedShard(dim=0)",
// "Replicate()", "Partial(sum)". Shard-like layouts come from placement plugins, so a new one
// needs only a plugin; its PyTorch-style name is its strategy name in CamelCase. A strategy may
// take arguments after the dim, validated by its plugin: "C(0, 4)" or "BlockCyclic(dim=0, 4)" is
// dim 0 with arguments "4" (whitespace is dropped; several arguments stay comma-separated).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessera {

class Placement {
 public:
  enum class Kind { Shard, Replicate, Partial };

  // A shard-like placement of tensor dim `dim` by the named strategy ("shard", "balanced_shard", ...)
  // with the strategy's arguments, if it takes any (e.g. "4": a block size); throws Error when the
  // strategy is not loaded or refuses the arguments.
  static Placement shard(int64_t dim, std::string strategy = "shard", std::string arguments = {});
  static Placement replicate();
  static Placement partial(std::string reduce_op = "sum");
  // One placement ("S(0)", "R", "P(max)", "B(1)", "Shard(dim=0)", "Replicate()", "Partial(max)");
  // throws Error naming the text and the forms known.
  static Placement parse(const std::string& text);

  Kind kind() const { return kind_; }
  bool is_shard() const { return kind_ == Kind::Shard; }
  bool is_shard(int64_t dim) const { return kind_ == Kind::Shard && dim_ == dim; }
  bool is_replicate() const { return kind_ == Kind::Replicate; }
  bool is_partial() const { return kind_ == Kind::Partial; }
  int64_t dim() const { return dim_; }  // shard dim (may be negative until bound to a tensor)
  const std::string& strategy() const { return strategy_; }
  const std::string& reduce_op() const { return reduce_op_; }  // partial only
  const std::string& arguments() const { return arguments_; }  // shard-like only; "" when none
  Placement with_dim(int64_t dim) const;
  std::string to_string() const;  // the short form: "S(0)", "R", "P(sum)"
  std::string repr() const;       // PyTorch's form: "Shard(dim=0)", "Replicate()", "Partial(sum)"
  bool operator==(const Placement& other) const;

 private:
  Kind kind_ = Kind::Replicate;
  std::string strategy_ = "replicate";
  int64_t dim_ = 0;
  std::string reduce_op_;
  std::string arguments_;
};

inline Placement Shard(int64_t dim) { return Placement::shard(dim); }
inline Placement BalancedShard(int64_t dim) { return Placement::shard(dim, "balanced_shard"); }
// PyTorch's _StridedShard(dim, split_factor): dim cut into split_factor blocks (torch.chunk), each
// shard holding its chunk of every block; "SS(d, k)" in text.
inline Placement StridedShard(int64_t dim, int64_t split_factor) {
  return Placement::shard(dim, "strided_shard", std::to_string(split_factor));
}
inline Placement Replicate() { return Placement::replicate(); }
inline Placement Partial(std::string reduce_op = "sum") { return Placement::partial(std::move(reduce_op)); }

using Placements = std::vector<Placement>;
// "S(0),R" <-> {Shard(0), Replicate()}; parsing also takes PyTorch's tuple form
// "(Shard(dim=0), Replicate())", which placements_repr prints.
Placements parse_placements(const std::string& text);
std::string placements_text(const Placements& placements);
std::string placements_repr(const Placements& placements);
// PyTorch's forms, as print(placement) and print(dt.placements) show them.
std::ostream& operator<<(std::ostream& os, const Placement& placement);
std::ostream& operator<<(std::ostream& os, const Placements& placements);

}  // namespace tessera

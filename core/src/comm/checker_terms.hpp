// What one element of a symbolic buffer holds, for the schedule checker: the set of input elements
// it combines, as (rank, index) terms with at most one term per rank.
//
// The set is stored as runs of consecutive ranks that share an index, not term by term: the
// values a collective builds are almost always "input element k of ranks a..b" (a ring's partial
// sums are a range of ranks round the ring, a tree's a subtree, direct's a prefix in rank order),
// so a set of any size is one or two runs and combining two sets costs their runs, not their
// terms. That makes verifying a schedule linear in its steps rather than in steps times the group
// size. The representation is canonical (runs sorted, disjoint, maximal), so two sets are equal
// exactly when their representations are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::comm::checker {

// Ranks first .. first + length - 1, each contributing input element `index`.
struct Run {
  int32_t first;
  int32_t length;
  int64_t index;
  bool operator==(const Run&) const = default;
};

// One contribution, as messages list them.
struct Term {
  int32_t rank;
  int64_t index;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads the 0 of a defaulted <=>
  auto operator<=>(const Term&) const = default;
};

class Terms {
 public:
  // Two markers stand for values no collective ever wants, and absorb whatever they combine with.
  enum class Marker : uint8_t { None, Unspecified, Repeated };

  static Terms marker(Marker m);
  static Terms single(int32_t rank, int64_t index);
  static Terms ranks(int32_t first, int32_t count, int64_t index);  // ranks first .. first + count - 1

  bool is(Marker m) const { return marker_ == m; }
  Marker marker() const { return marker_; }
  // The same contributions, `delta` elements further on (what the element `delta` places later in
  // an interval holds). Markers stay as they are.
  Terms shifted(int64_t delta) const;
  // Whether this equals before.shifted(delta), without building it.
  bool continues(const Terms& before, int64_t delta) const;
  // Every term of both; Repeated when a rank would appear twice (no collective wants that, and no
  // later step can take it out again).
  static Terms combined(const Terms& a, const Terms& b);
  // The terms one by one, sorted by rank: for messages only.
  std::vector<Term> expanded() const;

  bool operator==(const Terms&) const = default;

 private:
  Marker marker_ = Marker::None;
  std::vector<Run> runs_;
};

// "{r0[3], r1[3], ... (n more)}" or what a marker means.
std::string terms_text(const Terms& terms);
// "; missing {...}; not wanted {...}" between what an element holds and what it should.
std::string difference_text(const Terms& have, const Terms& want);

}  // namespace tessera::comm::checker

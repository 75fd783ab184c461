#include "comm/checker_terms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace tessera::comm::checker {

Terms Terms::marker(Marker m) {
  Terms t;
  t.marker_ = m;
  return t;
}

Terms Terms::single(int32_t rank, int64_t index) { return ranks(rank, 1, index); }

Terms Terms::ranks(int32_t first, int32_t count, int64_t index) {
  Terms t;
  if (count > 0) t.runs_.push_back({first, count, index});
  return t;
}

Terms Terms::shifted(int64_t delta) const {
  Terms t = *this;
  for (Run& r : t.runs_) r.index += delta;
  return t;
}

bool Terms::continues(const Terms& before, int64_t delta) const {
  if (marker_ != before.marker_ || runs_.size() != before.runs_.size()) return false;
  for (size_t i = 0; i < runs_.size(); ++i) {
    const Run& a = runs_[i];
    const Run& b = before.runs_[i];
    if (a.first != b.first || a.length != b.length || a.index != b.index + delta) return false;
  }
  return true;
}

Terms Terms::combined(const Terms& a, const Terms& b) {
  for (Marker m : {Marker::Unspecified, Marker::Repeated}) {
    if (a.marker_ == m) return a;
    if (b.marker_ == m) return b;
  }
  Terms out;
  out.runs_.reserve(a.runs_.size() + b.runs_.size());
  size_t i = 0;
  size_t j = 0;
  while (i < a.runs_.size() || j < b.runs_.size()) {
    const bool take_a = j == b.runs_.size() || (i < a.runs_.size() && a.runs_[i].first < b.runs_[j].first);
    const Run& next = take_a ? a.runs_[i++] : b.runs_[j++];
    if (!out.runs_.empty()) {
      Run& last = out.runs_.back();
      const int64_t last_end = int64_t{last.first} + last.length;
      if (last_end > next.first) return marker(Marker::Repeated);
      // Kept maximal, so that equal sets have equal representations.
      if (last_end == next.first && last.index == next.index) {
        last.length += next.length;
        continue;
      }
    }
    out.runs_.push_back(next);
  }
  return out;
}

std::vector<Term> Terms::expanded() const {
  std::vector<Term> terms;
  for (const Run& r : runs_)
    for (int32_t k = 0; k < r.length; ++k) terms.push_back({r.first + k, r.index});
  return terms;
}

namespace {

// At most this many terms are listed in a message; a group of 1024 would drown the point.
constexpr size_t kTermsShown = 12;

std::string list_text(const std::vector<Term>& terms) {
  std::string text = "{";
  for (size_t i = 0; i < terms.size() && i < kTermsShown; ++i)
    text += fmt::format("{}r{}[{}]", i ? ", " : "", terms[i].rank, terms[i].index);
  if (terms.size() > kTermsShown) text += fmt::format(", ... ({} more)", terms.size() - kTermsShown);
  return text + "}";
}

}  // namespace

std::string terms_text(const Terms& terms) {
  if (terms.is(Terms::Marker::Unspecified))
    return "an unspecified value (never written, or reduced into before being written)";
  if (terms.is(Terms::Marker::Repeated)) return "a value that combines one rank's input more than once";
  return list_text(terms.expanded());
}

std::string difference_text(const Terms& have_terms, const Terms& want_terms) {
  if (!have_terms.is(Terms::Marker::None)) return {};
  const std::vector<Term> have = have_terms.expanded();
  const std::vector<Term> want = want_terms.expanded();
  std::vector<Term> missing;
  std::vector<Term> extra;
  std::set_difference(want.begin(), want.end(), have.begin(), have.end(), std::back_inserter(missing));
  std::set_difference(have.begin(), have.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::string text;
  if (!missing.empty()) text += "; missing " + list_text(missing);
  if (!extra.empty()) text += "; not wanted " + list_text(extra);
  return text;
}

}  // namespace tessera::comm::checker

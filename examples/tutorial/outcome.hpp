// Comparing and printing the (actual, expected) pairs the tutorial scenarios return.
//
// Every scenario function returns std::pair<T, T>: what Tessera computed and what it should be,
// computed independently (plain tensors, plain C++). Tests and the demo only compare the two.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <tessera/tessera.hpp>

namespace tutorial {

namespace ts = tessera;

// Declared first so that each template finds the others (their arguments live in std::).
template <class T>
bool same(const T& a, const T& b);
template <class A, class B>
bool same(const std::pair<A, B>& a, const std::pair<A, B>& b);
template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b);
template <class K, class V>
bool same(const std::map<K, V>& a, const std::map<K, V>& b);
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
std::string describe(T v);
template <class A, class B>
std::string describe(const std::pair<A, B>& p);
template <class T>
std::string describe(const std::vector<T>& v);
template <class K, class V>
std::string describe(const std::map<K, V>& m);

inline bool same(const ts::Tensor& a, const ts::Tensor& b) {
  if (a.is_local() != b.is_local() || a.dtype() != b.dtype()) return false;
  if (a.is_local() && a.ranks() != b.ranks()) return false;
  // Float results built along different paths may differ in the last bits.
  return ts::is_floating(a.dtype()) ? ts::allclose(a, b, 1e-5, 1e-5) : ts::equal(a, b);
}
template <class T>
bool same(const T& a, const T& b) {
  return a == b;
}
template <class A, class B>
bool same(const std::pair<A, B>& a, const std::pair<A, B>& b) {
  return same(a.first, b.first) && same(a.second, b.second);
}
template <class T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}
template <class K, class V>
bool same(const std::map<K, V>& a, const std::map<K, V>& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || !same(ia->second, ib->second)) return false;
  return true;
}

inline std::string describe(const ts::Tensor& t) { return t.to_string(); }
inline std::string describe(const ts::RankSet& s) { return s.to_string(); }
inline std::string describe(const std::string& s) { return '"' + s + '"'; }
inline std::string describe(bool b) { return b ? "true" : "false"; }
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int>>
std::string describe(T v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
template <class A, class B>
std::string describe(const std::pair<A, B>& p) {
  return "(" + describe(p.first) + ", " + describe(p.second) + ")";
}
template <class T>
std::string describe(const std::vector<T>& v) {
  std::string text = "[";
  for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + describe(v[i]);
  return text + "]";
}
template <class K, class V>
std::string describe(const std::map<K, V>& m) {
  std::string text = "{";
  for (const auto& [k, v] : m) text += (text.size() > 1 ? ", " : "") + describe(k) + ": " + describe(v);
  return text + "}";
}

// One scenario as the demo runs it: its name and a check that returns (ok, actual, expected).
struct Check {
  bool ok;
  std::string actual;
  std::string expected;
};
template <class T>
Check check(const std::pair<T, T>& outcome) {
  return {same(outcome.first, outcome.second), describe(outcome.first), describe(outcome.second)};
}

}  // namespace tutorial

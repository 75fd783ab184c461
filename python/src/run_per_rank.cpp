// ts.run_per_rank (PyTorch: maybe_run_for_local_tensor): local arguments unwrapped per rank,
// results combined as ops combine them.
#include "run_per_rank.hpp"

#include <nanobind/stl/string.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rank_callback.hpp"

namespace tessera::python {
namespace {

// The rank set of a local argument (a local tensor or a ts.LocalInt), or nullopt for a plain one.
std::optional<RankSet> ranks_of(nb::handle value) {
  if (nb::isinstance<Tensor>(value)) {
    const Tensor& t = nb::cast<const Tensor&>(value);
    if (t.is_local()) return t.ranks();
  } else if (nb::isinstance<LocalInt>(value)) {
    return nb::cast<const LocalInt&>(value).ranks();
  }
  return std::nullopt;
}

nb::object at_rank(nb::handle value, int rank) {
  if (nb::isinstance<Tensor>(value)) {
    const Tensor& t = nb::cast<const Tensor&>(value);
    if (t.is_local()) return nb::cast(t.shard(rank));
  } else if (nb::isinstance<LocalInt>(value)) {
    return nb::int_(nb::cast<const LocalInt&>(value).at(rank));
  }
  return nb::borrow(value);
}

std::string per_rank_values(const RankSet& ranks, const std::vector<nb::object>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]) + ": " + nb::cast<std::string>(nb::repr(values[i]));
  return text;
}

// Tensors -> a local tensor; ints -> an int or ts.LocalInt; None -> None; tuples and lists ->
// combined element by element; anything else must be equal on every rank.
nb::object combine(const RankSet& ranks, const std::vector<nb::object>& values) {
  auto all = [&](auto&& predicate) {
    for (const nb::object& v : values)
      if (!predicate(v)) return false;
    return true;
  };
  if (all([](const nb::object& v) { return nb::isinstance<Tensor>(v); })) {
    std::vector<std::pair<int, Tensor>> shards;
    for (size_t i = 0; i < values.size(); ++i) shards.emplace_back(ranks[i], nb::cast<Tensor>(values[i]));
    return nb::cast(without_gil([&] { return local_tensor(RankMap<Tensor>(std::move(shards))); }));
  }
  if (all([](const nb::object& v) { return v.is_none(); })) return nb::none();
  if (all([](const nb::object& v) { return PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()); })) {
    std::vector<std::pair<int, int64_t>> ints;
    for (size_t i = 0; i < values.size(); ++i) ints.emplace_back(ranks[i], nb::cast<int64_t>(values[i]));
    return to_python(SymInt(LocalInt(RankMap<int64_t>(std::move(ints)))));
  }
  const bool tuples = all([](const nb::object& v) { return PyTuple_Check(v.ptr()); });
  const bool lists = all([](const nb::object& v) { return PyList_Check(v.ptr()); });
  if (tuples || lists) {
    const size_t size = nb::len(values.front());
    if (!all([&](const nb::object& v) { return nb::len(v) == size; }))
      throw Error("ts.run_per_rank: fn returned sequences of different lengths per rank (" +
                  per_rank_values(ranks, values) + "); they must have one length on every rank");
    nb::list out;
    for (size_t k = 0; k < size; ++k) {
      std::vector<nb::object> items;
      for (const nb::object& v : values) items.emplace_back(v[k]);
      out.append(combine(ranks, items));
    }
    return tuples ? nb::object(nb::tuple(out)) : nb::object(out);
  }
  for (const nb::object& v : values)
    if (!v.equal(values.front()))
      throw Error(
          "ts.run_per_rank: fn returned different values per rank (" + per_rank_values(ranks, values) +
          "); only tensors and ints may differ between ranks, other results must be equal on every rank");
  return values.front();
}

nb::object run_per_rank_py(nb::callable fn, nb::args args, nb::kwargs kwargs) {
  // The ranks to run: the mode's inside one; outside, those of the local arguments (none: call once).
  std::optional<RankSet> ranks;
  if (LocalMode* mode = active_local_mode()) ranks = mode->ranks();
  std::optional<RankSet> first;
  auto check = [&](nb::handle value, const std::string& name) {
    std::optional<RankSet> own = ranks_of(value);
    if (!own) return;
    if (!first) first = own;
    const RankSet& expected = ranks ? *ranks : *first;
    if (*own != expected)
      throw Error("ts.run_per_rank: argument " + name + " is local over ranks " + own->to_string() + " but " +
                  (ranks ? "the local mode has ranks " : "an earlier argument is local over ranks ") +
                  expected.to_string() + "; every local argument must cover the same ranks");
  };
  for (size_t i = 0; i < args.size(); ++i) check(args[i], std::to_string(i));
  for (auto [key, value] : kwargs) check(value, nb::cast<std::string>(key));
  if (!ranks) ranks = first;
  if (!ranks) return fn(*args, **kwargs);

  // The library's run_per_rank does the per-rank loop (and marks it as a per-rank region, where
  // collectives are refused); its argument is a local int of the ranks themselves, so each call
  // learns which rank it serves. Results stay Python objects until every rank is done.
  std::vector<std::pair<int, int64_t>> identity;
  for (int r : *ranks) identity.emplace_back(r, r);
  const SymInt rank_of_call(LocalInt(RankMap<int64_t>(std::move(identity))));
  std::vector<nb::object> results(ranks->size());
  Callback callback(std::move(fn), "ts.run_per_rank");
  callback.run([&] {
    tessera::run_per_rank(
        [&](int64_t rank) {
          callback.call(static_cast<int>(rank), [&](nb::callable& f) {
            nb::list unwrapped;
            for (nb::handle a : args) unwrapped.append(at_rank(a, static_cast<int>(rank)));
            nb::dict named;
            for (auto [key, value] : kwargs) named[key] = at_rank(value, static_cast<int>(rank));
            nb::object result = f(*nb::tuple(unwrapped), **named);
            for (size_t i = 0; i < ranks->size(); ++i)
              if ((*ranks)[i] == rank) results[i] = std::move(result);
            return 0;
          });
        },
        rank_of_call);
  });
  return combine(*ranks, results);
}

}  // namespace

void bind_run_per_rank(nb::module_& m) {
  m.def(
      "run_per_rank", &run_per_rank_py, nb::arg("fn"), nb::arg("args"), nb::arg("kwargs"),
      "Calls fn once per rank with local arguments unwrapped to that rank's value (a local tensor to "
      "its shard, a ts.LocalInt to an int) and combines the results: tensors into a local tensor, ints "
      "into an int or ts.LocalInt; other results must be equal on every rank. Outside a mode with no "
      "local argument, calls fn once. fn must not issue collectives. (PyTorch: maybe_run_for_local_tensor)");
}

}  // namespace tessera::python

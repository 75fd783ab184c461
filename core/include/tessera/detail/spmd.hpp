// The SPMD fan-out behind every op (internal; public only because run_per_rank is a template).
//
// spmd(op, f, args...) calls f(args...) directly when no argument is local. Otherwise it calls f
// once per rank with each local argument replaced by that rank's value (a local tensor by its
// shard, a per-rank Scalar or SymInt by its value, a SymShape by that rank's shape) and plain
// arguments passed unchanged, then combines the per-rank results:
//   Tensor -> local tensor; int64_t / SymInt -> SymInt (plain when all ranks agree);
//   Scalar -> one Scalar when all agree, a per-rank Scalar for integers, else an error;
//   bool / double -> must agree on every rank, else an error showing the values;
//   std::vector<Tensor> -> a vector of local tensors; void -> nothing.
// Ranks may run in parallel on the rank thread pool; results never depend on it.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/rank_map.hpp"
#include "tessera/scalar.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"

namespace tessera {

Tensor local_tensor(RankMap<Tensor> shards);

namespace detail {

// How one kind of argument takes part: is it local, over which ranks, its value on a rank, and
// roughly how many elements one rank touches (to decide whether ranks run in parallel).
// shard_identity / may_share_shards: see spmd_pure below (defined in the library).
void append_shard_identity(const Tensor& local, int rank, std::vector<int64_t>& words);
bool may_share_shards(const Tensor& local);
Tensor replica_of(const Tensor& plain);
// replica_of(plain) for ranks[first], ranks[first + 1], ... appended to `shards`, made together.
void append_replicas(const Tensor& plain, const RankSet& ranks, size_t first,
                     std::vector<std::pair<int, Tensor>>& shards);
// Whether every rank's shard of a local tensor is one and the same TensorImpl (shapes-only results
// are held so: replica_of). See spmd_alias below.
bool shards_are_one_object(const Tensor& local);
// Whether every rank's shard of a local tensor is a replica of one result (the same bytes and
// layout object): its ranks' identity words are then equal (see spmd_pure below).
bool shards_are_replicas(const Tensor& local);
// Whether a local tensor's shards hold shapes only and no MemoryCounter watches: ranks may then
// hold one result object (see spmd_alias below).
bool shares_shapes_only_results(const Tensor& local);

// How one kind of argument takes part: is it local, over which ranks, its value on a rank, and
// roughly how many elements one rank touches (to decide whether ranks run in parallel). For
// spmd_pure: `identity` appends words that are equal on two ranks only when the ranks' values are
// the same (plain arguments add none), and `may_share` says whether ranks' values can be the same
// at all (cheaply, before any words are made).
template <class T>
struct SpmdArg {
  static const RankSet* ranks(const T&) { return nullptr; }
  static const T& at(const T& value, int) { return value; }
  static int64_t work(const T&) { return 0; }
  static void identity(const T&, int, std::vector<int64_t>&) {}
  static bool may_share(const T&) { return true; }
};

template <>
struct SpmdArg<Tensor> {
  static const RankSet* ranks(const Tensor& t);
  static Tensor at(const Tensor& t, int rank) { return t.is_local() ? t.shard(rank) : t; }
  static int64_t work(const Tensor& t);
  static void identity(const Tensor& t, int rank, std::vector<int64_t>& words) {
    if (t.is_local()) append_shard_identity(t, rank, words);
  }
  static bool may_share(const Tensor& t) { return !t.is_local() || may_share_shards(t); }
};

template <>
struct SpmdArg<Scalar> {
  static const RankSet* ranks(const Scalar& s);
  static Scalar at(const Scalar& s, int rank) { return s.at(rank); }
  static int64_t work(const Scalar&) { return 0; }
  static void identity(const Scalar& s, int rank, std::vector<int64_t>& words) {
    if (ranks(s) == nullptr) return;
    const Scalar v = s.at(rank);
    words.push_back(v.is_integral() ? 1 : 0);
    words.push_back(v.is_integral() ? v.to_int() : std::bit_cast<int64_t>(v.to_double()));
  }
  static bool may_share(const Scalar&) { return true; }
};

template <>
struct SpmdArg<SymInt> {
  static const RankSet* ranks(const SymInt& s);
  static int64_t at(const SymInt& s, int rank) { return s.at(rank); }
  static int64_t work(const SymInt&) { return 0; }
  static void identity(const SymInt& s, int rank, std::vector<int64_t>& words) {
    if (ranks(s) != nullptr) words.push_back(s.at(rank));
  }
  static bool may_share(const SymInt&) { return true; }
};

template <>
struct SpmdArg<SymShape> {
  static const RankSet* ranks(const SymShape& s);
  static SymShape at(const SymShape& s, int rank) { return SymShape(s.at(rank)); }
  static int64_t work(const SymShape& s);
  static void identity(const SymShape& s, int rank, std::vector<int64_t>& words) {
    if (ranks(s) == nullptr) return;
    const Shape shape = s.at(rank);
    words.push_back(static_cast<int64_t>(shape.size()));
    words.insert(words.end(), shape.begin(), shape.end());
  }
  static bool may_share(const SymShape&) { return true; }
};

template <>
struct SpmdArg<std::vector<Tensor>> {
  static const RankSet* ranks(const std::vector<Tensor>& ts);
  static std::vector<Tensor> at(const std::vector<Tensor>& ts, int rank);
  static int64_t work(const std::vector<Tensor>& ts);
  static void identity(const std::vector<Tensor>& ts, int rank, std::vector<int64_t>& words) {
    for (const Tensor& t : ts) SpmdArg<Tensor>::identity(t, rank, words);
  }
  static bool may_share(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts)
      if (!SpmdArg<Tensor>::may_share(t)) return false;
    return true;
  }
};

template <>
struct SpmdArg<std::vector<SymInt>> {
  static const RankSet* ranks(const std::vector<SymInt>& v);
  static std::vector<int64_t> at(const std::vector<SymInt>& v, int rank);
  static int64_t work(const std::vector<SymInt>&) { return 0; }
  static void identity(const std::vector<SymInt>& v, int rank, std::vector<int64_t>& words) {
    for (const SymInt& s : v) SpmdArg<SymInt>::identity(s, rank, words);
  }
  static bool may_share(const std::vector<SymInt>&) { return true; }
};

// Errors shared by the templates below (defined in the library).
[[noreturn]] void throw_rank_set_mismatch(const char* op, const RankSet& a, const RankSet& b);
[[noreturn]] void throw_ranks_disagree(const char* op, const std::string& values);

// Runs task(i) for every rank index i of `ranks`, in parallel when the work is large enough, with
// local mode disabled on the executing thread; a failure is rethrown naming the op and the lowest
// failing rank.
void run_ranks(const char* op, const RankSet& ranks, int64_t work_per_rank,
               const std::function<void(size_t)>& task);
// run_ranks for one rank, `task(context)`: without the bookkeeping for many (no allocation).
void run_rank(const char* op, int rank, void (*task)(void*), void* context);
// Groups rank indices by equal identity words (index i's are words[starts[i] .. starts[i + 1])):
// `leaders` gets the first index of each group, ascending, and leader_of[i] the position in
// `leaders` of index i's group.
void group_by_identity(const std::vector<int64_t>& words, const std::vector<size_t>& starts,
                       std::vector<size_t>& leader_of, std::vector<size_t>& leaders);

template <class R>
struct SpmdResult;

template <>
struct SpmdResult<Tensor> {
  static Tensor combine(const char*, const RankSet& ranks, std::vector<std::optional<Tensor>>& values) {
    std::vector<std::pair<int, Tensor>> shards;
    shards.reserve(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i) shards.emplace_back(ranks[i], std::move(*values[i]));
    return local_tensor(RankMap<Tensor>(std::move(shards)));
  }
};

template <>
struct SpmdResult<std::vector<Tensor>> {
  static std::vector<Tensor> combine(const char* op, const RankSet& ranks,
                                     std::vector<std::optional<std::vector<Tensor>>>& values);
};

template <>
struct SpmdResult<int64_t> {
  static SymInt combine(const char*, const RankSet& ranks, std::vector<std::optional<int64_t>>& values) {
    std::vector<std::pair<int, int64_t>> entries;
    for (size_t i = 0; i < ranks.size(); ++i) entries.emplace_back(ranks[i], *values[i]);
    return SymInt(LocalInt(RankMap<int64_t>(std::move(entries))));
  }
};

template <>
struct SpmdResult<SymInt> {
  static SymInt combine(const char* op, const RankSet& ranks, std::vector<std::optional<SymInt>>& values) {
    std::vector<std::optional<int64_t>> plain(values.size());
    for (size_t i = 0; i < values.size(); ++i) plain[i] = values[i]->at(ranks[i]);
    return SpmdResult<int64_t>::combine(op, ranks, plain);
  }
};

template <>
struct SpmdResult<Scalar> {
  static Scalar combine(const char* op, const RankSet& ranks, std::vector<std::optional<Scalar>>& values);
};

// bool, double, and anything else comparable: every rank must give the same answer.
template <class R>
struct SpmdResult {
  static R combine(const char* op, const RankSet& ranks, std::vector<std::optional<R>>& values) {
    bool agree = true;
    for (const auto& v : values) agree = agree && *v == *values.front();
    if (!agree) {
      std::string text;
      for (size_t i = 0; i < ranks.size(); ++i) {
        if constexpr (std::is_arithmetic_v<R>)
          text += (i ? ", " : "") + std::to_string(ranks[i]) + ": " + std::to_string(*values[i]);
        else
          text += (i ? ", " : "") + std::to_string(ranks[i]) + ": <differs>";
      }
      throw_ranks_disagree(op, text);
    }
    return std::move(*values.front());
  }
};

// The rank set shared by every local argument, or nullptr when none is local.
template <class... Args>
const RankSet* common_ranks([[maybe_unused]] const char* op, const Args&... args) {
  const RankSet* found = nullptr;
  [[maybe_unused]] auto visit = [&](const RankSet* ranks) {
    if (ranks == nullptr) return;
    if (found != nullptr && *found != *ranks) throw_rank_set_mismatch(op, *found, *ranks);
    if (found == nullptr) found = ranks;
  };
  (visit(SpmdArg<std::decay_t<Args>>::ranks(args)), ...);
  return found;
}

template <class F, class... Args>
auto spmd_over(const char* op, const RankSet& ranks, F&& f, const Args&... args) {
  if (const RankSet* own = common_ranks(op, args...); own != nullptr && *own != ranks)
    throw_rank_set_mismatch(op, ranks, *own);
  using R = std::invoke_result_t<F&, decltype(SpmdArg<std::decay_t<Args>>::at(args, 0))...>;
  const int64_t work = (int64_t{0} + ... + SpmdArg<std::decay_t<Args>>::work(args));
  if constexpr (std::is_void_v<R>) {
    run_ranks(op, ranks, work, [&](size_t i) { f(SpmdArg<std::decay_t<Args>>::at(args, ranks[i])...); });
  } else {
    std::vector<std::optional<R>> values(ranks.size());
    run_ranks(op, ranks, work,
              [&](size_t i) { values[i].emplace(f(SpmdArg<std::decay_t<Args>>::at(args, ranks[i])...)); });
    return SpmdResult<R>::combine(op, ranks, values);
  }
}

template <class F, class... Args>
auto spmd(const char* op, F&& f, const Args&... args)
    -> decltype(spmd_over(op, std::declval<const RankSet&>(), f, args...)) {
  if (const RankSet* ranks = common_ranks(op, args...)) return spmd_over(op, *ranks, f, args...);
  using R = std::invoke_result_t<F&, decltype(SpmdArg<std::decay_t<Args>>::at(args, 0))...>;
  if constexpr (std::is_void_v<R>) {
    f(SpmdArg<std::decay_t<Args>>::at(args, 0)...);
  } else {
    return R(f(SpmdArg<std::decay_t<Args>>::at(args, 0)...));
  }
}

// A result for a rank that did not compute it: replicas of the computing rank's tensors.
inline Tensor replica_of_result(const Tensor& t) { return replica_of(t); }
inline std::vector<Tensor> replica_of_result(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(replica_of(t));
  return out;
}

// Whether `value` is the same on every rank of `ranks`: a local tensor whose shards are one
// TensorImpl (not merely alike: f may return a view of it), per-rank values equal everywhere.
template <class T>
bool same_object_on_every_rank(const T& value, const RankSet& ranks) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return !value.is_local() || shards_are_one_object(value);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (const Tensor& t : value)
      if (!same_object_on_every_rank(t, ranks)) return false;
    return true;
  } else {
    if (SpmdArg<T>::ranks(value) == nullptr) return true;
    std::vector<int64_t> first, other;
    SpmdArg<T>::identity(value, ranks[0], first);
    for (size_t i = 1; i < ranks.size(); ++i) {
      other.clear();
      SpmdArg<T>::identity(value, ranks[i], other);
      if (other != first) return false;
    }
    return true;
  }
}

// Whether `value` is alike on every rank of `ranks`, known without writing out its identity words:
// one object everywhere or, a local tensor, replicas of one result (what replicated ops return).
template <class T>
bool alike_without_words(const T& value, const RankSet& ranks) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return !value.is_local() || shards_are_one_object(value) || shards_are_replicas(value);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (const Tensor& t : value)
      if (!alike_without_words(t, ranks)) return false;
    return true;
  } else {
    return same_object_on_every_rank(value, ranks);
  }
}

// Whether every rank's arguments have the identity words of the first rank's.
template <class... Args>
bool all_alike(const RankSet& ranks, const Args&... args) {
  std::vector<int64_t> first, other;
  (SpmdArg<std::decay_t<Args>>::identity(args, ranks[0], first), ...);
  other.reserve(first.size());
  for (size_t i = 1; i < ranks.size(); ++i) {
    other.clear();
    (SpmdArg<std::decay_t<Args>>::identity(args, ranks[i], other), ...);
    if (other != first) return false;
  }
  return true;
}

// Runs f once per group of ranks whose identity words are equal (append_words(rank, words) appends a
// rank's): the group's first rank (its leader) computes, and rank i gets share(leader's result,
// whether i is the leader). When no two ranks group, spmd_over runs f on every rank.
template <class Words, class Share, class F, class... Args>
auto spmd_by_groups(const char* op, const RankSet& ranks, Words&& append_words, Share&& share, F&& f,
                    const Args&... args) {
  using R = std::invoke_result_t<F&, decltype(SpmdArg<std::decay_t<Args>>::at(args, 0))...>;
  // The words of rank index i are words[starts[i] .. starts[i + 1]).
  std::vector<int64_t> words;
  std::vector<size_t> starts(ranks.size() + 1, 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    starts[i] = words.size();
    append_words(ranks[i], words);
    if (i == 0) words.reserve(words.size() * ranks.size());  // ranks' words are usually alike in length
  }
  starts[ranks.size()] = words.size();
  std::vector<size_t> leader_of(ranks.size());
  std::vector<size_t> leaders;
  group_by_identity(words, starts, leader_of, leaders);
  if (leaders.size() == ranks.size()) return spmd_over(op, ranks, f, args...);
  std::vector<int> leader_ranks;
  for (size_t i : leaders) leader_ranks.push_back(ranks[i]);
  const RankSet computing(std::move(leader_ranks));
  const int64_t work = (int64_t{0} + ... + SpmdArg<std::decay_t<Args>>::work(args));
  std::vector<std::optional<R>> computed(computing.size());
  run_ranks(op, computing, work, [&](size_t i) {
    computed[i].emplace(f(SpmdArg<std::decay_t<Args>>::at(args, computing[i])...));
  });
  std::vector<std::optional<R>> values(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    const size_t slot = leader_of[i];
    values[i] = share(*computed[slot], ranks[i] == computing[slot]);
  }
  return SpmdResult<R>::combine(op, ranks, values);
}

// spmd_over for an f that computes fresh tensors (one, or a vector) from its arguments alone (no
// rank, no state, no aliasing of an input): ranks whose arguments are identical (the same shard
// bytes and layout, equal per-rank values) get one result, computed once and shared as
// copy-on-write replicas.
// Replicated inputs so give replicated outputs at the cost of one rank. f then runs once per
// distinct argument set, not once per rank, so only ops may use this, never user functions.
template <class F, class... Args>
auto spmd_pure_over(const char* op, const RankSet& ranks, F&& f, const Args&... args) {
  using R = std::invoke_result_t<F&, decltype(SpmdArg<std::decay_t<Args>>::at(args, 0))...>;
  if constexpr (!std::is_same_v<R, Tensor> && !std::is_same_v<R, std::vector<Tensor>>) {
    return spmd_over(op, ranks, f, args...);
  } else {
    if (ranks.size() < 2 || !(true && ... && SpmdArg<std::decay_t<Args>>::may_share(args)))
      return spmd_over(op, ranks, f, args...);
    if (const RankSet* own = common_ranks(op, args...); own != nullptr && *own != ranks)
      throw_rank_set_mismatch(op, ranks, *own);
    // Arguments that are one object on every rank (shapes-only shards of one layout) or replicas
    // of one result are alike without their words.
    if ((true && ... && alike_without_words(args, ranks)) || all_alike(ranks, args...)) {
      // The usual case (replicas in): one result, computed on the first rank, and replicas of it
      // for the others, without the grouping below and its lists.
      std::optional<R> computed;
      auto compute = [&] { computed.emplace(f(SpmdArg<std::decay_t<Args>>::at(args, ranks[0])...)); };
      run_rank(
          op, ranks[0], [](void* task) { (*static_cast<decltype(compute)*>(task))(); }, &compute);
      if constexpr (std::is_same_v<R, Tensor>) {
        std::vector<std::pair<int, Tensor>> shards;
        shards.reserve(ranks.size());
        shards.emplace_back(ranks[0], *computed);
        append_replicas(*computed, ranks, 1, shards);
        return local_tensor(RankMap<Tensor>(std::move(shards)));
      } else {
        std::vector<std::optional<R>> values(ranks.size());
        values[0] = std::move(computed);
        for (size_t i = 1; i < ranks.size(); ++i) values[i] = replica_of_result(*values[0]);
        return SpmdResult<R>::combine(op, ranks, values);
      }
    }
    // Groups' followers hold copy-on-write replicas of their leader's result.
    return spmd_by_groups(
        op, ranks,
        [&]([[maybe_unused]] int rank, [[maybe_unused]] std::vector<int64_t>& words) {
          (SpmdArg<std::decay_t<Args>>::identity(args, rank, words), ...);
        },
        [](const R& computed, bool leader) { return leader ? computed : replica_of_result(computed); }, f,
        args...);
  }
}

// The words by which spmd_alias groups ranks: a local tensor's shard object itself (f may return a
// view of it, so a layout is not enough), a per-rank value's identity words.
template <class T>
void append_object_identity(const T& value, int rank, std::vector<int64_t>& words) {
  if constexpr (std::is_same_v<T, Tensor>) {
    if (value.is_local())
      words.push_back(
          static_cast<int64_t>(reinterpret_cast<uintptr_t>(value.shards().at(rank).impl().get())));
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (const Tensor& t : value) append_object_identity(t, rank, words);
  } else {
    SpmdArg<T>::identity(value, rank, words);
  }
}

// Whether an argument is a local tensor (or holds one) whose ranks may share result objects.
template <class T>
bool shares_results(const T& value) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return value.is_local() && shares_shapes_only_results(value);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (const Tensor& t : value)
      if (shares_results(t)) return true;
    return false;
  } else {
    return false;
  }
}

// spmd_alias over groups of ranks whose arguments are the very same objects (and equal per-rank
// values): each group's first rank computes, and the group holds its result object. Shapes only:
// there no rank can write what another reads through it.
template <class F, class... Args>
auto spmd_alias_grouped(const char* op, const RankSet& ranks, F&& f, const Args&... args) {
  using R = std::invoke_result_t<F&, decltype(SpmdArg<std::decay_t<Args>>::at(args, 0))...>;
  // Every rank of a group holds its leader's result object.
  return spmd_by_groups(
      op, ranks,
      [&]([[maybe_unused]] int rank, [[maybe_unused]] std::vector<int64_t>& words) {
        (append_object_identity(args, rank, words), ...);
      },
      [](const R& computed, bool) { return computed; }, f, args...);
}

// spmd for an f that depends on its arguments alone (no rank, no state, no side effect) and may
// return a view of one (view ops, split, cat): when every rank's arguments are the very same
// objects, every rank's result is the very same too, so f runs once and every rank holds its
// result. On shapes only (no MemoryCounter watching), f runs once per group of ranks whose
// arguments are the very same objects (spmd_alias_grouped). Otherwise spmd. Only ops may use this,
// never user functions.
template <class F, class... Args>
auto spmd_alias(const char* op, F&& f, const Args&... args)
    -> decltype(spmd_over(op, std::declval<const RankSet&>(), f, args...)) {
  using R = std::invoke_result_t<F&, decltype(SpmdArg<std::decay_t<Args>>::at(args, 0))...>;
  if constexpr (std::is_same_v<R, Tensor> || std::is_same_v<R, std::vector<Tensor>>) {
    const RankSet* ranks = common_ranks(op, args...);
    if (ranks != nullptr && ranks->size() > 1 && (true && ... && same_object_on_every_rank(args, *ranks))) {
      std::optional<R> computed;
      auto compute = [&] { computed.emplace(f(SpmdArg<std::decay_t<Args>>::at(args, (*ranks)[0])...)); };
      run_rank(
          op, (*ranks)[0], [](void* task) { (*static_cast<decltype(compute)*>(task))(); }, &compute);
      if constexpr (std::is_same_v<R, Tensor>) {
        std::vector<std::pair<int, Tensor>> shards;
        shards.reserve(ranks->size());
        for (int rank : *ranks) shards.emplace_back(rank, *computed);
        return local_tensor(RankMap<Tensor>(std::move(shards)));
      } else {
        std::vector<std::optional<R>> values(ranks->size(), computed);
        return SpmdResult<R>::combine(op, *ranks, values);
      }
    }
    if (ranks != nullptr && ranks->size() > 1 && (false || ... || shares_results(args)))
      return spmd_alias_grouped(op, *ranks, f, args...);
  }
  return spmd(op, f, args...);
}

template <class F, class... Args>
auto spmd_pure(const char* op, F&& f, const Args&... args)
    -> decltype(spmd_over(op, std::declval<const RankSet&>(), f, args...)) {
  if (const RankSet* ranks = common_ranks(op, args...)) return spmd_pure_over(op, *ranks, f, args...);
  return spmd(op, f, args...);
}

}  // namespace detail
}  // namespace tessera

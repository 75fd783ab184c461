// The placement stage. The public API does not say what kind a strategy is, so it is asked the way a
// user would: Placement::shard(0, name) gives its prefix, and the prefix alone parses to a Replicate
// or Partial placement for those kinds (which have no layout to check) but not for a shard-like one
// (which needs a dim). A shard-like strategy then lays out arange(n) over k ranks through
// distribute_tensor, and what each rank holds is checked against plain arithmetic: every element of
// 0..n-1 held by exactly one shard, nothing else held, the full tensor rebuilt from the shards, and
// a 2-d tensor sharded along its second dim the same way in every row.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <tessera/device_mesh.hpp>
#include <tessera/dtensor.hpp>
#include <tessera/errors.hpp>
#include <tessera/factories.hpp>
#include <tessera/local.hpp>
#include <tessera/placement.hpp>
#include <vector>

#include "plugin_check/problem_list.hpp"
#include "plugin_check/stages.hpp"

namespace tessera::cli::check {
namespace {

const std::vector<int64_t> kDimSizes = {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17, 31, 100, 1000};
const std::vector<int> kShardCounts = {1, 2, 3, 4, 5, 7, 8, 16};

std::vector<std::vector<int64_t>> held_by_ranks(const DTensor& dt, int shards) {
  std::vector<std::vector<int64_t>> held;
  for (int rank = 0; rank < shards; ++rank)
    held.push_back(dt.to_local().shards().at(rank).to_vector<int64_t>());
  return held;
}

// Every element of 0..n-1 held by exactly one shard and nothing else held; empty when so.
std::string coverage_problem(const std::vector<std::vector<int64_t>>& held, int64_t n) {
  std::vector<int> holder(static_cast<size_t>(n), -1);
  for (size_t shard = 0; shard < held.size(); ++shard)
    for (int64_t element : held[shard]) {
      if (element < 0 || element >= n)
        return fmt::format("shard {} holds {}, which is not an element of a dim of {}", shard, element, n);
      int& first = holder[static_cast<size_t>(element)];
      if (first >= 0)
        return fmt::format("element {} is held by shard {} and shard {} (an overlap)", element, first, shard);
      first = static_cast<int>(shard);
    }
  for (int64_t element = 0; element < n; ++element)
    if (holder[static_cast<size_t>(element)] < 0)
      return fmt::format("no shard holds element {} (a gap)", element);
  return {};
}

// One dim size over one mesh of `shards` ranks; empty when every check holds.
std::string layout_problem(const Placement& along_dim0, const Placement& along_dim1, const DeviceMesh& mesh,
                           int shards, int64_t n) {
  Tensor vector, matrix;
  {
    DisabledLocalMode plain;
    vector = arange(n, TensorOptions(kInt64));
    matrix = arange(3 * n, TensorOptions(kInt64)).view({3, n});
  }
  const DTensor dt = distribute_tensor(vector, mesh, {along_dim0});
  const std::vector<std::vector<int64_t>> held = held_by_ranks(dt, shards);
  if (std::string problem = coverage_problem(held, n); !problem.empty()) return problem;
  const std::vector<int64_t> rebuilt = dt.full_tensor().to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    if (rebuilt.size() != static_cast<size_t>(n) || rebuilt[static_cast<size_t>(i)] != i)
      return fmt::format("the full tensor rebuilt from the shards differs from the original at element {}",
                         i);
  // Sharding the columns of a 3 x n matrix: each rank holds the same columns in every row.
  const DTensor columns = distribute_tensor(matrix, mesh, {along_dim1});
  for (int rank = 0; rank < shards; ++rank) {
    const Tensor local = columns.to_local().shards().at(rank);
    const std::vector<int64_t>& mine = held[static_cast<size_t>(rank)];
    const auto width = static_cast<int64_t>(mine.size());
    if (local.sizes() != Shape{3, width})
      return fmt::format(
          "sharding dim 1 of a 3 x {} tensor, rank {} holds shape [{}], expected [3, {}] as along dim 0", n,
          rank, fmt::join(local.sizes(), ", "), width);
    const std::vector<int64_t> values = local.to_vector<int64_t>();
    for (int64_t row = 0; row < 3; ++row)
      for (int64_t col = 0; col < width; ++col)
        if (values[static_cast<size_t>(row * width + col)] != row * n + mine[static_cast<size_t>(col)])
          return fmt::format(
              "sharding dim 1 of a 3 x {} tensor, rank {} row {} column {} holds {}, expected {}", n, rank,
              row, col, values[static_cast<size_t>(row * width + col)],
              row * n + mine[static_cast<size_t>(col)]);
  }
  return {};
}

enum class StrategyKind { shard_like, replicate, partial };

// The kind of the strategy whose placement prints as `text` ("S(0)", "R(0)").
StrategyKind kind_of(const std::string& text) {
  const std::string prefix = text.substr(0, text.find('('));
  try {
    const Placement bare = Placement::parse(prefix);
    if (bare.is_replicate()) return StrategyKind::replicate;
    if (bare.is_partial()) return StrategyKind::partial;
  } catch (const Error&) {  // a shard-like prefix needs a dim
  }
  return StrategyKind::shard_like;
}

}  // namespace

StageOutcome check_placement(const std::string& name, const std::vector<std::string>& user_arguments) {
  StageOutcome outcome;
  ProblemList problems;
  // The argument texts to check the strategy with: none, if it takes that, and each one given.
  std::vector<std::string> argument_sets;
  std::string refusal, printed;
  try {
    printed = Placement::shard(0, name).to_string();
    argument_sets.emplace_back();
  } catch (const Error& e) {
    refusal = e.what();
  }
  size_t ignored = 0;
  for (const std::string& arguments : user_arguments) {
    try {
      printed = Placement::shard(0, name, arguments).to_string();
      argument_sets.push_back(arguments);
    } catch (const Error& e) {
      if (refusal.empty())
        ++ignored;  // it takes no arguments at all
      else
        problems.add(fmt::format("refuses --placement-arguments '{}': {}", arguments, e.what()));
    }
  }
  if (argument_sets.empty()) {
    outcome.verdict = problems.empty() ? Verdict::skipped : Verdict::failed;
    outcome.summary = fmt::format(
        "it refuses a placement without arguments ({}); give arguments it takes with "
        "--placement-arguments",
        refusal);
    outcome.details = problems.lines();
    return outcome;
  }
  if (const StrategyKind kind = kind_of(printed); kind != StrategyKind::shard_like) {
    outcome.verdict = Verdict::skipped;
    outcome.summary = fmt::format(
        "a {} strategy (\"{}\"): every rank holds the whole dim, no layout to check",
        kind == StrategyKind::replicate ? "replicate" : "partial", printed.substr(0, printed.find('(')));
    return outcome;
  }
  size_t right = 0, wrong = 0;
  for (int shards : kShardCounts) {
    const LocalMode world(shards);
    const DeviceMesh mesh("cpu", {shards});
    for (const std::string& arguments : argument_sets) {
      const Placement along_dim0 = Placement::shard(0, name, arguments);
      const Placement along_dim1 = Placement::shard(1, name, arguments);
      for (int64_t n : kDimSizes) {
        std::string problem;
        try {
          problem = layout_problem(along_dim0, along_dim1, mesh, shards, n);
        } catch (const std::exception& e) {
          problem = e.what();
        }
        if (problem.empty()) {
          ++right;
        } else {
          ++wrong;
          problems.add(
              fmt::format("{} over {} shards, dim of {}: {}", along_dim0.to_string(), shards, n, problem));
        }
      }
    }
  }
  std::vector<std::string> quoted;
  for (const std::string& arguments : argument_sets)
    quoted.push_back(arguments.empty() ? "none" : fmt::format("'{}'", arguments));
  outcome.verdict = problems.empty() ? Verdict::ok : Verdict::failed;
  outcome.summary = fmt::format(
      "prefix {}, arguments {}: {} layouts right, {} wrong ({} dim sizes from 0 to {} over 1 to "
      "{} shards{})",
      printed.substr(0, printed.find('(')), fmt::join(quoted, ", "), right, wrong, kDimSizes.size(),
      kDimSizes.back(), kShardCounts.back(),
      ignored > 0 ? "; it takes no arguments, so --placement-arguments were not used" : "");
  outcome.details = problems.lines();
  return outcome;
}

}  // namespace tessera::cli::check

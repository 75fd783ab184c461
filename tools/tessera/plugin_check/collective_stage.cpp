// The collective-algorithm stage: for each collective the algorithm offers (a rule naming it for a
// collective it does not offer is refused by set_algorithms), every case of collective_cases is
// first verified symbolically (dist::verify_schedule, which also says when the algorithm's check
// declines a request: such cases are counted as not applicable, since a call would fall back to
// another algorithm), then run with the algorithm selected in a simulated world of the case's group
// size, and every rank's output compared with the oracle.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tessera/dist.hpp>
#include <tessera/errors.hpp>
#include <tessera/factories.hpp>
#include <tessera/local.hpp>
#include <tuple>
#include <utility>
#include <vector>

#include "plugin_check/collective_cases.hpp"
#include "plugin_check/problem_list.hpp"
#include "plugin_check/rules_text.hpp"
#include "plugin_check/stages.hpp"

namespace tessera::cli::check {
namespace {

// verify_schedule's answer when the algorithm's own check declines the request.
constexpr std::string_view kNotApplicable = "not applicable: ";

// A local tensor over ranks 0..p-1 whose rank r holds `length` elements value(r, i).
Tensor rank_tensor(const CollectiveCase& c, int64_t length,
                   const std::function<int64_t(int, int64_t)>& value) {
  DisabledLocalMode plain;  // the shards themselves are plain tensors
  std::vector<std::pair<int, Tensor>> shards;
  for (int rank = 0; rank < c.group_size; ++rank) {
    std::vector<int64_t> values(static_cast<size_t>(length));
    for (int64_t i = 0; i < length; ++i) values[static_cast<size_t>(i)] = value(rank, i);
    shards.emplace_back(rank, from_values(values, {length}, TensorOptions(c.dtype)));
  }
  return local_tensor(RankMap<Tensor>(std::move(shards)));
}

Tensor unwritten(const CollectiveCase& c, int64_t length) {
  return rank_tensor(c, length, [](int, int64_t) { return kUnwritten; });
}

// Block `block` (of `c.count` elements) of each rank's input buffer.
Tensor input_block(const CollectiveCase& c, int64_t block) {
  return rank_tensor(c, c.count,
                     [&](int rank, int64_t i) { return input_value(c, rank, block * c.count + i); });
}

// Each rank's output buffer as the collective's table lays it out, flattened (lists concatenated).
using RankOutputs = std::vector<std::vector<double>>;

RankOutputs outputs_of(const CollectiveCase& c, const std::vector<Tensor>& parts) {
  RankOutputs outputs(static_cast<size_t>(c.group_size));
  for (int rank = 0; rank < c.group_size; ++rank)
    for (const Tensor& part : parts) {
      const std::vector<double> values = part.shards().at(rank).to_vector<double>();
      outputs[static_cast<size_t>(rank)].insert(outputs[static_cast<size_t>(rank)].end(), values.begin(),
                                                values.end());
    }
  return outputs;
}

// Runs the case's collective through the public API (the algorithm is selected by the rules in
// force) and returns every rank's output buffer.
RankOutputs run_case(const CollectiveCase& c) {
  const int p = c.group_size;
  const ReduceOp op(c.op);
  const Tensor input =
      rank_tensor(c, input_length(c), [&](int rank, int64_t i) { return input_value(c, rank, i); });
  switch (c.collective) {
    case Collective::all_reduce: {
      Tensor t = input;
      dist::all_reduce(t, op);
      return outputs_of(c, {t});
    }
    case Collective::broadcast: {
      Tensor t = input;
      dist::broadcast(t, c.root);
      return outputs_of(c, {t});
    }
    case Collective::reduce: {
      Tensor t = input;
      dist::reduce(t, c.root, op);
      return outputs_of(c, {t});
    }
    case Collective::all_gather: {
      Tensor out = unwritten(c, p * c.count);
      dist::all_gather_into_tensor(out, input);
      return outputs_of(c, {out});
    }
    case Collective::reduce_scatter: {
      Tensor out = unwritten(c, c.count);
      dist::reduce_scatter_tensor(out, input, op);
      return outputs_of(c, {out});
    }
    case Collective::all_to_all: {
      std::vector<Tensor> inputs, outputs;
      for (int block = 0; block < p; ++block) {
        inputs.push_back(input_block(c, block));
        outputs.push_back(unwritten(c, c.count));
      }
      dist::all_to_all(outputs, inputs);
      return outputs_of(c, outputs);
    }
    case Collective::scatter: {
      std::vector<Tensor> inputs;
      for (int block = 0; block < p; ++block) inputs.push_back(input_block(c, block));
      Tensor out = unwritten(c, c.count);
      dist::scatter(out, inputs, c.root);
      return outputs_of(c, {out});
    }
    case Collective::gather: {
      std::vector<Tensor> outputs;
      for (int block = 0; block < p; ++block) outputs.push_back(unwritten(c, c.count));
      dist::gather(outputs, input, c.root);
      return outputs_of(c, outputs);
    }
    case Collective::barrier:
      dist::barrier(unwritten(c, 1));
      return RankOutputs(static_cast<size_t>(p));
  }
  return {};
}

// The first difference from the oracle, with how many elements differ; empty when none does.
std::string compare_with_oracle(const CollectiveCase& c, const RankOutputs& got) {
  for (int rank = 0; rank < c.group_size; ++rank) {
    const std::optional<std::vector<int64_t>> expected = expected_output(c, rank);
    if (!expected) continue;
    const std::vector<double>& actual = got[static_cast<size_t>(rank)];
    if (actual.size() != expected->size())
      return fmt::format("rank {} holds {} elements, expected {}", rank, actual.size(), expected->size());
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < actual.size(); ++i)
      if (actual[i] != static_cast<double>((*expected)[i]) && wrong++ == 0) first = i;
    if (wrong == 0) continue;
    const std::string got_text = actual[first] == static_cast<double>(kUnwritten)
                                     ? "nothing (never written)"
                                     : fmt::format("{}", actual[first]);
    return fmt::format("rank {} element {}: got {}, expected {} ({} of its {} elements wrong)", rank, first,
                       got_text, (*expected)[first], wrong, actual.size());
  }
  return {};
}

// verify_schedule once per distinct request: the dtype is not part of what is verified (the op and
// root are), so a wrong schedule is verified, and reported, once for all dtypes.
class Verifier {
 public:
  explicit Verifier(std::string algorithm) : algorithm_(std::move(algorithm)) {}
  const std::string& operator()(const CollectiveCase& c) {
    auto found = answers_.find(key_of(c));
    if (found == answers_.end())
      found = answers_
                  .emplace(key_of(c),
                           dist::verify_schedule(algorithm_, std::string(collective_name(c.collective)),
                                                 c.group_size, c.count, c.root, ReduceOp(c.op)))
                  .first;
    return found->second;
  }
  // True the first time it is asked about the request of `c`.
  bool first_report(const CollectiveCase& c) { return reported_.insert(key_of(c)).second; }

 private:
  using Key = std::tuple<int, int, int64_t, int, int>;
  static Key key_of(const CollectiveCase& c) {
    return {static_cast<int>(c.collective), c.group_size, c.count, static_cast<int>(c.op), c.root};
  }
  std::string algorithm_;
  std::map<Key, std::string> answers_;
  std::set<Key> reported_;
};

// Puts the selection rules back as they were, whatever the stage threw, less those selecting the
// algorithm checked: rules set again are explicit, and explicit rules naming an algorithm make its
// unloading (the worker's next stages) warn that collectives would fail.
class RulesRestorer {
 public:
  explicit RulesRestorer(std::string algorithm)
      : rules_(dist::algorithms()), algorithm_(std::move(algorithm)) {}
  ~RulesRestorer() {
    try {
      dist::set_algorithms(rules_without(rules_, algorithm_));
    } catch (...) {  // the rules were valid before; nothing better to do in a destructor
    }
  }
  RulesRestorer(const RulesRestorer&) = delete;
  RulesRestorer& operator=(const RulesRestorer&) = delete;

 private:
  std::string rules_;
  std::string algorithm_;
};

bool offers(const std::string& algorithm, Collective collective) {
  try {
    dist::set_algorithms(fmt::format("{}:{}", collective_name(collective), algorithm));
    return true;
  } catch (const Error&) {  // "algorithm 'x' does not offer all_reduce"
    return false;
  }
}

}  // namespace

StageOutcome check_collective(const std::string& name) {
  const RulesRestorer restore(name);
  ProblemList problems;
  Verifier verify(name);
  std::vector<std::string> offered;
  size_t right = 0, wrong = 0, not_applicable = 0;
  for (Collective collective : kCollectives) {
    if (!offers(name, collective)) continue;
    offered.emplace_back(collective_name(collective));
    size_t applicable = 0;
    for (int p : checked_group_sizes()) {
      const LocalMode world(p);  // ranks 0..p-1 of a simulated world of their own
      for (const CollectiveCase& c : cases_for(collective, p)) {
        const std::string& verified = verify(c);
        if (verified.starts_with(kNotApplicable)) {
          ++not_applicable;
          continue;
        }
        ++applicable;
        if (!verified.empty()) {
          ++wrong;
          if (verify.first_report(c))
            problems.add(
                fmt::format("{} (any dtype): schedule rejected: {}", c.describe_request(), verified));
          continue;
        }
        std::string problem;
        try {
          problem = compare_with_oracle(c, run_case(c));
        } catch (const std::exception& e) {
          problem = fmt::format("the call failed: {}", e.what());
        }
        if (problem.empty()) {
          ++right;
        } else {
          ++wrong;
          problems.add(fmt::format("{}: {}", c.describe(), problem));
        }
      }
    }
    if (applicable == 0)
      problems.add(fmt::format("{}: offered, but the algorithm declined every case checked",
                               collective_name(collective)));
  }
  StageOutcome outcome;
  if (offered.empty()) {
    outcome.verdict = Verdict::failed;
    outcome.summary = fmt::format("algorithm '{}' offers none of the collectives the rules can name", name);
    return outcome;
  }
  outcome.summary = fmt::format("{}: {} cases right, {} wrong, {} not applicable (declined by the algorithm)",
                                fmt::join(offered, ", "), right, wrong, not_applicable);
  outcome.verdict = problems.empty() ? Verdict::ok : Verdict::failed;
  outcome.details = problems.lines();
  return outcome;
}

}  // namespace tessera::cli::check

// Computes a simulated collective from its schedule's plan (schedule_plan.hpp) instead of replaying
// its messages: each plan node is one kernel call over its run of elements, in the plan's order,
// and each distinct output is assembled once and shared by the ranks that receive it. The kernels and
// their operand order are the executor's, so results are bitwise those of a replay.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "comm/schedule_plan.hpp"
#include "tessera/tensor.hpp"

namespace tessera::comm {

// inputs[r]: group rank r's input buffer, as execute() takes it, for every rank (all hosted here).
// Returns every rank's output buffer, as execute() would; elements the collective leaves
// unspecified are unspecified here too. Ranks with equal outputs get replicas of one buffer (their
// own Storages over the same bytes); with `shared_outputs`, the same Tensor, which may also be an
// input, and ranks whose outputs the plan computes apart but whose bytes come out equal get one
// Tensor too: for callers that only read outputs (copy or share their bytes), never hand them out.
//
// `counts`, when given, receives how the nodes were computed (tests and benchmarks read it).
struct EvaluationCounts {
  size_t kernel_calls = 0;  // calls of the reduce op's element-wise kernel or its fold
  size_t folds = 0;         // of those, fold calls (KERNELS.md "Folds"): chains of batches in one call
};
std::vector<Tensor> evaluate_plan(const SchedulePlan& plan, const std::vector<Tensor>& inputs,
                                  bool shared_outputs = false, EvaluationCounts* counts = nullptr);

// Every group rank's output as an index into the distinct results: the ranks that receive one
// result (every rank of an all_reduce) share one entry, so handing a result to thousands of ranks
// copies no handle per rank.
struct RankResults {
  std::vector<Tensor> distinct;
  std::vector<int32_t> of;  // per group rank: its result in `distinct`; empty: rank r's is distinct[r]
  size_t index(size_t rank) const { return of.empty() ? rank : static_cast<size_t>(of[rank]); }
  const Tensor& operator[](size_t rank) const { return distinct[index(rank)]; }
  size_t size() const { return of.empty() ? distinct.size() : of.size(); }
  // One result per rank, in rank order (no index list: a small collective allocates nothing more).
  static RankResults each(std::vector<Tensor> outputs) { return {std::move(outputs), {}}; }
};
// evaluate_plan with shared outputs, as RankResults.
RankResults evaluate_plan_shared(const SchedulePlan& plan, const std::vector<Tensor>& inputs);

}  // namespace tessera::comm

// Scenario 2: collectives on world 3, each compared with the same reduction done on plain tensors.
#include "scenarios.hpp"

namespace tutorial {
namespace {
ts::Tensor local_of(const std::map<int, ts::Tensor>& shards) {
  std::vector<std::pair<int, ts::Tensor>> copies;
  for (const auto& [rank, t] : shards) copies.emplace_back(rank, t.clone());
  return ts::local_tensor(ts::RankMap<ts::Tensor>(std::move(copies)));
}
}  // namespace

std::pair<ts::Tensor, ts::Tensor> all_reduce_sum() {
  const std::map<int, ts::Tensor> tensors = {{0, ts::tensor({{1.f, 2.f}, {3.f, 4.f}})},
                                             {1, ts::tensor({{5.f, 6.f}, {7.f, 8.f}})},
                                             {2, ts::tensor({{9.f, 10.f}, {11.f, 12.f}})}};
  ts::Tensor expected = tensors.at(0) + tensors.at(1) + tensors.at(2);
  ts::Tensor lt = local_of(tensors);
  ts::dist::all_reduce(lt, ts::ReduceOp::SUM);
  return {lt.reconcile(), expected};  // every rank now holds the same sum
}

std::pair<ts::Tensor, ts::Tensor> broadcast_from_rank(int src) {
  const std::map<int, ts::Tensor> tensors = {{0, ts::tensor({10.f, 20.f, 30.f})},
                                             {1, ts::tensor({40.f, 50.f, 60.f})},
                                             {2, ts::tensor({70.f, 80.f, 90.f})}};
  ts::Tensor lt = local_of(tensors);
  ts::dist::broadcast(lt, src);
  return {lt.reconcile(), tensors.at(src).clone()};
}

std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> all_gather_tensors() {
  const std::map<int, ts::Tensor> tensors = {
      {0, ts::tensor({{1.f, 2.f}})}, {1, ts::tensor({{3.f, 4.f}})}, {2, ts::tensor({{5.f, 6.f}})}};
  ts::Tensor lt = local_of(tensors);
  std::vector<ts::Tensor> outputs;
  for (size_t i = 0; i < tensors.size(); ++i) outputs.push_back(ts::zeros_like(lt));
  ts::dist::all_gather(outputs, lt);
  std::vector<ts::Tensor> actual, expected;
  for (size_t i = 0; i < tensors.size(); ++i) {
    actual.push_back(outputs[i].reconcile());
    expected.push_back(tensors.at(static_cast<int>(i)));
  }
  return {actual, expected};
}

std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> reduce_scatter_tensors() {
  // Rank r holds [[1,2],[3,4],[5,6]] * (r + 1); row i of the sum goes to rank i.
  const std::map<int, ts::Tensor> tensors = {{0, ts::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})},
                                             {1, ts::tensor({{2.f, 4.f}, {6.f, 8.f}, {10.f, 12.f}})},
                                             {2, ts::tensor({{3.f, 6.f}, {9.f, 12.f}, {15.f, 18.f}})}};
  ts::Tensor input = local_of(tensors);
  ts::Tensor output =
      ts::local_tensor({{0, ts::zeros({1, 2})}, {1, ts::zeros({1, 2})}, {2, ts::zeros({1, 2})}});
  ts::dist::reduce_scatter_tensor(output, input, ts::ReduceOp::SUM);
  const ts::Tensor total = tensors.at(0) + tensors.at(1) + tensors.at(2);
  std::vector<ts::Tensor> actual, expected;
  for (int rank = 0; rank < 3; ++rank) {
    actual.push_back(output.shard(rank));
    expected.push_back(total.narrow(0, rank, 1));
  }
  return {actual, expected};
}

}  // namespace tutorial

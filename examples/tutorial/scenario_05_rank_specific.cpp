// Scenario 5: computations that differ per rank (non-SPMD): rank_map, tensor_map, disabling the
// mode, and run_per_rank.
#include "scenarios.hpp"

namespace tutorial {
namespace {
std::string kind_of(const ts::Tensor& t) { return t.is_local() ? "local" : "plain"; }
}  // namespace

std::pair<std::map<int, float>, std::map<int, float>> use_rank_map(int world_size) {
  ts::LocalMode mode(world_size);
  ts::Tensor lt = ts::rank_map([](int rank) { return ts::full({2, 3}, float(rank)); });
  std::map<int, float> actual, expected;
  for (int rank = 0; rank < world_size; ++rank) {
    actual[rank] = lt.shard(rank)[0][0].item<float>();
    expected[rank] = float(rank);
  }
  return {actual, expected};
}

std::pair<std::map<int, float>, std::map<int, float>> use_tensor_map(int world_size) {
  ts::LocalMode mode(world_size);
  ts::Tensor lt = ts::rank_map([](int rank) { return ts::ones({2, 2}) * (rank + 1); });
  ts::Tensor scaled =
      ts::tensor_map(lt, [](int rank, const ts::Tensor& shard) { return shard * (rank + 1); });
  std::map<int, float> actual, expected;
  for (int rank = 0; rank < world_size; ++rank) {
    actual[rank] = scaled.shard(rank)[0][0].item<float>();
    expected[rank] = float((rank + 1) * (rank + 1));
  }
  return {actual, expected};
}

std::pair<std::pair<std::string, std::string>, std::pair<std::string, std::string>> disable_mode_temporarily(
    int world_size) {
  ts::LocalMode mode(world_size);
  ts::Tensor inside = ts::ones({2, 2});
  std::string disabled_kind;
  {
    auto off = mode.disable();
    disabled_kind = kind_of(ts::ones({2, 2}));
  }
  return {{kind_of(inside), disabled_kind}, {"local", "plain"}};
}

std::pair<std::pair<std::string, std::string>, std::pair<std::string, std::string>> use_maybe_disable() {
  auto create = [] {
    auto off = ts::maybe_disable_local_mode();
    return ts::tensor({1.f, 2.f, 3.f});
  };
  const std::string outside = kind_of(create());
  ts::LocalMode mode(4);
  const std::string inside = kind_of(create());
  return {{outside, inside}, {"plain", "plain"}};
}

std::pair<std::map<int, std::vector<int64_t>>, std::map<int, std::vector<int64_t>>> per_rank_data_offset(
    int world_size, int64_t chunk) {
  // Each rank reads its own slice of a dataset: a non-SPMD function run once per rank.
  auto data_offset = [](int64_t rank, int64_t size) { return ts::arange(rank * size, (rank + 1) * size); };
  ts::LocalMode mode(world_size);
  ts::Tensor slices = ts::run_per_rank(data_offset, ts::current_rank(), chunk);
  std::map<int, std::vector<int64_t>> actual, expected;
  for (int rank = 0; rank < world_size; ++rank) {
    actual[rank] = slices.shard(rank).to_vector<int64_t>();
    std::vector<int64_t>& slice = expected[rank];
    for (int64_t i = 0; i < chunk; ++i) slice.push_back(rank * chunk + i);
  }
  return {actual, expected};
}

}  // namespace tutorial

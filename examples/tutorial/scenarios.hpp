// The tutorial's scenarios (SPEC.md section 9), each a function returning (actual, expected).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "outcome.hpp"

namespace tutorial {

// 1. basic
using ShapeAndShards = std::pair<std::pair<ts::Shape, ts::RankSet>, std::pair<ts::Tensor, ts::Tensor>>;
std::pair<ShapeAndShards, ShapeAndShards> create_local_tensor();
std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> arithmetic_operations();
std::pair<ts::Tensor, ts::Tensor> reconcile_identical_shards();
std::pair<std::pair<bool, int>, std::pair<bool, int>> use_local_mode(int world_size = 4);
std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> access_individual_shards();

// 2. collectives (world 3)
std::pair<ts::Tensor, ts::Tensor> all_reduce_sum();
std::pair<ts::Tensor, ts::Tensor> broadcast_from_rank(int src = 0);
std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> all_gather_tensors();
std::pair<std::vector<ts::Tensor>, std::vector<ts::Tensor>> reduce_scatter_tensors();

// 4. uneven (local tensor and local int parts)
using UnevenShapes = std::pair<bool, std::map<int, ts::Shape>>;
std::pair<UnevenShapes, UnevenShapes> create_uneven_shards();
using IntMaps = std::pair<std::map<int, int64_t>, std::map<int, int64_t>>;
std::pair<IntMaps, IntMaps> local_int_arithmetic();

// 5. rank-specific
std::pair<std::map<int, float>, std::map<int, float>> use_rank_map(int world_size = 4);
std::pair<std::map<int, float>, std::map<int, float>> use_tensor_map(int world_size = 4);
std::pair<std::pair<std::string, std::string>, std::pair<std::string, std::string>> disable_mode_temporarily(
    int world_size = 4);
std::pair<std::pair<std::string, std::string>, std::pair<std::string, std::string>> use_maybe_disable();
std::pair<std::map<int, std::vector<int64_t>>, std::map<int, std::vector<int64_t>>> per_rank_data_offset(
    int world_size = 4, int64_t chunk = 4);

struct Scenario {
  std::string group;
  std::string name;
  std::function<Check()> run;
};
// Every scenario in tutorial order, for the demo.
std::vector<Scenario> all_scenarios();

}  // namespace tutorial

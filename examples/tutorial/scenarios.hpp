// The tutorial's scenarios, each a function returning (actual, expected).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "outcome.hpp"

namespace tutorial {

// The device type of the scenarios' meshes: the default backend, so that `tessera tour` with cuda
// as the default runs every scenario there ("cpu" in the tutorial itself, and by default here).
inline std::string mesh_device() { return ts::default_backend(); }

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

// A big tensor, compared in full but printed as a summary (dtype, shape, a few values, the sum) so
// the demo's output stays short. same(): ts::equal when either side is exact, else the usual
// comparison (allclose for floats).
struct Summarized {
  ts::Tensor tensor;
  bool exact = false;
};
inline bool same(const Summarized& a, const Summarized& b) {
  const ts::Tensor &x = a.tensor, &y = b.tensor;
  if (x.defined() != y.defined()) return false;
  if (!x.defined()) return true;
  if (x.is_local() != y.is_local() || x.dtype() != y.dtype()) return false;
  if (x.is_local() ? x.ranks() != y.ranks() : x.sizes() != y.sizes()) return false;
  return (a.exact || b.exact) ? ts::equal(x, y) : same(x, y);
}
inline std::string describe(const Summarized& s) {
  const ts::Tensor& t = s.tensor;
  if (!t.defined()) return "undefined";
  std::ostringstream out;
  out << ts::dtype_name(t.dtype()) << ' ' << t.shape().to_string();
  if (t.is_local()) {
    out << " local over " << t.ranks().to_string();
    return out.str();
  }
  const std::vector<double> values = t.to(ts::kFloat64).to_vector<double>();
  double total = 0;
  for (double v : values) total += v;
  out << " [";
  for (size_t i = 0; i < values.size(); ++i) {
    if (values.size() > 6 && i == 3) {
      out << ", ..., " << values.back();
      break;
    }
    out << (i ? ", " : "") << values[i];
  }
  out << "] sum " << total;
  return out.str();
}

// 3. DTensor (world 4)
using TensorPair = std::pair<Summarized, Summarized>;
// (S(0) full_tensor, R to_local) of arange(16) as 4x4, both reconciled; each must equal t exactly.
std::pair<TensorPair, TensorPair> distribute_and_verify();
// a [8,4] S(0) @ b [4,6] R, gathered, against a @ b on plain tensors.
std::pair<Summarized, Summarized> dtensor_matmul(uint64_t seed = 3);
// relu(x [16,8] S(0) @ w [8,4] R + b [4] R), gathered, against the plain result.
std::pair<Summarized, Summarized> dtensor_linear_layer(uint64_t seed = 4);

// 4. uneven (local tensor and local int parts)
using UnevenShapes = std::pair<bool, std::map<int, ts::Shape>>;
std::pair<UnevenShapes, UnevenShapes> create_uneven_shards();
using IntMaps = std::pair<std::map<int, int64_t>, std::map<int, int64_t>>;
std::pair<IntMaps, IntMaps> local_int_arithmetic();
// 4. uneven (DTensor part): rows x 4 arange over `world` ranks with S(0) and BalancedShard(0):
// (rows per rank, rows per rank), (round trip, round trip); round trips must be exact.
using RowsPerRank = std::map<int, int64_t>;
using UnevenRoundTrip = std::pair<std::pair<RowsPerRank, RowsPerRank>, TensorPair>;
std::pair<UnevenRoundTrip, UnevenRoundTrip> dtensor_uneven_sharding(int64_t rows = 10, int world = 3);

// 5. rank-specific
std::pair<std::map<int, float>, std::map<int, float>> use_rank_map(int world_size = 4);
std::pair<std::map<int, float>, std::map<int, float>> use_tensor_map(int world_size = 4);
std::pair<std::pair<std::string, std::string>, std::pair<std::string, std::string>> disable_mode_temporarily(
    int world_size = 4);
std::pair<std::pair<std::string, std::string>, std::pair<std::string, std::string>> use_maybe_disable();
std::pair<std::map<int, std::vector<int64_t>>, std::map<int, std::vector<int64_t>>> per_rank_data_offset(
    int world_size = 4, int64_t chunk = 4);

// 6. multi-dim mesh
// ((shape, dim names), size)
using MeshFacts = std::pair<std::pair<std::vector<int64_t>, std::vector<std::string>>, int64_t>;
// World 8, (4,2) ("dp","tp").
std::pair<MeshFacts, MeshFacts> create_2d_mesh();
// x [16,8] [S(0),R] @ w [8,12] [R,S(1)] on the (4,2) mesh, gathered, against x @ w.
std::pair<Summarized, Summarized> hybrid_parallelism(uint64_t seed = 6);
// World 24, (2,3,4) ("pp","dp","tp"); randn [8,16,32] as [R,S(0),S(2)] must round-trip exactly.
using MeshAndTensor = std::pair<MeshFacts, Summarized>;
std::pair<MeshAndTensor, MeshAndTensor> create_3d_mesh(uint64_t seed = 7);

struct Scenario {
  std::string group;
  std::string name;
  std::function<Check()> run;
};
// Every scenario in tutorial order, for the demo.
std::vector<Scenario> all_scenarios();

}  // namespace tutorial

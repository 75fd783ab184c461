// The scenarios in tutorial order, as the demo runs them.
#include "scenarios.hpp"

namespace tutorial {

std::vector<Scenario> all_scenarios() {
  return {
      {"1 basic", "create a local tensor from per-rank tensors", [] { return check(create_local_tensor()); }},
      {"1 basic", "per-rank arithmetic (* 2, + 10)", [] { return check(arithmetic_operations()); }},
      {"1 basic", "reconcile identical shards", [] { return check(reconcile_identical_shards()); }},
      {"1 basic", "local mode makes ones(2, 3) local over 4 ranks", [] { return check(use_local_mode()); }},
      {"1 basic", "access individual shards", [] { return check(access_individual_shards()); }},
      {"2 collectives", "all_reduce SUM over 3 ranks", [] { return check(all_reduce_sum()); }},
      {"2 collectives", "broadcast from rank 0", [] { return check(broadcast_from_rank()); }},
      {"2 collectives", "all_gather", [] { return check(all_gather_tensors()); }},
      {"2 collectives", "reduce_scatter_tensor SUM", [] { return check(reduce_scatter_tensors()); }},
      {"3 dtensor", "distribute S(0) and R, gather back", [] { return check(distribute_and_verify()); }},
      {"3 dtensor", "matmul [8,4] S(0) x [4,6] R", [] { return check(dtensor_matmul()); }},
      {"3 dtensor", "linear layer relu(x @ w + b), x S(0)", [] { return check(dtensor_linear_layer()); }},
      {"4 uneven", "shards of 1, 2, 1 rows give a local-int dim",
       [] { return check(create_uneven_shards()); }},
      {"4 uneven", "local int add and mul", [] { return check(local_int_arithmetic()); }},
      {"4 uneven", "10 rows on 3 ranks: S(0) 4,4,2, B(0) 4,3,3",
       [] { return check(dtensor_uneven_sharding()); }},
      {"5 rank-specific", "rank_map: shard r filled with r", [] { return check(use_rank_map()); }},
      {"5 rank-specific", "tensor_map: (r + 1)^2", [] { return check(use_tensor_map()); }},
      {"5 rank-specific", "disable: local inside, plain disabled",
       [] { return check(disable_mode_temporarily()); }},
      {"5 rank-specific", "maybe_disable: plain outside and inside",
       [] { return check(use_maybe_disable()); }},
      {"5 rank-specific", "run_per_rank: rank r reads [4r, 4r + 3]",
       [] { return check(per_rank_data_offset()); }},
      {"6 multi-dim mesh", "2-d mesh (4,2) (dp,tp)", [] { return check(create_2d_mesh()); }},
      {"6 multi-dim mesh", "hybrid DP+TP matmul", [] { return check(hybrid_parallelism()); }},
      {"6 multi-dim mesh", "3-d mesh (2,3,4): [R,S(0),S(2)]", [] { return check(create_3d_mesh()); }},
  };
}

}  // namespace tutorial

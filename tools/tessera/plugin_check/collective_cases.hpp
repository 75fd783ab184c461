// The cases `tessera plugins check` runs a collective algorithm on, and what each must produce,
// computed directly from the definitions of the collectives (sdk/include/tessera/sdk/collective.h):
// the oracle never runs a schedule. Inputs are small integers (exact in every dtype, so any
// reduction order gives the same bits) that differ by rank and element, so a block sent to the
// wrong rank, a contribution missing or counted twice, or an element never written shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tessera/dist.hpp>
#include <tessera/dtype.hpp>
#include <vector>

namespace tessera::cli::check {

enum class Collective {
  all_reduce,
  broadcast,
  reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  scatter,
  gather,
  barrier
};

inline constexpr Collective kCollectives[] = {
    Collective::all_reduce, Collective::broadcast,      Collective::reduce,
    Collective::all_gather, Collective::reduce_scatter, Collective::all_to_all,
    Collective::scatter,    Collective::gather,         Collective::barrier};

std::string_view collective_name(Collective collective);  // as set_algorithms rules name it
bool is_reducing(Collective collective);
bool is_rooted(Collective collective);

struct CollectiveCase {
  Collective collective = Collective::all_reduce;
  int group_size = 1;
  int64_t count = 0;  // n of the collective's table: elements per rank (per block for the p*n ones)
  DType dtype = kFloat32;
  ReduceOp::Kind op = ReduceOp::SUM;  // reducing collectives only
  int root = 0;                       // rooted collectives only

  std::string describe() const;  // "reduce p=7 count=5 int32 band root=6"
  // The same without the dtype, which a schedule does not depend on: "reduce p=7 count=5 band root=6".
  std::string describe_request() const;
};

// Every case of `collective` for one group size: counts 0, 1, 5 and 1000; float32, float64, int32
// and int64; every reduce op the dtype takes (sum, product, min, max; band, bor, bxor for integers);
// roots 0 and p-1.
std::vector<CollectiveCase> cases_for(Collective collective, int group_size);
// The group sizes every collective is checked on.
const std::vector<int>& checked_group_sizes();

// Elements of each rank's input buffer: n, or p*n for reduce_scatter, all_to_all and scatter.
int64_t input_length(const CollectiveCase& c);
// Element `index` of group rank `rank`'s input buffer.
int64_t input_value(const CollectiveCase& c, int rank, int64_t index);
// What group rank `rank`'s output buffer must hold, or nothing where the collective promises
// nothing (reduce and gather on ranks other than the root).
std::optional<std::vector<int64_t>> expected_output(const CollectiveCase& c, int rank);
// A value no case's output can hold, written into outputs before a run so that an element the
// schedule never writes cannot pass by chance.
inline constexpr int64_t kUnwritten = -777777;

std::string_view reduce_op_name(ReduceOp::Kind op);  // "sum", ...

}  // namespace tessera::cli::check

// gather and scatter_add (SDK 1.6): through ts::gather, ts::index_select and ts::scatter_add on
// contiguous and non-contiguous inputs, broadcast (stride 0) and repeated indices, empty indices.
// scatter_add adds repeated positions in the index's row-major order, so its sums are exact.
#include <fmt/format.h>
#include <tessera/factories.hpp>
#include <tessera/ops.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

// Index values in [0, bound), a fixed pattern with repeats, as an int64 tensor on the oracle.
ts::Tensor index_values(const ts::Shape& shape, int64_t bound, const std::string& oracle) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(bound == 0 ? 0 : (i * 5 + 3) % bound);
  return ts::from_values(v, shape, ts::TensorOptions(ts::kInt64).backend(oracle));
}

using Apply = std::function<ts::Tensor(const std::vector<ts::Tensor>&, const std::string&)>;

}  // namespace

CaseGroup indexing_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  CaseGroup group;
  const std::string& oracle = values.oracle();
  const bool gather = op == "gather";
  const Domain domain = gather ? Domain::kWide : Domain::kUnit;
  auto add = [&](std::string name, std::vector<ts::Tensor> inputs, Apply apply) {
    group.cases.push_back({std::move(name), std::move(inputs), std::move(apply)});
  };
  if (gather) {
    add("[7, 5] dim 0, index [4, 5]", {values.make({7, 5}, dtype, domain), index_values({4, 5}, 7, oracle)},
        [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::gather(in[0], 0, in[1]); });
    add("[7, 5] dim 1, index [7, 9] (repeats)",
        {values.make({7, 5}, dtype, domain), index_values({7, 9}, 5, oracle)},
        [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::gather(in[0], 1, in[1]); });
    add("transposed [5, 7] dim 1", {values.make({7, 5}, dtype, domain), index_values({3, 4}, 7, oracle)},
        [](const std::vector<ts::Tensor>& in, const std::string&) {
          return ts::gather(in[0].t(), 1, in[1]);
        });
    add("index_select (a broadcast index) of [2, 7, 5] dim 1",
        {values.make({2, 7, 5}, dtype, domain), index_values({6}, 7, oracle)},
        [](const std::vector<ts::Tensor>& in, const std::string&) {
          return ts::index_select(in[0], 1, in[1]);
        });
    add("empty index", {values.make({7, 5}, dtype, domain), index_values({0, 5}, 7, oracle)},
        [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::gather(in[0], 0, in[1]); });
    add("0-d", {values.make({}, dtype, domain), index_values({}, 1, oracle)},
        [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::gather(in[0], 0, in[1]); });
    return group;
  }
  add("[7, 5] dim 0, index [9, 5] (repeats)",
      {values.make({7, 5}, dtype, domain), index_values({9, 5}, 7, oracle),
       values.make({9, 5}, dtype, domain)},
      [](const std::vector<ts::Tensor>& in, const std::string&) {
        return ts::scatter_add(in[0], 0, in[1], in[2]);
      });
  add("[7, 5] dim 1, src larger than index",
      {values.make({7, 5}, dtype, domain), index_values({4, 8}, 5, oracle),
       values.make({6, 9}, dtype, domain)},
      [](const std::vector<ts::Tensor>& in, const std::string&) {
        return ts::scatter_add(in[0], 1, in[1], in[2]);
      });
  add("transposed input and src",
      {values.make({5, 7}, dtype, domain), index_values({3, 5}, 7, oracle),
       values.make({5, 3}, dtype, domain)},
      [](const std::vector<ts::Tensor>& in, const std::string&) {
        return ts::scatter_add(in[0].t(), 0, in[1], in[2].t());
      });
  add("broadcast index",
      {values.make({4, 6}, dtype, domain), index_values({1, 6}, 4, oracle),
       values.make({3, 6}, dtype, domain)},
      [](const std::vector<ts::Tensor>& in, const std::string&) {
        return ts::scatter_add(in[0], 0, in[1].expand({3, 6}), in[2]);
      });
  add("empty index",
      {values.make({7, 5}, dtype, domain), index_values({0, 5}, 7, oracle),
       values.make({0, 5}, dtype, domain)},
      [](const std::vector<ts::Tensor>& in, const std::string&) {
        return ts::scatter_add(in[0], 0, in[1], in[2]);
      });
  return group;
}

}  // namespace conformance

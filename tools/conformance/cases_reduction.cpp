// Reductions: over every dim, over a subset (leading, trailing, with keepdim), and argmax/argmin
// over the flattened tensor and one dim. Empty reduced ranges follow KERNELS.md (0, 1, NaN, or an
// error on both backends).
#include <map>

#include <tessera/ops.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

using Reduce = ts::Tensor (*)(const ts::Tensor&, const std::vector<int64_t>&, bool);

Reduce reduce_function(const std::string& op) {
  static const std::map<std::string, Reduce> functions = {
      {"sum", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::sum(a, d, k); }},
      {"prod", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::prod(a, d, k); }},
      {"mean", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::mean(a, d, k); }},
      {"max", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::max(a, d, k); }},
      {"min", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::min(a, d, k); }},
      {"all", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::all(a, d, k); }},
      {"any", [](const ts::Tensor& a, const std::vector<int64_t>& d, bool k) { return ts::any(a, d, k); }},
  };
  return functions.at(op);
}

Domain reduction_domain(const std::string& op) {
  if (op == "prod") return Domain::kTies;  // |x| <= 3 over 35 elements stays inside int64
  if (op == "max" || op == "min" || op == "argmax" || op == "argmin")
    return Domain::kTies;  // ties: first occurrence
  return Domain::kUnit;
}

// The dims subsets worth reducing for a tensor of `rank` dims: a leading dim, the last dim (with
// keepdim), and for rank 3 two dims that are not adjacent.
std::vector<std::pair<std::vector<int64_t>, bool>> subsets(size_t rank) {
  if (rank == 0) return {};
  std::vector<std::pair<std::vector<int64_t>, bool>> result = {{{0}, false}, {{-1}, true}};
  if (rank == 3) result.push_back({{0, 2}, false});
  return result;
}

std::string dims_text(const std::vector<int64_t>& dims, bool keepdim) {
  std::string text = "dims {";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + (keepdim ? "} keepdim" : "}");
}

}  // namespace

CaseGroup reduction_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  CaseGroup group;
  // KERNELS.md fixes the order sums and products accumulate in (row-major over the reduced dims,
  // in the output type), so every backend gives the oracle's bits; mean's division may round apart.
  group.exactness = op == "mean" ? Exactness::kAccumulating : Exactness::kExact;
  const Domain domain = reduction_domain(op);
  const bool arg = op == "argmax" || op == "argmin";
  for (const Layout& layout : all_layouts()) {
    const size_t rank = layout.base.size();  // every view keeps its base's rank
    if (arg) {
      const bool is_max = op == "argmax";
      group.cases.push_back(
          {layout.name + ", flattened",
           {values.make(layout.base, dtype, domain)},
           [is_max, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
             return is_max ? ts::argmax(view(in[0])) : ts::argmin(view(in[0]));
           }});
      for (int64_t dim : rank == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{0, -1})
        group.cases.push_back(
            {layout.name + ", dim " + std::to_string(dim),
             {values.make(layout.base, dtype, domain)},
             [is_max, dim, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
               return is_max ? ts::argmax(view(in[0]), dim, dim < 0) : ts::argmin(view(in[0]), dim, dim < 0);
             }});
      continue;
    }
    const Reduce fn = reduce_function(op);
    group.cases.push_back({layout.name + ", every dim",
                           {values.make(layout.base, dtype, domain)},
                           [fn, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
                             return fn(view(in[0]), {}, false);
                           }});
    for (const auto& subset : subsets(rank)) {
      // Named, not structured bindings: clang 14 cannot capture one.
      const auto& dims = subset.first;
      const bool keepdim = subset.second;
      group.cases.push_back(
          {layout.name + ", " + dims_text(dims, keepdim),
           {values.make(layout.base, dtype, domain)},
           [fn, dims, keepdim, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
             return fn(view(in[0]), dims, keepdim);
           }});
    }
  }
  // NaN propagates through max/min and counts as the extreme for argmax/argmin; sums meet infinities.
  if (ts::is_floating(dtype) || (dtype != ts::kBool && op != "sum" && op != "prod")) {
    group.cases.push_back({"special values",
                           {values.make({14}, dtype, Domain::kSpecial)},
                           [op, arg](const std::vector<ts::Tensor>& in, const std::string&) {
                             if (arg) return op == "argmax" ? ts::argmax(in[0]) : ts::argmin(in[0]);
                             return reduce_function(op)(in[0], {}, false);
                           }});
  }
  return group;
}

}  // namespace conformance

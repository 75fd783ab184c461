// The SDK 1.6 kernels: sin and cos, where, cumsum, each through its public op.
#include <tessera/factories.hpp>
#include <tessera/ops.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

CaseGroup trig_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  const bool sine = op == "sin";
  auto fn = [sine](const ts::Tensor& t) { return sine ? ts::sin(t) : ts::cos(t); };
  CaseGroup group;
  group.exactness = Exactness::kElementwise;
  for (const Layout& layout : all_layouts())
    group.cases.push_back({layout.name,
                           {values.make(layout.base, dtype, Domain::kWide)},
                           [fn, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
                             return fn(view(in[0]));
                           }});
  group.cases.push_back({"special values",
                         {values.make({14}, dtype, Domain::kSpecial)},
                         [fn](const std::vector<ts::Tensor>& in, const std::string&) { return fn(in[0]); }});
  return group;
}

CaseGroup where_cases(ValueSource& values, const std::string&, ts::DType dtype) {
  CaseGroup group;
  group.exactness = Exactness::kExact;
  for (const Layout& layout : all_layouts())
    group.cases.push_back(
        {layout.name,
         {values.make(layout.base, ts::kBool, Domain::kWide), values.make(layout.base, dtype, Domain::kWide),
          values.make(layout.base, dtype, Domain::kWide)},
         [view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
           return ts::where(view(in[0]), view(in[1]), view(in[2]));
         }});
  // The core broadcasts: cond's columns and a's rows repeat with stride 0.
  group.cases.push_back(
      {"cond [7, 1], a [5], b [7, 5] (broadcast operands)",
       {values.make({7, 1}, ts::kBool, Domain::kWide), values.make({5}, dtype, Domain::kWide),
        values.make({7, 5}, dtype, Domain::kWide)},
       [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::where(in[0], in[1], in[2]); }});
  // NaN, infinities and extremes on both sides: each side's value passes through as it is.
  if (dtype != ts::kBool)
    group.cases.push_back(
        {"special values",
         {values.make({14}, ts::kBool, Domain::kWide), values.make({14}, dtype, Domain::kSpecial),
          values.make({14}, dtype, Domain::kSpecial)},
         [](const std::vector<ts::Tensor>& in, const std::string&) {
           return ts::where(in[0], in[1], in[2].flip({0}));
         }});
  return group;
}

CaseGroup cumsum_cases(ValueSource& values, const std::string&, ts::DType dtype) {
  CaseGroup group;
  group.exactness = ts::is_floating(dtype) ? Exactness::kAccumulating : Exactness::kExact;
  for (const Layout& layout : all_layouts()) {
    const bool scalar = layout.base.empty();
    for (int64_t dim : scalar ? std::vector<int64_t>{0} : std::vector<int64_t>{-1, 0})
      group.cases.push_back(
          {layout.name + ", dim " + std::to_string(dim),
           {values.make(layout.base, dtype, Domain::kUnit)},
           [dim, view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
             return ts::cumsum(view(in[0]), dim);
           }});
  }
  if (ts::is_floating(dtype))
    group.cases.push_back(
        {"special values",
         {values.make({2, 7}, dtype, Domain::kSpecial)},
         [](const std::vector<ts::Tensor>& in, const std::string&) { return ts::cumsum(in[0], 1); }});
  return group;
}

}  // namespace conformance

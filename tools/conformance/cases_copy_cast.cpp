// copy (contiguous(), clone(), copy_ into views) and cast (to(dtype)).
#include <tessera/factories.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

// Values that survive every dtype's copy unchanged; for casts, what truncation, saturation and
// NaN rules act on.
Domain copy_domain(ts::DType dtype) { return ts::is_floating(dtype) ? Domain::kWide : Domain::kSpecial; }

}  // namespace

CaseGroup copy_cases(ValueSource& values, const std::string&, ts::DType dtype) {
  CaseGroup group;
  for (const Layout& layout : all_layouts()) {
    // contiguous() of a contiguous tensor is the tensor itself (no kernel), so only views.
    if (layout.base != ts::Shape{7, 5} || layout.name == "flipped")
      group.cases.push_back({"contiguous() of " + layout.name,
                             {values.make(layout.base, dtype, copy_domain(dtype))},
                             [view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
                               return view(in[0]).contiguous();
                             }});
    // clone on the tested backend: a device-to-device copy.
    group.cases.push_back({"clone() of " + layout.name,
                           {values.make(layout.base, dtype, copy_domain(dtype))},
                           [view = layout.view](const std::vector<ts::Tensor>& in, const std::string&) {
                             return view(in[0]).clone();
                           }});
  }
  // Writes into strided destinations: every other column of a zeroed 7x10, then a transposed one.
  group.cases.push_back(
      {"copy_ into a step-sliced view",
       {values.make({7, 5}, dtype, copy_domain(dtype))},
       [dtype](const std::vector<ts::Tensor>& in, const std::string& backend) {
         ts::Tensor destination = ts::zeros({7, 10}, ts::TensorOptions(dtype).backend(backend));
         destination.slice(1, 0, 10, 2).copy_(in[0]);
         return destination;
       }});
  group.cases.push_back(
      {"copy_ of a flipped view into a transposed one",
       {values.make({7, 5}, dtype, copy_domain(dtype))},
       [dtype](const std::vector<ts::Tensor>& in, const std::string& backend) {
         ts::Tensor destination = ts::zeros({5, 7}, ts::TensorOptions(dtype).backend(backend));
         destination.t().copy_(in[0].flip({0}));
         return destination;
       }});
  return group;
}

CaseGroup cast_cases(ValueSource& values, const std::string&, ts::DType dtype) {
  CaseGroup group;
  static const ts::DType targets[] = {ts::kBool, ts::kInt32, ts::kInt64, ts::kFloat32, ts::kFloat64};
  for (ts::DType target : targets) {
    if (target == dtype) continue;  // to() of the same dtype is the tensor itself, no kernel
    const std::string to = "to " + std::string(ts::dtype_name(target)) + ", ";
    for (const char* name : {"0-d", "0-size", "7x5", "transposed", "broadcast", "flipped"}) {
      const Layout& shape = layout(name);
      group.cases.push_back(
          {to + name,
           {values.make(shape.base, dtype, Domain::kWide)},
           [target, view = shape.view](const std::vector<ts::Tensor>& in, const std::string&) {
             return view(in[0]).to(target);
           }});
    }
    // NaN, infinities, out-of-range and fractional floats; integer extremes.
    if (dtype != ts::kBool)
      group.cases.push_back(
          {to + "special values",
           {values.make({14}, dtype, Domain::kSpecial)},
           [target](const std::vector<ts::Tensor>& in, const std::string&) { return in[0].to(target); }});
  }
  return group;
}

}  // namespace conformance

// The SDK 1.7 normalisation kernels, each through its public op: layer_norm and rms_norm through
// ts::layer_norm / ts::rms_norm (with and without weight and bias, over the last dim and the last
// two), their backward kernels through the gradients autograd computes for them.
#include <tessera/factories.hpp>
#include <tessera/ops.hpp>

#include "cases.hpp"

namespace conformance {

namespace ts = tessera;

namespace {

// The op under test on x (normalised over its last `ndim` dims) with optional weight and bias.
ts::Tensor normalise(const std::string& op, const ts::Tensor& x, const std::vector<int64_t>& shape,
                     const ts::Tensor& w, const ts::Tensor& b) {
  if (op.rfind("rms_norm", 0) == 0) return ts::rms_norm(x, shape, w, 1e-5);
  return ts::layer_norm(x, shape, w, b, 1e-5);
}

// The gradients of x, the weight and the bias (those there are), flattened and joined: the backward
// kernel's outputs, for one comparison.
ts::Tensor gradients(const std::string& op, const ts::Tensor& input, const std::vector<int64_t>& shape,
                     const ts::Tensor& weight, const ts::Tensor& bias) {
  auto leaf = [](const ts::Tensor& t) {
    if (!t.defined()) return t;
    ts::Tensor l = t.detach();
    l.set_requires_grad(true);
    return l;
  };
  ts::Tensor x = leaf(input), w = leaf(weight), b = leaf(bias);
  ts::Tensor y = normalise(op, x, shape, w, b);
  // A weighting of the outputs that is not constant along a row (a constant one has zero gradient).
  y.backward(y.detach());
  std::vector<ts::Tensor> parts = {x.grad().flatten()};
  for (const ts::Tensor* p : {&w, &b})
    if (p->defined()) parts.push_back(p->grad().flatten());
  return ts::cat(parts, 0);
}

}  // namespace

CaseGroup norm_cases(ValueSource& values, const std::string& op, ts::DType dtype) {
  const bool backward = op.find("_backward") != std::string::npos;
  const bool layer = op.rfind("layer_norm", 0) == 0;
  CaseGroup group;
  group.exactness = Exactness::kAccumulating;
  auto add = [&](const std::string& name, const ts::Shape& base,
                 const std::function<ts::Tensor(const ts::Tensor&)>& view, size_t ndim, bool with_weight,
                 bool with_bias, Domain domain) {
    // The normalised shape is the view's trailing dims (a transposed layout's base shape differs).
    const ts::Shape viewed = view(ts::zeros(base)).sizes();
    const std::vector<int64_t> shape(viewed.end() - static_cast<ptrdiff_t>(ndim), viewed.end());
    std::vector<ts::Tensor> inputs = {values.make(base, dtype, domain)};
    if (with_weight) inputs.push_back(values.make(shape, dtype, Domain::kWide));
    if (with_bias) inputs.push_back(values.make(shape, dtype, Domain::kWide));
    const std::string params = with_weight && with_bias ? "weight and bias"
                               : with_weight            ? "weight"
                                                        : "no weight";
    group.cases.push_back(
        {name + ", over " + std::to_string(ndim) + " dim" + (ndim > 1 ? "s" : "") + ", " + params, inputs,
         [=](const std::vector<ts::Tensor>& in, const std::string&) {
           const ts::Tensor w = with_weight ? in[1] : ts::Tensor();
           const ts::Tensor b = with_bias ? in[with_weight ? 2 : 1] : ts::Tensor();
           return backward ? gradients(op, view(in[0]), shape, w, b)
                           : normalise(op, view(in[0]), shape, w, b);
         }});
  };
  for (const Layout& layout : all_layouts()) {
    if (layout.base.empty()) continue;  // a norm needs a dim to normalise over
    add(layout.name, layout.base, layout.view, 1, true, layer, Domain::kWide);
    add(layout.name, layout.base, layout.view, 1, false, false, Domain::kWide);
  }
  auto identity = [](const ts::Tensor& t) { return t; };
  add("3-d 2x3x4", {2, 3, 4}, identity, 2, true, layer, Domain::kWide);
  // Rows of 40 elements: two full passes of the summation lanes and a tail.
  add("4x40", {4, 40}, identity, 1, true, layer, Domain::kWide);
  // NaN and infinities make their rows NaN; the others stay finite.
  if (!backward) add("special values", {2, 7}, identity, 1, true, layer, Domain::kSpecial);
  return group;
}

}  // namespace conformance

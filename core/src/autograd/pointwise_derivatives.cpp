// Backward formulas of the element-wise ops. Broadcast inputs get their gradient summed back to
// their own shape (sum_to); ties of maximum/minimum split the gradient in half, as in PyTorch.
#include <cstring>

#include <fmt/format.h>

#include "autograd/derivatives.hpp"
#include "autograd/record.hpp"
#include "tensor/internal.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/ops.hpp"

namespace tessera::autograd {
namespace {

// `mask` (bool) as 0/1 in `like`'s dtype.
Tensor as_factor(const Tensor& mask, const Tensor& like) { return mask.to(like.dtype()); }

// Where a > b the gradient goes to a, where equal half of it (PyTorch's maximum backward).
Tensor winner_share(const Tensor& grad, const Tensor& mine, const Tensor& other, bool maximum) {
  const Tensor wins = maximum ? gt(mine, other) : lt(mine, other);
  return grad * (as_factor(wins, grad) + as_factor(eq(mine, other), grad) * 0.5);
}

// d a^b / da = b a^(b-1), taken as 0 where b == 0 (as PyTorch), without forming 0 * inf.
Tensor pow_base_grad(const Tensor& grad, const Tensor& a, const Tensor& b) {
  const Tensor b_is_zero = as_factor(eq(b, 0), grad);
  return grad * b * pow(a, b - 1 + b_is_zero);
}

// d a^b / db = a^b log a, taken as 0 where a == 0 and b >= 0 (as PyTorch): there a is replaced
// by 1, whose log is 0, so no 0 * inf is formed; a == 0 with b < 0 keeps inf * -inf = -inf.
Tensor pow_exponent_grad(const Tensor& grad, const Tensor& a, const Tensor& b, const Tensor& out) {
  const Tensor masked = as_factor(eq(a, 0), grad) * as_factor(ge(b, 0), grad);
  return grad * out * log(a + masked);
}

// d s^x / dx = s^x log s for a scalar base s. For s == 0 it is 0 where x >= 0 and -inf where
// x < 0 (0^x = inf times log 0 = -inf), as PyTorch gives; written as -m / (1 - m) for the mask m of
// x < 0 (-1/0 = -inf, -0/1 = 0) so that no 0 * inf is formed.
Tensor pow_scalar_base_grad(const Tensor& grad, double base, const Tensor& x, const Tensor& out) {
  if (base != 0) return grad * out * std::log(base);
  const Tensor negative = as_factor(lt(x, 0), grad);
  return grad * (-negative / (1 - negative));
}

// Node names live as long as the nodes: one interned string per op.
const char* interned_name(const char* op) {
  static const char* const known[][2] = {
      {"add", "AddBackward"},         {"sub", "SubBackward"},   {"mul", "MulBackward"},
      {"div", "DivBackward"},         {"pow", "PowBackward"},   {"maximum", "MaximumBackward"},
      {"minimum", "MinimumBackward"}, {"neg", "NegBackward"},   {"abs", "AbsBackward"},
      {"exp", "ExpBackward"},         {"log", "LogBackward"},   {"sqrt", "SqrtBackward"},
      {"relu", "ReluBackward"},       {"gelu", "GeluBackward"}, {"tanh", "TanhBackward"},
      {"sigmoid", "SigmoidBackward"},
  };
  for (const auto& entry : known)
    if (is(op, entry[0])) return entry[1];
  throw Error(fmt::format("internal: autograd has no backward for '{}'", op));
}

}  // namespace

void record_binary(const char* op, const Tensor& a, const Tensor& b, const Tensor& out) {
  const bool need_a = requires_grad(a), need_b = requires_grad(b);
  const std::optional<SymShape> shape_a = broadcast_from(a, out), shape_b = broadcast_from(b, out);
  const char* name = interned_name(op);
  // Values are saved only for the formulas that read them.
  const bool reads_inputs = !is(op, "add") && !is(op, "sub");
  const SavedTensor saved_a = reads_inputs ? SavedTensor(a, false) : SavedTensor();
  const SavedTensor saved_b = reads_inputs ? SavedTensor(b, false) : SavedTensor();
  const SavedTensor saved_out = is(op, "pow") ? SavedTensor(out, true) : SavedTensor();
  record(name, {a, b}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor& g = grads[0];
    Tensor ga, gb;
    if (is(op, "add")) {
      ga = g, gb = g;
    } else if (is(op, "sub")) {
      ga = g;
      if (need_b) gb = -g;
    } else {
      const Tensor va = saved_a.unpack(name), vb = saved_b.unpack(name);
      if (is(op, "mul")) {
        if (need_a) ga = g * vb;
        if (need_b) gb = g * va;
      } else if (is(op, "div")) {
        if (need_a) ga = g / vb;
        if (need_b) gb = -g * va / (vb * vb);
      } else if (is(op, "pow")) {
        if (need_a) ga = pow_base_grad(g, va, vb);
        if (need_b) gb = pow_exponent_grad(g, va, vb, saved_out.unpack(name));
      } else {
        const bool maximum = is(op, "maximum");
        if (need_a) ga = winner_share(g, va, vb, maximum);
        if (need_b) gb = winner_share(g, vb, va, maximum);
      }
    }
    return {need_a && ga.defined() ? sum_to(ga, shape_a) : Tensor(),
            need_b && gb.defined() ? sum_to(gb, shape_b) : Tensor()};
  });
}

void record_binary_scalar(const char* op, const Tensor& t, const Scalar& s, bool scalar_first,
                          const Tensor& out) {
  const char* name = interned_name(op);
  const std::optional<SymShape> shape = broadcast_from(t, out);
  const bool reads_input =
      is(op, "maximum") || is(op, "minimum") || is(op, "pow") || (is(op, "div") && scalar_first);
  const SavedTensor saved_t = reads_input ? SavedTensor(t, false) : SavedTensor();
  const SavedTensor saved_out = is(op, "pow") && scalar_first ? SavedTensor(out, true) : SavedTensor();
  record(name, {t}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor& g = grads[0];
    Tensor gt_;
    if (is(op, "add")) {
      gt_ = g;
    } else if (is(op, "sub")) {
      gt_ = scalar_first ? -g : g;
    } else if (is(op, "mul")) {
      gt_ = g * s;
    } else if (is(op, "div")) {
      if (scalar_first) {
        const Tensor v = saved_t.unpack(name);
        gt_ = -g * s / (v * v);
      } else {
        gt_ = g / s;
      }
    } else if (is(op, "pow")) {
      if (scalar_first) {  // s^t
        gt_ = pow_scalar_base_grad(g, s.to_double(), saved_t.unpack(name), saved_out.unpack(name));
      } else {  // t^s: s t^(s-1), 0 where s == 0
        gt_ = s.to_double() == 0 ? zeros_like(g) : g * s * pow(saved_t.unpack(name), s.to_double() - 1);
      }
    } else {
      const Tensor v = saved_t.unpack(name);
      const Tensor wins = is(op, "maximum") ? gt(v, s) : lt(v, s);
      gt_ = g * (as_factor(wins, g) + as_factor(eq(v, s), g) * 0.5);
    }
    return {sum_to(gt_, shape)};
  });
}

void record_unary(const char* op, const Tensor& a, const Tensor& out) {
  const char* name = interned_name(op);
  // Ops whose derivative is cheapest from the result save it (exp, sqrt, tanh, sigmoid, relu).
  const bool from_output =
      is(op, "exp") || is(op, "sqrt") || is(op, "tanh") || is(op, "sigmoid") || is(op, "relu");
  const SavedTensor saved = is(op, "neg") ? SavedTensor() : SavedTensor(from_output ? out : a, from_output);
  record(name, {a}, {out}, [=](std::vector<Tensor>& grads) -> std::vector<Tensor> {
    const Tensor& g = grads[0];
    if (is(op, "neg")) return {-g};
    const Tensor v = saved.unpack(name);
    if (is(op, "abs")) return {g * (as_factor(gt(v, 0), g) - as_factor(lt(v, 0), g))};
    if (is(op, "exp")) return {g * v};
    if (is(op, "log")) return {g / v};
    if (is(op, "sqrt")) return {g / (v * 2)};
    if (is(op, "relu")) return {g * as_factor(gt(v, 0), g)};
    if (is(op, "tanh")) return {g * (1 - v * v)};
    if (is(op, "sigmoid")) return {g * v * (1 - v)};
    return {g * detail::gelu_grad(v)};  // gelu
  });
}

void record_identity(const char* name, const Tensor& a, const Tensor& out) {
  record(name, {a}, {out}, [](std::vector<Tensor>& grads) -> std::vector<Tensor> { return {grads[0]}; });
}

}  // namespace tessera::autograd

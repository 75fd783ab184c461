// float32 results bit for bit: a scalar float32 transcription of PyTorch's single-tensor SGD and
// AdamW (torch/optim/sgd.py, adam.py with decoupled weight decay), rounding where PyTorch's float32
// kernels round: each tensor op is one rounding, Python-float coefficients are computed in double
// and rounded to float where they meet a tensor. Equality here means the optimizer does the same
// ops in the same order (a different but equivalent formula differs in the last bits).
#include "reference.hpp"

namespace ts = tessera;
using optim_test::make;
using optim_test::Values;

namespace {

using Floats = std::vector<float>;

// torch._single_tensor_sgd, one element at a time.
struct SgdFloat32 {
  explicit SgdFloat32(const ts::optim::SGDOptions& options) : o(options) {}
  ts::optim::SGDOptions o;
  Floats buf;
  bool started = false;

  void step(Floats& p, const Floats& grad) {
    if (!started) buf.assign(p.size(), 0.0f);
    const float wd = static_cast<float>(o.weight_decay), momentum = static_cast<float>(o.momentum);
    const float one_minus_dampening = static_cast<float>(1 - o.dampening), lr = static_cast<float>(o.lr);
    for (size_t k = 0; k < p.size(); ++k) {
      float g = o.maximize ? -grad[k] : grad[k];
      if (o.weight_decay != 0) g = g + wd * p[k];  // grad.add(param, alpha=wd)
      if (o.momentum != 0) {
        // clone(grad), then buf.mul_(momentum).add_(grad, alpha=1-dampening)
        if (!started) {
          buf[k] = g;
        } else {
          const float scaled = buf[k] * momentum;
          buf[k] = scaled + one_minus_dampening * g;
        }
        g = o.nesterov ? g + momentum * buf[k] : buf[k];  // grad.add(buf, alpha=momentum)
      }
      p[k] = p[k] + -lr * g;  // param.add_(grad, alpha=-lr)
    }
    started = true;
  }
};

// torch._single_tensor_adam(decoupled_weight_decay=True), one element at a time.
struct AdamWFloat32 {
  explicit AdamWFloat32(const ts::optim::AdamWOptions& options) : o(options) {}
  ts::optim::AdamWOptions o;
  Floats m, v, vmax;
  int64_t t = 0;

  void step(Floats& p, const Floats& grad) {
    if (t == 0) {
      m.assign(p.size(), 0.0f);
      v.assign(p.size(), 0.0f);
      vmax.assign(p.size(), 0.0f);
    }
    ++t;
    const auto [beta1, beta2] = o.betas;
    const float decay = static_cast<float>(1 - o.lr * o.weight_decay);
    const float weight = static_cast<float>(1 - beta1);  // lerp's weight, cast by the kernel
    const float b2 = static_cast<float>(beta2), one_minus_b2 = static_cast<float>(1 - beta2);
    const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(t));
    const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(t));
    const float neg_step_size = static_cast<float>(-(o.lr / bias_correction1));
    const float bias_correction2_sqrt = static_cast<float>(std::pow(bias_correction2, 0.5));
    const float eps = static_cast<float>(o.eps);
    for (size_t k = 0; k < p.size(); ++k) {
      const float g = o.maximize ? -grad[k] : grad[k];
      if (o.weight_decay != 0) p[k] = p[k] * decay;  // param.mul_(1 - lr*wd)
      // exp_avg.lerp_(grad, 1-beta1): ATen's lerp switches formula at |weight| = 0.5.
      const float diff = g - m[k];
      m[k] = std::abs(weight) < 0.5f ? m[k] + weight * diff : g - diff * (1.0f - weight);
      // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2): self + value*t1*t2
      const float scaled = v[k] * b2;
      v[k] = scaled + one_minus_b2 * g * g;
      if (o.amsgrad) vmax[k] = std::max(vmax[k], v[k]);
      // denom = (v.sqrt() / bias_correction2_sqrt).add_(eps)
      const float denom = std::sqrt(o.amsgrad ? vmax[k] : v[k]) / bias_correction2_sqrt + eps;
      p[k] = p[k] + neg_step_size * m[k] / denom;  // param.addcdiv_(exp_avg, denom, value=-step_size)
    }
  }
};

const Floats kOrderTheta0 = {0.5f, -1.25f, 2.0f, 0.75f, -0.3f, 1e-3f, 12.5f};
const std::vector<Floats> kOrderGrads = {{3.1f, -2.5f, 4.0f, -1.5f, 2.0f, 0.7f, -0.01f},
                                         {-0.4f, 0.9f, 0.05f, 0.6f, -0.15f, 1e-4f, 0.3f},
                                         {0.025f, 0.015f, -0.13f, 0.08f, 0.035f, -2.0f, 0.9f},
                                         {-0.05f, -0.06f, 0.07f, -0.09f, 0.12f, 0.33f, -0.7f},
                                         {0.2f, -0.01f, 0.3f, 0.004f, -0.5f, 0.0f, 1.7f}};

ts::Tensor make_float(const Floats& values) {
  return ts::from_values(values, {static_cast<int64_t>(values.size())}, ts::kFloat32);
}

template <class Opt, class Ref, class Options>
void check_bitwise(const Options& options) {
  Floats expected = kOrderTheta0;
  ts::Tensor p = make_float(expected);
  Opt opt({p}, options);
  Ref ref{options};
  for (size_t s = 0; s < kOrderGrads.size(); ++s) {
    p.set_grad(make_float(kOrderGrads[s]));
    opt.step();
    ref.step(expected, kOrderGrads[s]);
    const Floats got = p.to_vector<float>();
    for (size_t k = 0; k < expected.size(); ++k)
      CHECK_MESSAGE(got[k] == expected[k],
                    "step " << s + 1 << " index " << k << ": " << got[k] << " vs " << expected[k]);
  }
}

}  // namespace

TEST_CASE("SGD in float32 rounds exactly as PyTorch's single-tensor SGD") {
  check_bitwise<ts::optim::SGD, SgdFloat32>(ts::optim::SGDOptions{.lr = 0.1});
  check_bitwise<ts::optim::SGD, SgdFloat32>(
      ts::optim::SGDOptions{.lr = 0.03, .momentum = 0.9, .weight_decay = 0.01});
  check_bitwise<ts::optim::SGD, SgdFloat32>(ts::optim::SGDOptions{
      .lr = 0.07, .momentum = 0.6, .dampening = 0.3, .weight_decay = 0.2, .maximize = true});
  check_bitwise<ts::optim::SGD, SgdFloat32>(
      ts::optim::SGDOptions{.lr = 0.05, .momentum = 0.85, .weight_decay = 0.05, .nesterov = true});
}

TEST_CASE("AdamW in float32 rounds exactly as PyTorch's single-tensor AdamW") {
  check_bitwise<ts::optim::AdamW, AdamWFloat32>(ts::optim::AdamWOptions{});
  check_bitwise<ts::optim::AdamW, AdamWFloat32>(ts::optim::AdamWOptions{.lr = 0.03, .weight_decay = 0.2});
  check_bitwise<ts::optim::AdamW, AdamWFloat32>(ts::optim::AdamWOptions{
      .lr = 0.01, .betas = {0.8, 0.5}, .eps = 1e-6, .amsgrad = true, .maximize = true});
  // beta1 < 0.5: lerp's second formula.
  check_bitwise<ts::optim::AdamW, AdamWFloat32>(ts::optim::AdamWOptions{.lr = 0.02, .betas = {0.3, 0.9}});
}

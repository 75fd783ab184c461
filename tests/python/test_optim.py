"""tessera.optim's SGD and AdamW against their update formulas written out in NumPy, over
module.parameters() and plain tensors, and the learning-rate schedules against their closed forms."""
import math

import numpy as np
import pytest

import tessera as ts
from tessera.optim import SGD, AdamW
from tessera.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, LinearLR


def arr(t):
    return np.array(t.tolist(), dtype=np.float64).reshape(t.shape)


def quadratic_grad(w, scale):
    """Sets w.grad to d/dw sum(scale * w^2) = 2 * scale * w; returns it as NumPy."""
    w.grad = None
    (ts.sum(w * w) * scale).backward()
    return arr(w.grad)


def test_sgd_with_momentum_weight_decay_and_nesterov():
    start = np.array([1.5, -0.5, 0.25, 2.0])
    w = ts.tensor(start.astype(np.float32), requires_grad=True)
    opt = SGD([w], lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)
    expected, buf = start.copy(), None
    for step in range(3):
        g = quadratic_grad(w, 1.0 + step) + 0.01 * expected
        buf = g if buf is None else 0.9 * buf + g
        expected = expected - 0.1 * (g + 0.9 * buf)
        opt.step()
        np.testing.assert_allclose(arr(w), expected, rtol=1e-5)


def test_adamw_over_module_parameters():
    ts.manual_seed(11)
    lin = ts.nn.Linear(3, 2)
    opt = AdamW(lin.parameters(), lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)
    params = {name: arr(p.data) for name, p in lin.named_parameters()}
    m = {name: np.zeros_like(v) for name, v in params.items()}
    v = {name: np.zeros_like(v) for name, v in params.items()}
    x = ts.tensor(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32))
    for t in range(1, 4):
        opt.zero_grad()
        ts.sum(lin(x) * lin(x)).backward()
        for name, p in lin.named_parameters():
            g = arr(p.grad)
            params[name] *= 1 - 0.01 * 0.1
            m[name] = 0.8 * m[name] + 0.2 * g
            v[name] = 0.95 * v[name] + 0.05 * g * g
            m_hat, v_hat = m[name] / (1 - 0.8 ** t), v[name] / (1 - 0.95 ** t)
            params[name] -= 0.01 * m_hat / (np.sqrt(v_hat) + 1e-6)
        opt.step()
        for name, p in lin.named_parameters():
            np.testing.assert_allclose(arr(p.data), params[name], rtol=1e-4, atol=1e-6)


def test_zero_grad_and_lr():
    w = ts.tensor([1.0, 2.0], requires_grad=True)
    opt = AdamW([w], lr=0.5)
    quadratic_grad(w, 1.0)
    opt.zero_grad()
    assert w.grad is None
    assert opt.lr == 0.5 and opt.param_groups[0]["lr"] == 0.5
    opt.lr = 0.25
    assert opt.param_groups[0]["lr"] == 0.25
    with pytest.raises(ts.Error, match="lr"):
        opt.lr = -1.0
    with pytest.raises(TypeError, match="parameter 0 must be a ts.nn.Parameter"):
        SGD([1.0])


def test_linear_lr_warmup():
    opt = SGD([ts.tensor([1.0], requires_grad=True)], lr=0.4)
    sched = LinearLR(opt, start_factor=0.25, total_iters=4)
    seen = [opt.lr]
    for _ in range(6):
        sched.step()
        seen.append(opt.lr)
    factors = [0.25 + (1 - 0.25) * min(e, 4) / 4 for e in range(7)]
    assert seen == pytest.approx([0.4 * f for f in factors])
    assert sched.get_last_lr() == pytest.approx([0.4])
    assert sched.last_epoch == 6


def test_cosine_annealing_and_lambda():
    opt = SGD([ts.tensor([1.0], requires_grad=True)], lr=1.0)
    sched = CosineAnnealingLR(opt, T_max=5, eta_min=0.1)
    lrs = [opt.lr]
    for _ in range(5):
        sched.step()
        lrs.append(opt.lr)
    assert lrs == pytest.approx([0.1 + 0.9 * (1 + math.cos(math.pi * e / 5)) / 2 for e in range(6)])

    opt2 = SGD([ts.tensor([1.0], requires_grad=True)], lr=2.0)
    lam = LambdaLR(opt2, lambda epoch: 1.0 / (epoch + 1))
    for e in range(1, 4):
        lam.step()
        assert opt2.lr == pytest.approx(2.0 / (e + 1))

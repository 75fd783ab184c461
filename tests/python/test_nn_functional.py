"""tessera.nn.functional against NumPy written out here, on plain tensors and on DTensors (whose
sharding rules must give the same global values), and tessera.nn.utils.clip_grad_norm_ against the
norm computed in NumPy."""
import math

import numpy as np
import pytest

import tessera as ts
import tessera.nn.functional as F
from tessera.nn.utils import clip_grad_norm_


def arr(t):
    return np.array(t.tolist(), dtype=np.float64).reshape(t.shape)


def values(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_pointwise_ops():
    a = values(3, 7)
    x = ts.tensor(a)
    np.testing.assert_allclose(arr(F.relu(x)), np.maximum(a, 0))
    np.testing.assert_allclose(arr(F.silu(x)), a / (1 + np.exp(-a)), rtol=1e-5, atol=1e-6)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(arr(F.gelu(x)), a * 0.5 * (1 + erf(a / math.sqrt(2))), rtol=1e-5, atol=1e-6)
    tanh_form = 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
    np.testing.assert_allclose(arr(F.gelu(x, approximate="tanh")), tanh_form, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(arr(F.softmax(x, dim=0)), softmax(a.astype(np.float64), 0), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(arr(F.dropout(x, p=0.5, training=False)), a)


def test_linear_embedding_and_norms():
    a, w, b = values(5, 3, seed=1), values(7, 3, seed=2), values(7, seed=3)
    np.testing.assert_allclose(arr(F.linear(ts.tensor(a), ts.tensor(w), ts.tensor(b))), a @ w.T + b, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(arr(F.linear(ts.tensor(a), ts.tensor(w))), a @ w.T, rtol=1e-5, atol=1e-6)
    table = values(9, 4, seed=4)
    idx = np.array([8, 0, 3, 3])
    np.testing.assert_array_equal(arr(F.embedding(ts.tensor(idx), ts.tensor(table))), table[idx])

    x, g, beta = values(2, 3, 6, seed=5).astype(np.float64), values(6, seed=6), values(6, seed=7)
    t = ts.tensor(x.astype(np.float32))
    normed = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(arr(F.layer_norm(t, 6, ts.tensor(g), ts.tensor(beta))), normed * g + beta,
                               rtol=1e-4, atol=1e-5)
    rms = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(arr(F.rms_norm(t, [6], ts.tensor(g), eps=1e-3)), rms * g, rtol=1e-4, atol=1e-5)


def test_scaled_dot_product_attention_causal():
    q, k, v = values(2, 3, 5, 4, seed=8), values(2, 3, 5, 4, seed=9), values(2, 3, 5, 4, seed=10)
    scores = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / math.sqrt(4)
    scores = np.where(np.tril(np.ones((5, 5), dtype=bool)), scores, -np.inf)
    expected = softmax(scores, -1) @ v
    got = F.scaled_dot_product_attention(ts.tensor(q), ts.tensor(k), ts.tensor(v), is_causal=True)
    np.testing.assert_allclose(arr(got), expected, rtol=1e-4, atol=1e-5)
    scaled = F.scaled_dot_product_attention(ts.tensor(q), ts.tensor(k), ts.tensor(v), scale=0.125)
    np.testing.assert_allclose(arr(scaled), softmax(q.astype(np.float64) @ np.swapaxes(k, -1, -2) * 0.125, -1) @ v,
                               rtol=1e-4, atol=1e-5)


def test_cross_entropy_with_ignore_index_and_label_smoothing():
    logits = values(6, 7, seed=11).astype(np.float64)
    target = np.array([0, 6, 3, 3, -100, 2])
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    kept = target != -100
    nll = -logp[kept, target[kept]]
    t, y = ts.tensor(logits.astype(np.float32)), ts.tensor(target)
    assert F.cross_entropy(t, y).item() == pytest.approx(nll.mean(), rel=1e-5)
    assert F.cross_entropy(t, y, reduction="sum").item() == pytest.approx(nll.sum(), rel=1e-5)
    smooth = (1 - 0.1) * nll + 0.1 * (-logp[kept].mean(-1))
    assert F.cross_entropy(t, y, label_smoothing=0.1).item() == pytest.approx(smooth.mean(), rel=1e-5)


def test_dtensor_operands_give_the_global_result():
    a, w = values(8, 6, seed=12), values(10, 6, seed=13)
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        da = ts.distribute_tensor(ts.tensor(a), mesh, [ts.Shard(0)])
        dw = ts.distribute_tensor(ts.tensor(w), mesh, [ts.Shard(0)])
        out = F.linear(da, dw)
        assert isinstance(out, ts.DTensor)
        np.testing.assert_allclose(arr(out.full_tensor().reconcile()), a @ w.T, rtol=1e-5, atol=1e-5)
        sm = F.softmax(da, dim=1)
        np.testing.assert_allclose(arr(sm.full_tensor().reconcile()), softmax(a.astype(np.float64), 1), rtol=1e-5,
                                   atol=1e-7)


def test_bad_operands_are_type_errors():
    with pytest.raises(TypeError):
        F.relu("x")
    with pytest.raises(TypeError, match="normalized_shape must be an int or a sequence of ints"):
        F.layer_norm(ts.ones(2, 3), "3")


def grads_of(tensors):
    return [arr(t.grad) for t in tensors]


def test_clip_grad_norm_scales_to_max_norm():
    ws = [ts.tensor(values(3, 4, seed=14), requires_grad=True), ts.tensor(values(5, seed=15), requires_grad=True)]
    (ts.sum(ws[0] * ws[0]) * 3.0 + ts.sum(ws[1]) * 2.0).backward()
    grads = grads_of(ws)
    total = math.sqrt(sum((g * g).sum() for g in grads))
    assert total > 1.0
    norm = clip_grad_norm_(ws, max_norm=1.0)
    assert norm.item() == pytest.approx(total, rel=1e-6)
    for g, clipped in zip(grads, grads_of(ws)):
        np.testing.assert_allclose(clipped, g * (1.0 / (total + 1e-6)), rtol=1e-5)
    # At most max_norm: left as they are. The inf norm is the largest |g|.
    before = grads_of(ws)
    assert clip_grad_norm_(ws, max_norm=10.0, norm_type=math.inf).item() == pytest.approx(
        max(np.abs(g).max() for g in before), rel=1e-6)
    for g, after in zip(before, grads_of(ws)):
        np.testing.assert_array_equal(after, g)


def test_clip_grad_norm_takes_module_parameters_and_refuses_other_things():
    ts.manual_seed(9)
    lin = ts.nn.Linear(4, 3)
    x = ts.tensor(values(2, 4, seed=16))
    lin(x).sum().backward()
    grads = [arr(p.grad) for p in lin.parameters()]
    total = math.sqrt(sum((g * g).sum() for g in grads))
    assert clip_grad_norm_(lin.parameters(), 0.5).item() == pytest.approx(total, rel=1e-6)
    with pytest.raises(TypeError, match="parameter 1 must be a ts.nn.Parameter, ts.Tensor or ts.DTensor"):
        clip_grad_norm_([lin.weight, 3], 1.0)

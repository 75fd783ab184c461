"""tessera.nn modules from Python: parameters and their dotted names, state_dict / load_state_dict,
train/eval, zero_grad, to(dtype), and each module's forward against a NumPy computation from its
parameters' values."""
import math

import numpy as np
import pytest

import tessera as ts
from tessera import nn


def arr(t):
    return np.array(t.tolist(), dtype=np.float64).reshape(t.shape)


def iota(*shape):
    """Distinct values, so a transposed or misplaced element shows."""
    return ts.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 7.0 - 1.0)


def test_linear_forward_is_x_wt_plus_b():
    ts.manual_seed(1)
    lin = nn.Linear(3, 7)
    x = iota(5, 3)
    w, b = arr(lin.weight.data), arr(lin.bias.data)
    assert w.shape == (7, 3) and b.shape == (7,)
    k = 1 / math.sqrt(3)
    assert np.all(np.abs(w) <= k) and np.all(np.abs(b) <= k)  # U(-k, k)
    np.testing.assert_allclose(arr(lin(x)), arr(x) @ w.T + b, rtol=1e-5, atol=1e-6)
    assert nn.Linear(3, 7, bias=False).bias is None
    assert [name for name, _ in nn.Linear(3, 7, bias=False).named_parameters()] == ["weight"]


def test_embedding_layer_norm_rms_norm_against_numpy():
    ts.manual_seed(2)
    emb = nn.Embedding(7, 3)
    idx = ts.tensor([[4, 0, 6], [1, 1, 3]], dtype=ts.int64)
    table = arr(emb.weight.data)
    np.testing.assert_array_equal(arr(emb(idx)), table[np.array([[4, 0, 6], [1, 1, 3]])])

    x = iota(2, 3, 7)
    ln = nn.LayerNorm(7, eps=1e-5)
    a = arr(x)
    mean = a.mean(-1, keepdims=True)
    var = a.var(-1, keepdims=True)
    np.testing.assert_allclose(arr(ln(x)), (a - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)

    rms = nn.RMSNorm([7], eps=1e-6)
    np.testing.assert_allclose(arr(rms(x)), a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6), rtol=1e-4,
                               atol=1e-5)


def test_dropout_is_the_identity_in_eval_mode_and_scales_survivors_in_training():
    drop = nn.Dropout(p=0.25)
    x = iota(4, 8) + 3.0  # no zeros in the input
    out = arr(drop(x))
    kept = out != 0
    np.testing.assert_allclose(out[kept], arr(x)[kept] / 0.75, rtol=1e-6)
    assert drop.eval() is drop and not drop.training
    np.testing.assert_array_equal(arr(drop(x)), arr(x))


def test_sequential_runs_its_steps_in_order():
    ts.manual_seed(3)
    first, second = nn.Linear(3, 5), nn.Linear(5, 2)
    seq = nn.Sequential(first, nn.ReLU(), second)
    x = iota(4, 3)
    h = np.maximum(arr(x) @ arr(first.weight.data).T + arr(first.bias.data), 0)
    expected = h @ arr(second.weight.data).T + arr(second.bias.data)
    np.testing.assert_allclose(arr(seq(x)), expected, rtol=1e-5, atol=1e-6)
    assert len(seq) == 3
    assert [name for name, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_module_list_indexing_and_names():
    layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 3)])
    layers.append(nn.LayerNorm(3))
    assert len(layers) == 3
    assert isinstance(layers[-1], nn.LayerNorm) and isinstance(layers[1], nn.Linear)
    assert layers[1].out_features == 3
    assert [type(m).__name__ for m in layers] == ["Linear", "Linear", "LayerNorm"]
    with pytest.raises(IndexError, match="out of range for 3"):
        layers[3]


TRANSFORMER_ARGS = dict(dim=16, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=32, ffn_hidden=24, max_seq_len=8)


def small_transformer(seed=0):
    ts.manual_seed(seed)
    return ts.models.Transformer(ts.models.TransformerArgs(**TRANSFORMER_ARGS))


def test_transformer_names_follow_torchtitan():
    model = small_transformer()
    names = [name for name, _ in model.named_parameters()]
    block = ["attention.wq.weight", "attention.wk.weight", "attention.wv.weight", "attention.wo.weight",
             "feed_forward.w1.weight", "feed_forward.w2.weight", "feed_forward.w3.weight",
             "attention_norm.weight", "ffn_norm.weight"]
    assert names[0] == "tok_embeddings.weight" and names[-2:] == ["norm.weight", "output.weight"]
    assert set(names[1:-2]) == {f"layers.{i}.{n}" for i in range(2) for n in block}
    assert list(model.state_dict()) == names  # the rotary tables are non-persistent buffers
    shapes = dict((name, p.shape) for name, p in model.named_parameters())
    assert shapes["layers.0.attention.wk.weight"] == (8, 16)  # n_kv_heads * head_dim rows
    assert shapes["layers.1.feed_forward.w2.weight"] == (16, 24)
    modules = [name for name, _ in model.named_modules()]
    assert modules[:3] == ["", "tok_embeddings", "layers"] and "layers.1.attention.wq" in modules
    assert isinstance(model.layers[0].attention.wq, nn.Linear)
    assert model.get_parameter("layers.1.ffn_norm.weight").same_slot(model.layers[1].ffn_norm.weight)


def test_transformer_forward_shape_and_determinism():
    tokens = ts.tensor([[1, 5, 9, 30], [2, 2, 31, 0]], dtype=ts.int64)
    a, b = small_transformer(4)(tokens), small_transformer(4)(tokens)
    assert a.shape == (2, 4, 32)
    np.testing.assert_array_equal(arr(a), arr(b))
    # Causal: the logits at position 0 do not depend on later tokens.
    changed = ts.tensor([[1, 6, 10, 29], [2, 3, 30, 1]], dtype=ts.int64)
    c = small_transformer(4)(changed)
    np.testing.assert_array_equal(arr(a)[:, 0], arr(c)[:, 0])
    assert not np.array_equal(arr(a)[:, 1], arr(c)[:, 1])


def test_state_dict_round_trip_and_strict_errors():
    source, target = small_transformer(5), small_transformer(6)
    state = source.state_dict()
    before = {name: arr(p.data) for name, p in target.named_parameters()}
    assert not np.array_equal(before["output.weight"], arr(state["output.weight"]))
    handle = target.output.weight.data
    result = target.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for name, p in target.named_parameters():
        np.testing.assert_array_equal(arr(p.data), arr(state[name]))
    np.testing.assert_array_equal(arr(handle), arr(state["output.weight"]))  # loaded in place

    partial = dict(state)
    del partial["norm.weight"]
    partial["extra.weight"] = ts.zeros(2)
    with pytest.raises(ts.Error, match="norm.weight"):
        target.load_state_dict(partial)
    keys = target.load_state_dict(partial, strict=False)
    assert keys.missing_keys == ["norm.weight"] and keys.unexpected_keys == ["extra.weight"]
    with pytest.raises(TypeError, match="'output.weight' must be a ts.Tensor"):
        target.load_state_dict({"output.weight": 3})


def test_train_eval_zero_grad_and_to():
    model = small_transformer()
    assert model.training and model.eval() is model
    assert not model.training and not model.layers[1].attention.training
    model.train()
    tokens = ts.tensor([[3, 1, 4, 1]], dtype=ts.int64)
    model(tokens).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert model.to(ts.float64) is model
    assert {p.dtype for p in model.parameters()} == {ts.float64}


def test_parameter_reads_as_its_value():
    t = ts.tensor([1.0, -2.0, 3.0])
    p = nn.Parameter(t)
    assert p.requires_grad and p.shape == (3,) and p.dtype == ts.float32 and p.numel() == 3
    assert p.tolist() == [1.0, -2.0, 3.0]  # looked up on the value
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="must be a ts.nn.Parameter, ts.Tensor or ts.DTensor, got str"):
        nn.Parameter("w")
    with pytest.raises(AttributeError, match="no attribute, submodule, parameter or buffer 'wz'"):
        nn.Linear(2, 2).wz


def test_repr_shows_the_tree():
    text = repr(small_transformer())
    assert text.startswith("Transformer(") and "(wq): Linear(" in text

"""ts.Tensor from Python: properties, views, indexing, operators and reductions, with NumPy as the oracle."""
import numpy as np
import pytest

import tessera as ts


def iota(*shape, dtype=np.float32):
    """Distinct values 1..n, so a wrong element order cannot pass."""
    return (np.arange(int(np.prod(shape)), dtype=dtype) + 1).reshape(shape)


def as_ts(array):
    return ts.tensor(array.tolist(), dtype=ts.float64 if array.dtype == np.float64 else None)


def check(t, expected):
    assert t.shape == expected.shape
    np.testing.assert_allclose(np.asarray(t.tolist(), dtype=np.float64), expected.astype(np.float64), rtol=1e-6)


def test_properties():
    t = ts.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4)
    assert t.size() == (2, 3, 4)
    assert t.size(1) == 3
    assert t.size(-1) == 4
    assert t.ndim == 3 and t.dim() == 3
    assert t.numel() == 24
    assert t.dtype == ts.float32
    assert t.device == "cpu"
    assert t.stride() == (12, 4, 1)
    assert t.element_size() == 4
    assert len(t) == 2
    assert not t.is_local
    assert repr(ts.float64) == "tessera.float64"


def test_repr_matches_pytorch_style():
    assert repr(ts.tensor([[1.0, 2.0], [3.0, 4.5]])) == "tensor([[1.0000, 2.0000],\n        [3.0000, 4.5000]])"
    assert repr(ts.tensor([1, 2, 3])) == "tensor([1, 2, 3])"


@pytest.mark.parametrize(
    "key",
    [1, -1, (0, 2), (slice(None), 1), (slice(1, None), slice(None, None, 2)), (Ellipsis, 0), (None, 1),
     (1, None, slice(0, 3)), slice(-2, None), (slice(None, None, 3), -2)],
)
def test_indexing_matches_numpy(key):
    a = iota(3, 4, 5)
    check(as_ts(a)[key], a[key])


def test_indexing_errors():
    t = ts.zeros(2, 3)
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="index -3 is out of range for dim 0 of size 2"):
        t[-3]
    with pytest.raises(ValueError, match="step must be positive"):
        t[::-1]
    with pytest.raises(TypeError, match="an index must be"):
        t["a"]


def test_setitem_writes_through_the_view():
    a = iota(3, 4)
    t = as_ts(a)
    t[1] = 0.5
    t[:, 2] = ts.tensor([7.0, 8.0, 9.0])
    a[1] = 0.5
    a[:, 2] = [7.0, 8.0, 9.0]
    check(t, a)


def test_views_share_memory():
    t = ts.zeros(2, 3)
    t.t()[1].fill_(5)
    check(t, np.array([[0, 5, 0], [0, 5, 0]], dtype=np.float32))
    v = t.view(3, 2)
    v[0, 0] = 1
    assert t[0, 0].item() == 1.0


@pytest.mark.parametrize(
    "method,args,oracle",
    [
        ("reshape", (4, 6), lambda a: a.reshape(4, 6)),
        ("reshape", ((-1, 3),), lambda a: a.reshape(-1, 3)),
        ("transpose", (0, 2), lambda a: a.transpose(2, 1, 0)),
        ("permute", (2, 0, 1), lambda a: a.transpose(2, 0, 1)),
        ("flatten", (), lambda a: a.reshape(-1)),
        ("unsqueeze", (1,), lambda a: a[:, None]),
        ("flip", ((0, 2),), lambda a: a[::-1, :, ::-1]),
        ("narrow", (1, 1, 2), lambda a: a[:, 1:3]),
        ("select", (2, 3), lambda a: a[:, :, 3]),
    ],
)
def test_views_match_numpy(method, args, oracle):
    a = iota(2, 3, 4)
    check(getattr(as_ts(a), method)(*args), oracle(a))


def test_expand_and_squeeze():
    a = iota(1, 3)
    check(as_ts(a).expand(4, 3), np.broadcast_to(a, (4, 3)))
    check(as_ts(a).squeeze(), a.squeeze())
    check(as_ts(a).squeeze(0), a.squeeze(0))
    check(as_ts(a).T, a.T)


@pytest.mark.parametrize(
    "op",
    [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y, lambda x, y: x ** y,
     lambda x, y: 2.5 - x, lambda x, y: 3 / y, lambda x, y: x * 2 + 1, lambda x, y: -x, lambda x, y: x @ y.T],
)
def test_arithmetic_matches_numpy(op):
    a = iota(3, 4) / 7
    b = iota(3, 4)[::-1].copy() / 5
    check(op(as_ts(a), as_ts(b)), op(a, b))


def test_comparisons_give_bool_tensors():
    a = iota(2, 3)
    b = np.full((2, 3), 3.0, dtype=np.float32)
    for op in [lambda x, y: x < y, lambda x, y: x <= y, lambda x, y: x > y, lambda x, y: x >= y,
               lambda x, y: x == y, lambda x, y: x != y]:
        got = op(as_ts(a), as_ts(b))
        assert got.dtype == ts.bool
        assert got.tolist() == op(a, b).tolist()
    assert (as_ts(a) > 2).tolist() == (a > 2).tolist()


def test_unsupported_operand_is_a_type_error():
    with pytest.raises(TypeError):
        ts.ones(2) + "x"
    with pytest.raises(TypeError):
        ts.ones(2) + [1, 2]


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_match_numpy(dim, keepdim):
    a = iota(3, 4) / 3
    t = as_ts(a)
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    for name, oracle in [("sum", np.sum), ("mean", np.mean), ("prod", np.prod)]:
        got = getattr(t, name)(dim=dim, keepdim=keepdim if dim is not None else False)
        check(got, np.asarray(oracle(a, axis=axis, keepdims=keepdim if dim is not None else False)))


def test_max_min_argmax():
    a = np.array([[3, 9, 1], [7, 2, 8]], dtype=np.float32)
    t = as_ts(a)
    assert t.max().item() == 9.0
    assert t.min().item() == 1.0
    values, indices = t.max(dim=1)
    assert values.tolist() == [9.0, 8.0]
    assert indices.tolist() == [1, 2]
    values, indices = ts.min(t, dim=0, keepdim=True)
    assert values.tolist() == [[3.0, 2.0, 1.0]]
    assert indices.tolist() == [[0, 1, 0]]
    assert t.argmax().item() == int(np.argmax(a))
    assert t.argmin(dim=1).tolist() == np.argmin(a, axis=1).tolist()


def test_elementwise_functions_match_numpy():
    a = (iota(2, 3) - 3.5) / 2
    t = as_ts(a)
    check(t.abs(), np.abs(a))
    check(ts.exp(t), np.exp(a))
    check(t.relu(), np.maximum(a, 0))
    check(ts.tanh(t), np.tanh(a))
    check(t.sigmoid(), 1 / (1 + np.exp(-a)))
    check(ts.sqrt(as_ts(iota(4))), np.sqrt(iota(4)))
    e = np.exp(a - a.max(axis=1, keepdims=True))
    check(t.softmax(dim=1), e / e.sum(axis=1, keepdims=True))
    check(ts.maximum(t, 0.25), np.maximum(a, 0.25))


def test_join_and_split():
    a, b = iota(2, 3), iota(2, 3) * 10
    check(ts.cat([as_ts(a), as_ts(b)], dim=1), np.concatenate([a, b], axis=1))
    check(ts.stack([as_ts(a), as_ts(b)]), np.stack([a, b]))
    parts = ts.split(as_ts(iota(5, 2)), 2)
    assert [p.shape for p in parts] == [(2, 2), (2, 2), (1, 2)]
    parts = ts.split(as_ts(iota(5, 2)), [1, 4])
    check(parts[1], iota(5, 2)[1:])
    assert [c.shape for c in ts.chunk(as_ts(iota(6)), 3)] == [(2,), (2,), (2,)]


def test_conversions_and_values():
    t = ts.tensor([[1.5, -2.0]])
    assert t.to(ts.int64).tolist() == [[1, -2]]
    assert t.to(dtype=ts.float64).dtype == ts.float64
    assert t.double().dtype == ts.float64
    assert t.long().dtype == ts.int64
    assert t.to("cpu").device == "cpu"
    assert float(ts.tensor(2.5)) == 2.5
    assert int(ts.tensor(7)) == 7
    assert bool(ts.tensor(True))
    assert isinstance(ts.tensor(3).item(), int)
    assert isinstance(ts.tensor(3.0).item(), float)
    c = t.clone()
    c.zero_()
    assert t.tolist() == [[1.5, -2.0]]
    assert ts.equal(t, ts.tensor([[1.5, -2.0]]))
    assert ts.allclose(t, t + 1e-9)


def test_item_of_many_elements_is_an_error():
    with pytest.raises(ts.Error, match="item"):
        ts.ones(2).item()


def test_autograd_on_plain_tensors():
    x = ts.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad is None
    y = (x * x).sum()
    assert y.grad_fn is not None
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]  # d(sum x^2)/dx = 2x
    x.grad = None
    assert x.grad is None
    assert not x.detach().requires_grad


def test_errors_are_runtime_errors_with_the_cpp_message():
    assert issubclass(ts.Error, RuntimeError)
    assert issubclass(ts.PluginError, ts.Error) and issubclass(ts.ConfigError, ts.Error)
    assert ts.Error.__module__ == "tessera"
    with pytest.raises(RuntimeError, match=r"add: shapes \[2\] and \[3\] cannot be broadcast together"):
        ts.ones(2) + ts.ones(3)
    with pytest.raises(ts.Error, match="matmul"):
        ts.ones(2, 3) @ ts.ones(2, 3)

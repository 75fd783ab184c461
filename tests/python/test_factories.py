"""Factories with PyTorch's spellings, against NumPy and literal values."""
import numpy as np
import pytest

import tessera as ts


@pytest.mark.parametrize("shape_args", [(2, 3), ((2, 3),), ([2, 3],)])
def test_shape_spellings(shape_args):
    assert ts.ones(*shape_args).shape == (2, 3)
    assert ts.zeros(*shape_args).tolist() == [[0.0] * 3] * 2
    assert ts.empty(*shape_args).shape == (2, 3)


def test_zero_dim_and_empty_shapes():
    assert ts.ones(()).shape == ()
    assert ts.ones(()).item() == 1.0
    assert ts.zeros(0, 3).numel() == 0
    assert ts.tensor([]).shape == (0,)
    assert ts.tensor([[], []]).shape == (2, 0)


def test_keywords():
    t = ts.ones(2, dtype=ts.int64, device="cpu")
    assert t.dtype == ts.int64 and t.tolist() == [1, 1]
    assert ts.full((2, 2), 7).tolist() == [[7, 7], [7, 7]]
    assert ts.full((2,), 2.5, dtype=ts.float64).dtype == ts.float64
    assert ts.zeros(3, requires_grad=True).requires_grad


def test_arange_and_eye_match_numpy():
    assert ts.arange(5).tolist() == list(range(5))
    assert ts.arange(2, 11, 3).tolist() == list(range(2, 11, 3))
    np.testing.assert_allclose(ts.arange(0.0, 1.0, 0.25).tolist(), np.arange(0.0, 1.0, 0.25))
    assert ts.eye(3).tolist() == np.eye(3).tolist()
    assert ts.eye(2, 3).tolist() == np.eye(2, 3).tolist()


def test_like_factories():
    base = ts.ones(2, 3, dtype=ts.float64)
    assert ts.zeros_like(base).dtype == ts.float64
    assert ts.ones_like(base, dtype=ts.int32).dtype == ts.int32
    assert ts.full_like(base, 4).tolist() == [[4.0] * 3] * 2
    assert ts.empty_like(base).shape == (2, 3)


def test_tensor_infers_dtype_as_pytorch():
    assert ts.tensor([1, 2]).dtype == ts.int64
    assert ts.tensor([1, 2.5]).dtype == ts.float32
    assert ts.tensor([True, False]).dtype == ts.bool
    assert ts.tensor(3).shape == ()
    assert ts.tensor([[1.0, 2.0], [3.0, 4.0]]).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert ts.tensor([1, 2], dtype=ts.float64).dtype == ts.float64


def test_tensor_copies_numpy_and_tensors():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = ts.tensor(a)
    a[0, 0] = 100
    assert t.dtype == ts.float64
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]  # a copy: the write is not seen
    u = ts.tensor(t)
    u.fill_(1)
    assert t[0, 1].item() == 1.0
    assert ts.tensor(t, dtype=ts.int32).dtype == ts.int32


def test_ragged_data_is_an_error():
    with pytest.raises(ts.Error, match="ragged"):
        ts.tensor([[1, 2], [3]])
    with pytest.raises(ts.Error, match="ragged"):
        ts.tensor([[1, 2], 3])
    with pytest.raises(TypeError, match="expected a number"):
        ts.tensor([1, "two"])


def test_bad_shapes_are_clear_errors():
    with pytest.raises(TypeError, match="expected an int"):
        ts.ones(2, 2.5)
    with pytest.raises(ts.Error, match="-1"):
        ts.ones(2, -1)


def test_random_is_seeded():
    ts.manual_seed(1234)
    a = ts.randn(3, 4)
    ts.manual_seed(1234)
    b = ts.randn(3, 4)
    assert ts.equal(a, b)
    assert not ts.equal(a, ts.randn(3, 4))
    u = ts.rand(1000)
    assert 0.0 <= u.min().item() and u.max().item() < 1.0
    assert abs(u.mean().item() - 0.5) < 0.05

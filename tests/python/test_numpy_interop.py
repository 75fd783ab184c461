"""NumPy and Python protocols on tensors: np.asarray(t) (__array__), iteration and list(t) (an
out-of-range index raises IndexError), operator.index(t), ts.from_numpy, ts.as_tensor, and DLPack
round trips of every dtype NumPy has. NumPy is the oracle."""
import operator

import numpy as np
import pytest

import tessera as ts


def test_np_asarray_shares_memory_and_converts_dtype():
    t = ts.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    a[0, 0] = 9.0
    assert t.tolist()[0][0] == 9.0  # shared
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    copied = np.array(t, copy=True)
    copied[1, 1] = -1.0
    assert t.tolist()[1][1] == 4.0
    assert np.asarray(ts.tensor([1, 2], dtype=ts.int64)).dtype == np.int64


def test_np_asarray_of_a_local_or_bfloat16_tensor_is_refused():
    lt = ts.local_tensor({0: ts.ones(2), 1: ts.zeros(2)})
    with pytest.raises(TypeError, match="local tensor"):
        np.asarray(lt)
    with pytest.raises(TypeError, match="bfloat16"):
        np.asarray(ts.ones(2).to(ts.bfloat16))


def test_iteration_and_list_stop_at_the_end():
    t = ts.tensor([[1, 2], [3, 4], [5, 6]])
    assert [row.tolist() for row in t] == [[1, 2], [3, 4], [5, 6]]
    assert len(list(t)) == 3
    with pytest.raises(IndexError, match="index 3 is out of range for dim 0 of size 3"):
        t[3]
    with pytest.raises(IndexError, match="index 2 is out of range for dim 1 of size 2"):
        t[0, 2]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        t[-4]
    assert t[2, 1].item() == 6 and t[-1, -1].item() == 6


def test_integer_tensors_are_indices():
    assert operator.index(ts.tensor(3)) == 3
    data = ts.arange(10)
    start = ts.tensor(2)
    assert data[start : start + 3].tolist() == [2, 3, 4]
    assert [10, 20, 30][ts.tensor(1, dtype=ts.int32)] == 20
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        operator.index(ts.tensor(1.0))
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        operator.index(ts.tensor([1, 2]))


def test_from_numpy_shares_and_checks_its_argument():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ts.from_numpy(a)
    assert t.shape == (2, 3) and t.tolist() == a.tolist()
    a[1, 2] = 42.0
    assert t.tolist()[1][2] == 42.0
    with pytest.raises(TypeError, match="expected a numpy.ndarray, got list"):
        ts.from_numpy([1.0, 2.0])


def test_as_tensor_shares_when_it_can_and_copies_otherwise():
    a = np.array([1.0, 2.0], dtype=np.float32)
    shared = ts.as_tensor(a)
    a[0] = 7.0
    assert shared.tolist() == [7.0, 2.0]
    converted = ts.as_tensor(a, dtype=ts.float64)
    a[1] = 8.0
    assert converted.dtype == ts.float64 and converted.tolist() == [7.0, 2.0]
    t = ts.ones(2)
    assert ts.as_tensor(t) is t
    assert ts.as_tensor(t, dtype=ts.int64).dtype == ts.int64
    lst = ts.as_tensor([[1, 2], [3, 4]])
    assert lst.dtype == ts.int64 and lst.tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize("dtype, np_dtype", [(ts.float16, np.float16), (ts.int8, np.int8), (ts.uint8, np.uint8),
                                             (ts.float32, np.float32), (ts.int64, np.int64)])
def test_from_dlpack_of_small_dtypes_round_trips(dtype, np_dtype):
    values = np.array([0, 1, 2, 100], dtype=np_dtype)
    t = ts.from_dlpack(values)
    assert t.dtype == dtype
    assert t.tolist() == values.tolist()
    assert np.from_dlpack(t).tolist() == values.tolist()
    assert ts.as_tensor(values).dtype == dtype


def test_from_dlpack_of_bfloat16_through_a_capsule():
    t = ts.tensor([1.5, -2.0, 0.25]).to(ts.bfloat16)
    back = ts.from_dlpack(ts.to_dlpack(t))
    assert back.dtype == ts.bfloat16 and back.tolist() == [1.5, -2.0, 0.25]

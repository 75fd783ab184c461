"""Zero-copy interchange with NumPy: writes through one side are read through the other."""
import gc
import sys

import numpy as np
import pytest

import tessera as ts


def test_numpy_sees_tensor_memory_and_writes_back():
    t = ts.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    a = np.from_dlpack(t)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert a.flags.writeable
    a[1, 2] = 60.0  # written through NumPy ...
    assert t[1, 2].item() == 60.0  # ... read through Tessera
    t[0, 0] = -1.0
    assert a[0, 0] == -1.0


def test_numpy_method_shares_memory():
    t = ts.zeros(4, dtype=ts.int64)
    a = t.numpy()
    a[:] = [3, 1, 4, 1]
    assert t.tolist() == [3, 1, 4, 1]


@pytest.mark.parametrize("dtype,np_dtype", [(ts.float32, np.float32), (ts.float64, np.float64),
                                             (ts.int32, np.int32), (ts.int64, np.int64), (ts.bool, np.bool_),
                                             (ts.float16, np.float16), (ts.int8, np.int8), (ts.uint8, np.uint8)])
def test_every_dtype_round_trips(dtype, np_dtype):
    t = ts.tensor([1, 0, 1]).to(dtype)
    a = np.from_dlpack(t)
    assert a.dtype == np_dtype
    assert a.tolist() == np.array([1, 0, 1], dtype=np_dtype).tolist()
    back = ts.from_dlpack(a)
    assert back.dtype == dtype


def test_bfloat16_exports_pytorchs_type_code():
    # NumPy has no bfloat16; the DLPack type is what torch.from_dlpack reads: {kDLBfloat (4), 16}.
    t = ts.tensor([1.5, -2.0]).to(ts.bfloat16)
    assert t.__dlpack_device__() == (1, 0)
    assert t.dtype == ts.bfloat16 and t.dtype.itemsize == 2 and t.dtype.is_floating_point
    assert t.tolist() == [1.5, -2.0]
    assert ts.tensor([300]).to(ts.uint8).tolist() == [44]


def test_views_export_their_layout():
    base = ts.arange(12).to(ts.float32).reshape(3, 4)
    view = base[:, 1:].t()
    a = np.from_dlpack(view)
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)[:, 1:].T
    assert a.tolist() == expected.tolist()
    a[0, 0] = 100
    assert base[0, 1].item() == 100


def test_from_dlpack_shares_numpy_memory_with_any_layout():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    for view in [a, a.T, a[::-1, ::2], a[1:, 1:]]:
        t = ts.from_dlpack(view)
        assert t.tolist() == view.tolist()
    t = ts.from_dlpack(a[::-1])
    t[0, 0] = -5  # element a[2, 0]
    assert a[2, 0] == -5


def test_imported_memory_outlives_the_array_handle():
    a = np.arange(5, dtype=np.int32)
    refs = sys.getrefcount(a)
    t = ts.from_dlpack(a)
    assert sys.getrefcount(a) > refs  # the tensor keeps the array alive
    del a
    gc.collect()
    assert t.tolist() == [0, 1, 2, 3, 4]
    del t
    gc.collect()


def test_capsules():
    t = ts.tensor([1.0, 2.0])
    capsule = ts.to_dlpack(t)
    u = ts.from_dlpack(capsule)
    u[0] = 9.0
    assert t[0].item() == 9.0
    with pytest.raises(ts.Error, match="consumed once"):
        ts.from_dlpack(capsule)


def test_dlpack_device_and_copy():
    t = ts.ones(2)
    assert t.__dlpack_device__() == (1, 0)
    copied = np.from_dlpack(t, copy=True)
    copied[0] = 5
    assert t[0].item() == 1.0


def test_errors():
    ro = np.arange(3.0)
    ro.flags.writeable = False
    with pytest.raises(ts.Error, match="read-only"):
        ts.from_dlpack(ro)
    with pytest.raises(ts.Error, match="not one Tessera knows"):
        ts.from_dlpack(np.arange(3, dtype=np.int16))
    with pytest.raises(TypeError, match="__dlpack__"):
        ts.from_dlpack([1, 2, 3])
    with pytest.raises(ts.Error, match="shapes only"):
        np.from_dlpack(ts.ones(2, device="meta"))

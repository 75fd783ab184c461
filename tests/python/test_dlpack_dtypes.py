"""DLPack interchange of the narrow dtypes: float16, int8 and uint8 through NumPy (both directions,
shared memory, edge values), and bfloat16, which NumPy lacks, through capsules read and written
with ctypes so that the bits themselves are checked against values worked out by hand."""
import ctypes
import gc

import numpy as np
import pytest

import tessera as ts

# DLPack's C structs (dlpack.h; the DLTensor is the same in 0.x and 1.x).
kDLCPU, kDLInt, kDLUInt, kDLFloat, kDLBfloat = 1, 0, 1, 2, 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]

capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_get_pointer.restype = ctypes.c_void_p
capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def read_unversioned_capsule(capsule):
    """(type code, bits, lanes, shape, the 16-bit words of a contiguous 1-d tensor) of a 'dltensor'
    capsule, read without consuming it."""
    managed = DLManagedTensor.from_address(capsule_get_pointer(capsule, b"dltensor"))
    dl = managed.dl_tensor
    shape = [dl.shape[i] for i in range(dl.ndim)]
    words = (ctypes.c_uint16 * shape[0]).from_address(dl.data + dl.byte_offset)
    return dl.dtype.code, dl.dtype.bits, dl.dtype.lanes, shape, list(words)


# bfloat16 is float32's upper half: 1.5 = 0x3FC0, -2.0 = 0xC000, 0.0 = 0x0000, -0.0 = 0x8000,
# 3.140625 = 0x4049 (pi truncated to 8 significant bits), 2^-133 = 0x0001 (the smallest subnormal),
# +inf = 0x7F80, the largest finite 0x7F7F = (2 - 2^-7) * 2^127.
BF16_BITS = [0x3FC0, 0xC000, 0x0000, 0x8000, 0x4049, 0x0001, 0x7F80, 0x7F7F]
BF16_VALUES = [1.5, -2.0, 0.0, -0.0, 3.140625, 2.0 ** -133, float("inf"), (2 - 2 ** -7) * 2.0 ** 127]


def test_bfloat16_exports_its_bits_and_type_code():
    t = ts.tensor(BF16_VALUES).to(ts.bfloat16)
    capsule = t.__dlpack__()
    code, bits, lanes, shape, words = read_unversioned_capsule(capsule)
    assert (code, bits, lanes, shape) == (kDLBfloat, 16, 1, [len(BF16_VALUES)])
    assert words == BF16_BITS
    # The capsule was only read: it still imports (into a tensor sharing t's memory).
    back = ts.from_dlpack(capsule)
    assert back.dtype == ts.bfloat16
    back[4] = 1.0  # 0x3F80, written through the import ...
    assert t[4].item() == 1.0  # ... seen through the original


def test_bfloat16_round_trips_through_its_own_capsule():
    t = ts.tensor(BF16_VALUES).to(ts.bfloat16)
    for capsule in [t.__dlpack__(), t.__dlpack__(max_version=(1, 0)), ts.to_dlpack(t)]:
        back = ts.from_dlpack(capsule)
        assert back.dtype == ts.bfloat16
        assert back.tolist() == BF16_VALUES
        assert str(back[3].item()) == "-0.0"  # the sign of zero survives
        words = read_unversioned_capsule(back.__dlpack__())[4]
        assert words == BF16_BITS


def test_bfloat16_imports_from_a_foreign_producer():
    # A producer other than Tessera: a ctypes DLManagedTensor over NumPy uint16 words, typed bfloat16.
    words = np.array(BF16_BITS, dtype=np.uint16)
    shape = (ctypes.c_int64 * 1)(len(BF16_BITS))
    released = []
    deleter = DELETER(lambda managed: released.append(True))
    managed = DLManagedTensor(
        DLTensor(words.ctypes.data, DLDevice(kDLCPU, 0), 1, DLDataType(kDLBfloat, 16, 1), shape, None, 0),
        None, deleter)
    capsule = capsule_new(ctypes.addressof(managed), b"dltensor", None)
    t = ts.from_dlpack(capsule)
    assert t.dtype == ts.bfloat16 and t.shape == (len(BF16_BITS),)
    assert t.tolist() == BF16_VALUES
    t[0] = -1.5  # 0xBFC0, in the producer's memory
    assert words[0] == 0xBFC0
    assert not released
    del t, capsule
    gc.collect()
    assert released == [True]  # Tessera called the producer's deleter once, when it let go


def test_a_bfloat16_type_with_lanes_is_refused_by_name():
    words = np.zeros(2, dtype=np.uint16)
    shape = (ctypes.c_int64 * 1)(1)
    deleter = DELETER(lambda managed: None)
    managed = DLManagedTensor(
        DLTensor(words.ctypes.data, DLDevice(kDLCPU, 0), 1, DLDataType(kDLBfloat, 16, 2), shape, None, 0),
        None, deleter)
    capsule = capsule_new(ctypes.addressof(managed), b"dltensor", None)
    with pytest.raises(ts.Error, match="lanes"):
        ts.from_dlpack(capsule)


# Edge values, each exact in its type: the extremes, and for float16 the largest finite value,
# the smallest subnormal, negative zero and infinity.
NARROW = [
    (np.float16, ts.float16, [65504.0, -65504.0, 2.0 ** -24, -0.0, float("inf"), 0.099975586, 1.0]),
    (np.int8, ts.int8, [-128, 127, 0, -1, 1]),
    (np.uint8, ts.uint8, [0, 255, 1, 128, 127]),
]


@pytest.mark.parametrize("np_dtype,dtype,values", NARROW, ids=["float16", "int8", "uint8"])
def test_numpy_arrays_import_sharing_memory(np_dtype, dtype, values):
    a = np.array(values, dtype=np_dtype)
    t = ts.from_dlpack(a)
    assert t.dtype == dtype and t.shape == (len(values),)
    assert t.tolist() == a.tolist()
    t[1] = 3  # written through Tessera ...
    assert a[1] == 3  # ... read through NumPy
    a[2] = 5
    assert t[2].item() == 5


@pytest.mark.parametrize("np_dtype,dtype,values", NARROW, ids=["float16", "int8", "uint8"])
def test_numpy_capsules_import(np_dtype, dtype, values):
    a = np.array(values, dtype=np_dtype)
    for capsule in [a.__dlpack__(), a.__dlpack__(max_version=(1, 0))]:
        t = ts.from_dlpack(capsule)
        assert t.dtype == dtype
        assert t.tolist() == a.tolist()


@pytest.mark.parametrize("np_dtype,dtype,values", NARROW, ids=["float16", "int8", "uint8"])
def test_tensors_export_to_numpy_with_their_bytes(np_dtype, dtype, values):
    a = np.array(values, dtype=np_dtype)
    t = ts.from_dlpack(a.copy()).clone()  # Tessera's own memory
    exported = np.from_dlpack(t)
    assert exported.dtype == np_dtype
    assert exported.tobytes() == a.tobytes()  # bit for bit, -0.0 and inf included
    exported[0] = 2
    assert t[0].item() == 2


@pytest.mark.parametrize("np_dtype", [np.float16, np.int8, np.uint8])
def test_strided_narrow_views_cross_both_ways(np_dtype):
    a = np.arange(24).astype(np_dtype).reshape(4, 6)
    view = a[::-2, 1::3]  # negative and non-unit strides
    t = ts.from_dlpack(view)
    assert t.tolist() == view.tolist()
    back = np.from_dlpack(t)
    assert back.tolist() == view.tolist()
    back[0, 0] = 99
    assert a[3, 1] == 99

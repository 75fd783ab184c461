"""A NumPy array exported from a tensor (np.from_dlpack, .numpy()) keeps naming that tensor's bytes:
an in-place collective writes its result there, a write through one rank's array reaches that rank's
shard and no other, and a replica made of an exported tensor does not see later writes through it.
Inputs differ per rank; expected values are computed here with NumPy."""
import numpy as np
import pytest

import tessera as ts

SIZES = [1, 3, 7]
LENGTH = 16


def per_rank(n, fn):
    """A local tensor over ranks 0..n-1 whose shard r holds fn(r)."""
    return ts.local_tensor({r: ts.tensor(np.asarray(fn(r), np.float32)) for r in range(n)})


def values(t):
    return np.array(t.tolist(), dtype=np.float32)


# Sums in rank order, as NumPy computes them (conftest.py).
pytestmark = pytest.mark.usefixtures("direct_algorithms")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("collective", ["all_reduce", "broadcast"])
def test_an_exported_shard_receives_an_in_place_collective(n, collective):
    inputs = [10.0 * r + np.arange(LENGTH, dtype=np.float32) for r in range(n)]
    lt = per_rank(n, lambda r: inputs[r])
    arrays = [np.from_dlpack(lt.shard(r)) for r in range(n)]
    if collective == "all_reduce":
        ts.dist.all_reduce(lt, op=ts.ReduceOp.SUM)
        expected = np.sum(inputs, axis=0)
    else:
        ts.dist.broadcast(lt, n - 1)
        expected = inputs[n - 1]
    for r in range(n):
        np.testing.assert_array_equal(arrays[r], expected)
    # One distinct mark per rank: a write that reached another rank's bytes shows as a wrong mark.
    for r in range(n):
        arrays[r][0] = 0.25 + r
    for r in range(n):
        marked = expected.copy()
        marked[0] = 0.25 + r
        np.testing.assert_array_equal(values(lt.shard(r)), marked)


def test_a_replica_of_an_exported_tensor_does_not_see_writes_through_the_export():
    source = np.arange(6, dtype=np.float32) + 0.5
    t = ts.tensor(source)
    array = np.from_dlpack(t)
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        replicated = ts.distribute_tensor(t, mesh, [ts.Replicate()])
        array[0] = 100.0
        for r in range(3):
            np.testing.assert_array_equal(values(replicated.to_local().shard(r)), source)
    written = source.copy()
    written[0] = 100.0
    np.testing.assert_array_equal(values(t), written)

"""A program written with PyTorch's module paths and names runs unchanged apart from the import
(torch -> tessera), with NumPy as the oracle."""
import numpy as np

import tessera as ts
import tessera.distributed as dist
from tessera.distributed.device_mesh import init_device_mesh
from tessera.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from tessera.distributed.tensor.debug import CommDebugMode, visualize_sharding


def test_tensor_parallel_linear_with_pytorch_names():
    rng = np.random.default_rng(7)
    x_np = rng.standard_normal((8, 6)).astype(np.float32)
    w_np = rng.standard_normal((6, 4)).astype(np.float32)
    with ts.LocalMode(4):
        mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        x = distribute_tensor(ts.tensor(x_np), mesh, [Shard(0), Replicate()])
        w = distribute_tensor(ts.tensor(w_np), mesh, [Replicate(), Shard(1)])
        assert isinstance(x, DTensor)
        comm = CommDebugMode()
        with comm:
            y = (x @ w).redistribute(mesh, [Replicate(), Replicate()])
        assert comm.get_total_counts() >= 1
        assert y.placements == (Replicate(), Replicate())
        full = np.array(y.full_tensor().reconcile().tolist(), dtype=np.float32)
        np.testing.assert_allclose(full, x_np @ w_np, rtol=1e-5, atol=1e-5)
        text = visualize_sharding(x, print_output=False)
        assert "rank" in text


def test_collectives_with_pytorch_names():
    with ts.LocalMode(3):
        t = ts.rank_map(lambda r: ts.full((2,), float(r + 1)))
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        assert t.reconcile().tolist() == [6.0, 6.0]
        outs = [ts.zeros(2) for _ in range(3)]
        src = ts.rank_map(lambda r: ts.full((2,), float(10 * r)))
        dist.all_gather(outs, src)
        assert [o.reconcile().tolist() for o in outs] == [[0.0, 0.0], [10.0, 10.0], [20.0, 20.0]]


def test_import_paths():
    import tessera.dist

    assert tessera.dist.all_reduce is ts.dist.all_reduce
    assert dist.all_reduce is ts.dist.all_reduce

"""The default process group's lifecycle with PyTorch's names: init_process_group("fake", ...),
is_initialized, destroy_process_group, distributed_c10d._get_default_group."""
import pytest

import tessera as ts
import tessera.distributed as dist


@pytest.fixture(autouse=True)
def no_default_group():
    if dist.is_initialized():
        dist.destroy_process_group()
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def test_init_then_destroy():
    assert not dist.is_initialized()
    dist.init_process_group("fake", rank=0, world_size=3)
    assert dist.is_initialized() and dist.get_backend() == "fake"
    group = dist.distributed_c10d._get_default_group()
    assert isinstance(group, ts.ProcessGroup) and group.is_default
    dist.destroy_process_group()
    assert not dist.is_initialized()
    dist.init_process_group(backend="fake", rank=2, world_size=3)  # again after destroy
    assert dist.is_initialized()


def test_the_default_group_runs_collectives_over_the_modes_ranks():
    dist.init_process_group("fake", rank=0, world_size=3)
    pg = dist.distributed_c10d._get_default_group()
    with ts.LocalMode(frozenset({0, 1, 2})):
        t = ts.rank_map(lambda r: ts.full((2,), float(r + 1)))
        dist.all_reduce(t, op=dist.ReduceOp.SUM, group=pg)
        out = ts.zeros(1)
        dist.reduce_scatter_single(out, ts.rank_map(lambda r: ts.tensor([1.0, 10.0, 100.0]) * (r + 1)), group=pg)
    assert t.reconcile().tolist() == [6.0, 6.0]
    assert [out._local_tensors[r].tolist() for r in range(3)] == [[6.0], [60.0], [600.0]]


def test_misuse_is_reported():
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.distributed_c10d._get_default_group()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.destroy_process_group()
    dist.init_process_group("fake", rank=0, world_size=2)
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("fake", rank=0, world_size=2)
    dist.destroy_process_group()
    with pytest.raises(ts.Error, match=r"rank must be in \[0, world_size\) = \[0, 3\), got 3"):
        dist.init_process_group("fake", rank=3, world_size=3)
    with pytest.raises(ts.Error, match="world_size must be at least 1, got 0"):
        dist.init_process_group("fake", rank=0, world_size=0)
    with pytest.raises(ts.Error, match="backend 'nccl' is not available"):
        dist.init_process_group("nccl", rank=0, world_size=2)
    assert not dist.is_initialized()
    with pytest.raises(TypeError, match="group must be None or a ts.ProcessGroup"):
        dist.destroy_process_group("all")

"""ts.CommCounter (PyTorch: CommDebugMode), ts.CommLabel and tracing. The counts are those the
redistribution rules give each redistribution: S->R one all_gather, P->R one all_reduce, R->S none."""
import json

import numpy as np
import pytest

import tessera as ts


def plain(array):
    with ts.maybe_disable_local_mode():
        return ts.tensor(np.asarray(array, dtype=np.float32))


X = np.arange(40, dtype=np.float32).reshape(10, 4)


def test_shard_to_replicate_is_one_all_gather_and_counts_survive_the_block():
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        dt = ts.distribute_tensor(plain(X), mesh, [ts.Shard(0)])
        counter = ts.CommCounter()
        assert counter.get_total_counts() == 0 and not counter.active
        with counter as c:
            assert c is counter and c.active
            full = dt.redistribute(placements=[ts.Replicate()])
        # After the block: still readable, and nothing more is counted.
        dt.redistribute(placements=[ts.Replicate()])
        assert not counter.active
        assert counter.get_comm_counts() == {"all_gather": 1}
        assert counter.get_total_counts() == 1
        assert counter.calls("all_gather") == 1 and counter.calls("all_reduce") == 0 and counter.calls() == 1
        [entry] = counter.entries
        assert entry.collective == "all_gather" and entry.calls == 1 and entry.mesh_dim == "dim 0"
        assert counter.bytes_per_rank() == entry.bytes_per_rank > 0
        assert "all_gather" in counter.table() and "collective" in counter.table()
        assert counter.generate_comm_debug_tracing_table() == counter.table()
        np.testing.assert_array_equal(np.array(full.to_local().shard(3).tolist()), X)


def test_counts_per_mesh_dim_on_a_2d_mesh():
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        dt = ts.distribute_tensor(plain(X), mesh, [ts.Shard(0), ts.Shard(0)])
        with ts.CommCounter() as c:
            dt.redistribute(placements=[ts.Replicate(), ts.Replicate()])
        per_dim = {(e.collective, e.mesh_dim): e.calls for e in c.entries}
        assert per_dim == {("all_gather", "dp"): 1, ("all_gather", "tp"): 1}
        assert c.implicit_redistributions == []


def test_replicate_to_shard_moves_nothing_and_partial_to_replicate_all_reduces():
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        rep = ts.distribute_tensor(plain(X), mesh, [ts.Replicate()])
        with ts.CommCounter() as c:
            rep.redistribute(placements=[ts.Shard(0)])
        assert c.get_total_counts() == 0 and c.get_comm_counts() == {}
        partial = ts.DTensor.from_local(ts.local_tensor({r: plain(X) for r in range(3)}), mesh, [ts.Partial()])
        with ts.CommCounter() as c:
            total = partial.full_tensor()
        assert c.get_comm_counts() == {"all_reduce": 1}
        np.testing.assert_array_equal(np.array(total.reconcile().tolist()), 3 * X)


def test_implicit_redistribution_names_the_op():
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        x = ts.distribute_tensor(plain(np.arange(32.0).reshape(8, 4)), mesh, [ts.Shard(0), ts.Shard(0)])
        w = ts.distribute_tensor(plain(np.arange(24.0).reshape(4, 6)), mesh, [ts.Shard(1), ts.Replicate()])
        with ts.CommCounter() as c:
            ts.matmul(x, w)  # S(0) x S(1) on dp fits no rule
        assert c.implicit_redistributions, "matmul should have redistributed an input"
        first = c.implicit_redistributions[0]
        assert first.op == "matmul" and first.input in (0, 1)
        assert "implicit redistributions:" in c.table()


def test_nested_counters_and_labels():
    lt = ts.local_tensor({0: plain([1.0, 2.0]), 1: plain([10.0, 20.0])})
    with ts.CommCounter() as outer:
        with ts.CommCounter() as inner:
            ts.dist.all_reduce(lt)
        with ts.CommLabel("mine", op="my_step"):
            ts.dist.broadcast(lt, 1)
    assert inner.get_comm_counts() == {"all_reduce": 1}
    assert outer.get_comm_counts() == {"all_reduce": 1, "broadcast": 1}
    assert {e.mesh_dim for e in outer.entries if e.collective == "broadcast"} == {"mine"}
    assert lt.shard(0).tolist() == [11.0, 22.0]


def test_trace_scope_writes_a_chrome_trace(tmp_path):
    path = tmp_path / "scope.json"
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        dt = ts.distribute_tensor(plain(X), mesh, [ts.Shard(0)])
        with ts.trace(str(path)):
            assert ts.tracing()
            dt.full_tensor()
    events = json.loads(path.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any("all_gather" in json.dumps(e) for e in events)


def test_program_trace_start_stop(tmp_path):
    path = tmp_path / "program.json"
    ts.start_trace(str(path))
    try:
        assert ts.trace_path() == str(path)
        with ts.LocalMode(2):
            ts.dist.all_reduce(ts.local_tensor({0: plain([1.0]), 1: plain([2.0])}))
    finally:
        ts.stop_trace()
    assert ts.trace_path() == ""
    assert "all_reduce" in path.read_text()
    ts.stop_trace()  # a no-op when not tracing


def test_trace_to_an_unwritable_path_is_an_error(tmp_path):
    bad = tmp_path / "no" / "such" / "dir" / "t.json"
    with pytest.raises(ts.Error, match="no/such/dir"):
        with ts.trace(str(bad)):
            pass

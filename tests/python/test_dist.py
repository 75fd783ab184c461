"""ts.dist: every collective, send/recv, groups, reduce ops and algorithm selection.

Inputs differ per rank (rank r holds r * 10 + arange, or similar) so that a wrong rank order fails;
expected values come from NumPy or golden values computed by hand."""
import numpy as np
import pytest

import tessera as ts

SIZES = [1, 3, 7]


def per_rank(n, fn, dtype=np.float32):
    """A local tensor over ranks 0..n-1 whose shard r is the NumPy array fn(r)."""
    return ts.local_tensor({r: ts.tensor(np.asarray(fn(r), dtype)) for r in range(n)})


def shard(t, rank):
    return np.asarray(t.shard(rank).numpy())


def value(r, shape=(2, 3)):
    return r * 10 + np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


# Sums in rank order, as NumPy computes them (conftest.py).
pytestmark = pytest.mark.usefixtures("direct_algorithms")


# --- ReduceOp, ProcessGroup -------------------------------------------------------------------


def test_reduce_op_spellings():
    assert ts.ReduceOp.SUM == ts.dist.ReduceOp.SUM
    assert ts.ReduceOp(ts.ReduceOp.MAX) == ts.ReduceOp.MAX
    assert ts.ReduceOp(ts.ReduceOp.MAX) != ts.ReduceOp(ts.ReduceOp.MIN)
    assert str(ts.ReduceOp(ts.ReduceOp.AVG)) == "AVG"
    op = ts.ReduceOp.premul_sum(0.5)
    assert op.factor == 0.5 and op.op == ts.ReduceOp.PREMUL_SUM
    assert repr(op) == "ReduceOp.PREMUL_SUM(0.5)"
    assert op != ts.ReduceOp.premul_sum(2.0)
    names = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"}
    assert all(hasattr(ts.ReduceOp, n) for n in names)


def test_process_group():
    g = ts.ProcessGroup([0, 2, 4])
    assert g.size() == 3 and g.fibres == [[0, 2, 4]] and not g.is_default
    assert repr(g) == "ProcessGroup({0,2,4})"
    assert g == ts.dist.new_group([0, 2, 4]) and g != ts.ProcessGroup([0, 2])
    fibres = ts.ProcessGroup.from_fibres([[0, 2], [1, 3]])
    assert fibres.size() == 2 and fibres.fibres == [[0, 2], [1, 3]]
    default = ts.ProcessGroup()
    assert default.is_default and repr(default) == "ProcessGroup(default group)"
    with pytest.raises(ts.Error, match="the default group's size is the number of ranks of the argument"):
        default.size()


def test_get_rank_and_world_size():
    assert ts.dist.get_rank() == 0
    with ts.LocalMode(3):
        assert ts.dist.get_rank().values() == {0: 0, 1: 1, 2: 2}
        assert ts.dist.get_world_size() == 3


# --- all_reduce -------------------------------------------------------------------------------


def test_all_reduce_golden_world_3():
    lt = per_rank(3, lambda r: [[1 + 4 * r, 2 + 4 * r], [3 + 4 * r, 4 + 4 * r]])
    ts.dist.all_reduce(lt, op=ts.ReduceOp.SUM)
    for r in range(3):
        np.testing.assert_array_equal(shard(lt, r), [[15, 18], [21, 24]])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op, oracle", [
    (ts.ReduceOp.SUM, lambda xs: np.sum(xs, axis=0)),
    (ts.ReduceOp.AVG, lambda xs: np.sum(xs, axis=0) / len(xs)),
    (ts.ReduceOp.PRODUCT, lambda xs: np.prod(xs, axis=0)),
    (ts.ReduceOp.MIN, lambda xs: np.min(xs, axis=0)),
    (ts.ReduceOp.MAX, lambda xs: np.max(xs, axis=0)),
    (ts.ReduceOp.premul_sum(0.5), lambda xs: np.sum(np.array(xs) * 0.5, axis=0)),
])
def test_all_reduce_float_ops(n, op, oracle):
    inputs = [np.array([r + 1, -r, 2.0 * r - 3], np.float32) for r in range(n)]
    lt = per_rank(n, lambda r: inputs[r])
    before = lt
    ts.dist.all_reduce(lt, op)
    assert lt is before  # in place: the same Python object holds the result
    for r in range(n):
        np.testing.assert_allclose(shard(lt, r), oracle(inputs).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("op, oracle", [
    (ts.ReduceOp.BAND, np.bitwise_and.reduce),
    (ts.ReduceOp.BOR, np.bitwise_or.reduce),
    (ts.ReduceOp.BXOR, np.bitwise_xor.reduce),
])
def test_all_reduce_bitwise_ops(n, op, oracle):
    inputs = [np.array([6 >> (r % 3), 1 << r, 0xFF - r], np.int64) for r in range(n)]
    lt = per_rank(n, lambda r: inputs[r], np.int64)
    ts.dist.all_reduce(lt, op=op)
    for r in range(n):
        np.testing.assert_array_equal(shard(lt, r), oracle(np.stack(inputs), axis=0))


def test_all_reduce_errors():
    f = per_rank(2, lambda r: [1.0, 2.0])
    with pytest.raises(ts.Error, match="BXOR needs an integer or bool tensor, got float32"):
        ts.dist.all_reduce(f, op=ts.ReduceOp.BXOR)
    i = per_rank(2, lambda r: [1, 2], np.int64)
    with pytest.raises(ts.Error, match="AVG needs a floating tensor, got int64"):
        ts.dist.all_reduce(i, op=ts.ReduceOp.AVG)
    uneven = ts.local_tensor({0: ts.ones(2), 1: ts.ones(3)})
    with pytest.raises(ts.Error, match=r"has shape \[2\] on rank 0 but \[3\] on rank 1"):
        ts.dist.all_reduce(uneven)
    with pytest.raises(ts.Error, match="must be a local tensor"):
        ts.dist.all_reduce(ts.ones(2))
    with pytest.raises(TypeError):
        ts.dist.all_reduce([1.0, 2.0])


def test_async_op_returns_a_completed_work():
    lt = per_rank(3, lambda r: [float(r)])
    work = ts.dist.all_reduce(lt, async_op=True)
    assert work.wait() and work.is_completed()
    np.testing.assert_array_equal(shard(lt, 2), [3.0])
    assert ts.dist.all_reduce(lt) is None


# --- broadcast, reduce ------------------------------------------------------------------------


def test_broadcast_golden_world_3():
    lt = per_rank(3, lambda r: [10 + 30 * r, 20 + 30 * r, 30 + 30 * r])
    ts.dist.broadcast(lt, src=0)
    for r in range(3):
        np.testing.assert_array_equal(shard(lt, r), [10, 20, 30])


@pytest.mark.parametrize("n", SIZES)
def test_broadcast_from_the_last_rank(n):
    lt = per_rank(n, value)
    ts.dist.broadcast(lt, n - 1)
    for r in range(n):
        np.testing.assert_array_equal(shard(lt, r), value(n - 1))


def test_broadcast_from_a_rank_outside_the_group_is_an_error():
    lt = per_rank(3, value)
    with pytest.raises(ts.Error, match=r"root 3 is not a group rank; expected 0..2"):
        ts.dist.broadcast(lt, 3)
    with pytest.raises(ts.Error, match=r"root -1 is not a group rank; expected 0..2"):
        ts.dist.broadcast(lt, src=-1)


@pytest.mark.parametrize("n", SIZES)
def test_reduce_to_one_rank_leaves_the_others(n):
    dst = n // 2
    lt = per_rank(n, value)
    ts.dist.reduce(lt, dst, op=ts.ReduceOp.SUM)
    for r in range(n):
        expected = sum(value(k) for k in range(n)) if r == dst else value(r)
        np.testing.assert_array_equal(shard(lt, r), expected)


# --- all_gather ------------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_all_gather_fills_the_callers_list(n):
    lt = per_rank(n, value)
    outs = [ts.zeros_like(lt) for _ in range(n)]
    objects = list(outs)
    ts.dist.all_gather(outs, lt)
    assert all(a is b for a, b in zip(outs, objects))  # the same Python objects now hold the results
    for i in range(n):
        for r in range(n):
            np.testing.assert_array_equal(shard(objects[i], r), value(i))


def test_all_gather_errors():
    lt = per_rank(3, value)
    with pytest.raises(ts.Error, match=r"has 1 tensors, expected one per group rank \(3\)"):
        ts.dist.all_gather([ts.zeros_like(lt)], lt)
    with pytest.raises(TypeError, match=r"tensor_list\[1\] is 'x'; expected a ts.Tensor"):
        ts.dist.all_gather([ts.zeros_like(lt), "x", ts.zeros_like(lt)], lt)


@pytest.mark.parametrize("n", SIZES)
def test_all_gather_into_tensor_concatenates_in_rank_order(n):
    lt = per_rank(n, value)
    out = per_rank(n, lambda r: np.zeros((2 * n, 3)))
    ts.dist.all_gather_into_tensor(out, lt)
    expected = np.concatenate([value(k) for k in range(n)])
    for r in range(n):
        np.testing.assert_array_equal(shard(out, r), expected)


# --- reduce_scatter ---------------------------------------------------------------------------


def test_reduce_scatter_tensor_golden_world_3():
    base = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    inp = per_rank(3, lambda r: base * (r + 1))
    out = per_rank(3, lambda r: np.zeros((1, 2)))
    ts.dist.reduce_scatter_tensor(out, inp, op=ts.ReduceOp.SUM)
    golden = {0: [[6, 12]], 1: [[18, 24]], 2: [[30, 36]]}
    for r in range(3):
        np.testing.assert_array_equal(shard(out, r), golden[r])


@pytest.mark.parametrize("n", SIZES)
def test_reduce_scatter_tensor_max(n):
    inputs = [value(r, (n, 2)) * (-1) ** r for r in range(n)]
    inp = per_rank(n, lambda r: inputs[r])
    out = per_rank(n, lambda r: np.zeros((1, 2)))
    ts.dist.reduce_scatter_tensor(out, inp, ts.ReduceOp.MAX)
    total = np.max(np.stack(inputs), axis=0)
    for r in range(n):
        np.testing.assert_array_equal(shard(out, r), total[r:r + 1])


@pytest.mark.parametrize("n", SIZES)
def test_reduce_scatter_list(n):
    # input_list[i] on rank r is value(r) + 100 * i; group rank i gets the sum over r.
    inputs = [per_rank(n, lambda r, i=i: value(r) + 100 * i) for i in range(n)]
    out = per_rank(n, lambda r: np.zeros((2, 3)))
    ts.dist.reduce_scatter(out, inputs)
    for i in range(n):
        np.testing.assert_array_equal(shard(out, i), sum(value(r) + 100 * i for r in range(n)))


# --- all_to_all -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_all_to_all_lists(n):
    # rank r's input_list[j] is 100 * r + j; rank j's output_list[i] must be 100 * i + j.
    inputs = [per_rank(n, lambda r, j=j: np.full(2, 100 * r + j)) for j in range(n)]
    outs = [per_rank(n, lambda r: np.zeros(2)) for _ in range(n)]
    objects = list(outs)
    ts.dist.all_to_all(outs, inputs)
    for i in range(n):
        assert outs[i] is objects[i]
        for j in range(n):
            np.testing.assert_array_equal(shard(outs[i], j), np.full(2, 100 * i + j))


def test_all_to_all_single_golden_world_3():
    inp = per_rank(3, lambda r: np.full(6, r))
    out = per_rank(3, lambda r: np.zeros(6))
    ts.dist.all_to_all_single(out, inp, input_split_sizes=[2, 2, 2])
    for r in range(3):
        np.testing.assert_array_equal(shard(out, r), [0, 0, 1, 1, 2, 2])


@pytest.mark.parametrize("n", SIZES)
def test_all_to_all_single_equal_splits(n):
    inputs = [value(r, (n, 2)) for r in range(n)]
    inp = per_rank(n, lambda r: inputs[r])
    out = per_rank(n, lambda r: np.zeros((n, 2)))
    ts.dist.all_to_all_single(out, inp)
    for j in range(n):
        np.testing.assert_array_equal(shard(out, j), np.stack([inputs[i][j] for i in range(n)]))


def test_all_to_all_single_uneven_local_int_splits():
    # rank r sends r + 1 rows to every rank; rank j receives i + 1 rows from rank i.
    inp = per_rank(3, lambda r: np.full((3 * (r + 1), 2), r))
    out = per_rank(3, lambda r: np.zeros((6, 2)))
    send = ts.LocalInt({0: 1, 1: 2, 2: 3})
    ts.dist.all_to_all_single(out, inp, output_split_sizes=[1, 2, 3], input_split_sizes=[send, send, send])
    expected = np.repeat(np.array([0, 1, 1, 2, 2, 2], np.float32)[:, None], 2, axis=1)
    for r in range(3):
        np.testing.assert_array_equal(shard(out, r), expected)
    bad = per_rank(3, lambda r: np.zeros((6, 2)))
    with pytest.raises(ts.Error, match="rank 0 sends 1 rows to rank 0, but rank 0 expects 2 rows from rank 0"):
        ts.dist.all_to_all_single(bad, inp, [2, 2, 2], [send, send, send])


# --- scatter, gather --------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_scatter_from_the_last_rank(n):
    src = n - 1
    # scatter_list[i] on rank r is value(r) + 100 * i; only the root's values travel.
    pieces = [per_rank(n, lambda r, i=i: value(r) + 100 * i) for i in range(n)]
    out = per_rank(n, lambda r: np.zeros((2, 3)))
    ts.dist.scatter(out, pieces, src=src)
    for i in range(n):
        np.testing.assert_array_equal(shard(out, i), value(src) + 100 * i)


@pytest.mark.parametrize("n", SIZES)
def test_gather_to_one_rank(n):
    dst = n // 2
    lt = per_rank(n, value)
    outs = [per_rank(n, lambda r: np.full((2, 3), -1.0)) for _ in range(n)]
    objects = list(outs)
    ts.dist.gather(lt, outs, dst=dst)
    for i in range(n):
        assert outs[i] is objects[i]
        for r in range(n):
            expected = value(i) if r == dst else np.full((2, 3), -1.0)
            np.testing.assert_array_equal(shard(outs[i], r), expected)


# --- barrier ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", SIZES)
def test_barrier(n):
    with ts.LocalMode(n):
        assert ts.dist.barrier() is None
    ts.dist.barrier(participants=per_rank(n, lambda r: [0.0]))
    with pytest.raises(ts.Error, match="outside a ts.LocalMode there are no ranks to synchronise"):
        ts.dist.barrier()


# --- send / recv ------------------------------------------------------------------------------


def test_send_recv_pipeline_and_unmatched_messages():
    x = per_rank(3, lambda r: np.full(2, r + 1))
    y = per_rank(3, lambda r: np.zeros(2))
    ts.dist.send(x, dst=ts.LocalInt({0: 1, 1: 2, 2: -1}))
    ts.dist.recv(y, src=ts.LocalInt({0: -1, 1: 0, 2: 1}))
    np.testing.assert_array_equal(shard(y, 0), [0, 0])
    np.testing.assert_array_equal(shard(y, 1), [1, 1])
    np.testing.assert_array_equal(shard(y, 2), [2, 2])
    ts.dist.check_messages()

    with pytest.raises(ts.Error, match="recv on rank 0 from rank 2: no matching send"):
        ts.dist.recv(y, ts.LocalInt({0: 2, 1: -1, 2: -1}))
    ts.dist.send(x, ts.LocalInt({0: 1, 1: -1, 2: -1}))
    with pytest.raises(ts.Error, match=r"1 message\(s\) from rank 0 to rank 1 never received"):
        ts.dist.check_messages()
    ts.dist.check_messages()  # the error dropped them


# --- groups -----------------------------------------------------------------------------------


def test_sibling_fibres_run_together():
    t = per_rank(8, lambda r: [float(r)])
    ts.dist.all_reduce(t, group=ts.ProcessGroup.from_fibres([[0, 2, 4, 6], [1, 3, 5, 7]]))
    for r in range(8):
        assert shard(t, r)[0] == (0 + 2 + 4 + 6 if r % 2 == 0 else 1 + 3 + 5 + 7)


def test_a_single_fibre_leaves_other_ranks_alone_and_roots_are_group_ranks():
    u = per_rank(8, lambda r: [float(r)])
    ts.dist.broadcast(u, src=1, group=[0, 2, 4, 6])  # group rank 1 is global rank 2
    for r in range(8):
        assert shard(u, r)[0] == (2.0 if r % 2 == 0 else float(r))


def test_groups_the_tensor_does_not_cover_are_errors():
    t = per_rank(3, lambda r: [1.0])
    with pytest.raises(ts.Error, match=r"also needs ranks \{3\}"):
        ts.dist.all_reduce(t, group=ts.ProcessGroup([1, 2, 3]))
    with pytest.raises(ts.Error, match="cover no fibre"):
        ts.dist.all_reduce(t, group=ts.dist.new_group([5, 6]))
    with pytest.raises(TypeError, match="group= must be None, a ts.ProcessGroup or a list of ranks"):
        ts.dist.all_reduce(t, group=3)


# --- algorithms -------------------------------------------------------------------------------


def test_algorithm_rules():
    assert ts.dist.algorithms() == "*:direct"
    names = ts.dist.algorithm_names()
    assert "direct" in names and "ring" in names
    ts.dist.set_algorithms("all_reduce:ring;*:direct")
    assert ts.dist.algorithms() == "all_reduce:ring;*:direct"
    assert ts.dist.algorithm_for("all_reduce", 4, 1024) == "ring"
    assert ts.dist.algorithm_for("broadcast", 4, 1024) == "direct"
    # ring gives the direct result up to reordering; these integers sum exactly.
    lt = per_rank(7, value)
    ts.dist.all_reduce(lt)
    np.testing.assert_array_equal(shard(lt, 3), sum(value(k) for k in range(7)))
    with pytest.raises(ts.Error, match="has no ':'"):
        ts.dist.set_algorithms("all_reduce ring")
    assert ts.dist.verify_schedule("ring", "all_reduce", 4, 8) == ""
    with pytest.raises(ts.Error):
        ts.dist.verify_schedule("nosuch", "all_reduce", 2, 1)


# --- in place on tensors a mode's factories made (shards may share storage copy-on-write) ------


@pytest.mark.parametrize("n", SIZES)
def test_results_reach_factory_made_tensors_inside_a_mode(n):
    with ts.LocalMode(n):
        x = ts.rank_map(lambda r: ts.arange(3).float() + 10 * r)
        outs = [ts.empty(3) for _ in range(n)]
        ts.dist.all_gather(outs, x)
        y = ts.zeros(n)  # identical shards on every rank
        ts.dist.all_to_all_single(y, ts.rank_map(lambda r: ts.arange(n).float() + 10 * r))
    for i in range(n):
        for r in range(n):
            np.testing.assert_array_equal(shard(outs[i], r), np.arange(3) + 10 * i)
    for j in range(n):  # rank j's block i comes from rank i: element j of rank i's input
        np.testing.assert_array_equal(shard(y, j), [10 * i + j for i in range(n)])

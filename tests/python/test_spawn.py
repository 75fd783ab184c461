"""ts.spawn: per-rank programs from Python (each rank on a coroutine with a Python thread state of
its own), with ts.dist collectives and point-to-point messages between them. Oracles: sums and
messages written out here, NumPy, and a LocalMode run of the same computation."""
import numpy as np
import pytest

import tessera as ts


def test_collectives_and_rank_identity():
    seen = {}

    def program(rank):
        t = ts.full((3,), float(rank + 1))
        ts.dist.all_reduce(t)
        seen[rank] = (ts.dist.get_rank(), ts.dist.get_world_size(), t.tolist())

    ts.spawn(3, program)
    assert seen == {r: (r, 3, [6.0, 6.0, 6.0]) for r in range(3)}
    ts.spawn(1, program)
    assert seen[0] == (0, 1, [1.0, 1.0, 1.0])


def test_send_recv_with_tags_interleaved_python_frames():
    got = {}

    def nested(depth, rank):
        # Python frames of every rank stay live across the waits below.
        if depth:
            return nested(depth - 1, rank)
        if rank == 0:
            ts.dist.send(ts.tensor([1.0, 2.0]), 1, tag=5)
            ts.dist.send(ts.tensor([3.0, 4.0]), 1, tag=9)
            back = ts.zeros(2)
            ts.dist.recv(back, 1)
            got[0] = back.tolist()
        else:
            late, early = ts.zeros(2), ts.zeros(2)
            ts.dist.recv(late, 0, tag=9)
            ts.dist.recv(early, 0, tag=5)
            ts.dist.send(late + early, 0)
            got[1] = (early.tolist(), late.tolist())
        return rank

    ts.spawn(2, lambda rank: nested(50, rank))
    assert got == {0: [4.0, 6.0], 1: ([1.0, 2.0], [3.0, 4.0])}


def test_isend_irecv_and_batch_isend_irecv_around_a_ring():
    n = 5
    got = {}

    def program(rank):
        mine = ts.full((2,), float(10 * rank))
        left, right = (rank - 1) % n, (rank + 1) % n
        from_left = ts.zeros(2)
        works = ts.dist.batch_isend_irecv([ts.dist.P2POp(ts.dist.isend, mine, right),
                                           ts.dist.P2POp(ts.dist.irecv, from_left, left)])
        for w in works:
            assert w.wait()
        from_right = ts.zeros(2)
        recv = ts.dist.irecv(from_right, right, tag=3)
        ts.dist.isend(mine + 1, left, tag=3).wait()
        recv.wait()
        assert recv.is_completed()
        got[rank] = (from_left.tolist(), from_right.tolist())

    ts.spawn(n, program)
    assert got == {r: ([10.0 * ((r - 1) % n)] * 2, [10.0 * ((r + 1) % n) + 1] * 2) for r in range(n)}
    op = ts.dist.P2POp(ts.dist.irecv, ts.zeros(1), 2, tag=4)
    assert op.op is ts.dist.irecv and op.peer == 2 and op.tag == 4
    with pytest.raises(TypeError, match="op must be ts.dist.isend or ts.dist.irecv"):
        ts.dist.P2POp(ts.dist.send, ts.zeros(1), 1)


def test_random_tensors_match_a_local_mode_run():
    ts.manual_seed(123)
    with ts.LocalMode(3):
        expected = ts.randn(4)
    ts.manual_seed(123)
    got = {}
    ts.spawn(3, lambda rank: got.__setitem__(rank, ts.randn(4).tolist()))
    for r in range(3):
        assert got[r] == expected.shard(r).tolist()


def test_dtensor_and_tensor_parallel_module_in_rank_programs():
    with ts.maybe_disable_local_mode():
        ts.manual_seed(5)
        w = ts.randn(6, 4)
        x = ts.randn(3, 4)
    expected = np.array(x.tolist()) @ np.array(w.tolist()).T
    out = {}

    def program(rank):
        mesh = ts.init_device_mesh("cpu", (2,))
        lin = ts.nn.Linear(4, 6, bias=False)
        lin.load_state_dict({"weight": w})
        ts.distributed.tensor.parallel.parallelize_module(lin, mesh, ts.distributed.tensor.parallel.ColwiseParallel(
            output_layouts=ts.Replicate()))
        out[rank] = np.array(lin(x).tolist())

    ts.spawn(2, program)
    for r in range(2):
        np.testing.assert_allclose(out[r], expected, rtol=1e-5, atol=1e-6)


def test_a_rank_that_raises_ends_the_spawn_with_its_exception():
    def program(rank):
        t = ts.ones(1)
        if rank == 2:
            raise KeyError("rank two's key")
        ts.dist.all_reduce(t)

    with pytest.raises(KeyError, match="rank two's key"):
        ts.spawn(3, program)
    # The interpreter is intact afterwards.
    assert ts.ones(2).tolist() == [1.0, 1.0]


def test_deadlock_and_bad_arguments_are_errors():
    def program(rank):
        t = ts.ones(1)
        ts.dist.recv(t, 1 - rank)

    with pytest.raises(ts.Error, match=r"deadlock.*rank 0: recv\(src=1, tag=0\); rank 1: recv\(src=0, tag=0\)"):
        ts.spawn(2, program)
    with pytest.raises(ValueError, match="n must be at least 1, got 0"):
        ts.spawn(0, print)
    with pytest.raises(ts.Error):
        ts.spawn(2, lambda rank: ts.dist.send(ts.ones(1), 1 - rank))  # messages nobody received


def test_modules_schedulers_and_rank_maps_made_inside_rank_programs():
    # Objects a rank makes and drops while other ranks are suspended mid-program (modules held by a
    # Sequential, a scheduler's Python callback, a LocalMode's per-rank callback) must not wait for
    # the GIL a suspended rank's Python holds.
    got = {}

    def program(rank):
        ts.manual_seed(rank)
        seq = ts.nn.Sequential(ts.nn.Linear(2, 3), ts.nn.ReLU())
        t = ts.full((1,), float(rank))
        ts.dist.all_reduce(t)
        opt = ts.optim.SGD(seq.parameters(), lr=1.0)
        sched = ts.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
        sched.step()
        with ts.LocalMode(2):
            shards = ts.rank_map(lambda r: ts.full((1,), float(10 * r + rank)))
        got[rank] = (t.item(), opt.lr, shards.shard(1).item(), seq(ts.ones(1, 2)).shape)
        del seq, opt, sched

    ts.spawn(3, program)
    assert got == {r: (3.0, 0.5, 10.0 + r, (1, 3)) for r in range(3)}

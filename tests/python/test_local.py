"""ts.LocalMode, ts.local_tensor, ts.rank_map, ts.tensor_map, ts.run_per_rank and friends.

Expected values are computed with NumPy (or are golden values computed by hand), never with the binding."""
import threading

import numpy as np
import pytest

import tessera as ts


def np_shard(t, rank):
    return np.asarray(t.shard(rank).numpy())


def per_rank(values):
    """A local tensor from {rank: NumPy array}."""
    return ts.local_tensor({r: ts.tensor(v) for r, v in values.items()})


# --- LocalMode -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 7])
def test_factories_inside_a_mode_make_local_tensors_over_its_ranks(n):
    with ts.LocalMode(n) as mode:
        assert mode.ranks == list(range(n))
        assert mode.active
        x = ts.ones(2, 3)
        assert x.is_local
        assert x.ranks == list(range(n))
        for r in range(n):
            np.testing.assert_array_equal(np_shard(x, r), np.ones((2, 3), np.float32))
    assert not mode.active
    assert not ts.ones(2, 3).is_local


def test_mode_over_a_rank_list():
    with ts.LocalMode([0, 2, 3]) as mode:
        assert mode.ranks == [0, 2, 3]
        assert ts.zeros(1).ranks == [0, 2, 3]
        assert ts.current_rank().values() == {0: 0, 2: 2, 3: 3}
    assert repr(mode) == "LocalMode([0, 2, 3])"
    assert repr(ts.LocalMode(4)) == "LocalMode(4)"


def test_modes_nest_and_leaving_restores_the_outer():
    assert ts.active_local_mode() is None
    with ts.LocalMode(2) as outer:
        assert ts.active_local_mode() is outer
        with ts.LocalMode(5) as inner:
            assert ts.active_local_mode() is inner
            assert ts.ones(1).ranks == list(range(5))
        assert ts.active_local_mode() is outer
        assert ts.ones(1).ranks == [0, 1]
    assert ts.active_local_mode() is None


def test_a_mode_can_be_entered_again_after_exit():
    mode = ts.LocalMode(2)
    for _ in range(2):
        with mode:
            assert ts.ones(1).is_local
        assert not ts.ones(1).is_local


def test_entering_an_active_mode_is_an_error():
    with ts.LocalMode(2) as mode:
        with pytest.raises(ts.Error, match=r"LocalMode\(2\).__enter__: the mode is already active"):
            mode.__enter__()
        assert ts.active_local_mode() is mode


def test_exiting_a_mode_that_is_not_active_is_an_error():
    mode = ts.LocalMode(3)
    with pytest.raises(ts.Error, match=r"LocalMode\(3\).__exit__: the scope is not active"):
        mode.__exit__(None, None, None)


def test_exiting_out_of_order_closes_the_inner_scope_and_says_so():
    outer = ts.LocalMode(2)
    inner = ts.LocalMode(3)
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(ts.Error, match=r"scopes entered after it were still open \(ts.LocalMode\(3\)\)"):
        outer.__exit__(None, None, None)
    assert not outer.active and not inner.active
    assert ts.active_local_mode() is None
    assert not ts.ones(1).is_local


def test_exiting_on_another_thread_is_an_error():
    mode = ts.LocalMode(2)
    mode.__enter__()
    errors = []

    def other():
        try:
            mode.__exit__(None, None, None)
        except ts.Error as e:
            errors.append(str(e))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    mode.__exit__(None, None, None)
    assert len(errors) == 1 and "entered on another thread" in errors[0]


@pytest.mark.parametrize("bad, message", [(0, "at least 1, got 0"), (-2, "at least 1, got -2"),
                                          ([], "at least one rank"), ([1, 1], "rank 1 appears twice")])
def test_bad_rank_counts_and_lists_are_errors(bad, message):
    with pytest.raises(ts.Error, match=message):
        ts.LocalMode(bad)


def test_ranks_of_the_wrong_type_are_type_errors():
    with pytest.raises(TypeError, match="ranks must be ints"):
        ts.LocalMode([0, "1"])
    with pytest.raises(TypeError):
        ts.LocalMode("4")


def test_disable_makes_factories_plain_while_ops_stay_per_rank():
    with ts.LocalMode(3) as mode:
        x = ts.rank_map(lambda r: ts.full((2,), float(r)))
        with mode.disable():
            assert not ts.ones(2).is_local
            y = x + 1  # an op on a local tensor still runs per rank
            assert y.is_local
            for r in range(3):
                np.testing.assert_array_equal(np_shard(y, r), np.full(2, r + 1, np.float32))
        assert ts.ones(2).is_local


def test_maybe_disable_is_plain_inside_and_outside_a_mode():
    with ts.maybe_disable_local_mode():
        assert not ts.ones(1).is_local
    with ts.LocalMode(4):
        with ts.maybe_disable_local_mode():
            assert not ts.ones(1).is_local
            assert ts.active_local_mode() is None
        assert ts.ones(1).is_local


def test_manual_seed_one_seed_or_one_per_rank():
    with ts.LocalMode(3) as mode:
        mode.manual_seed(7)
        same = ts.randn(4)
        for r in (1, 2):
            np.testing.assert_array_equal(np_shard(same, r), np_shard(same, 0))
        mode.manual_seed(7)
        again = ts.randn(4)
        np.testing.assert_array_equal(np_shard(again, 0), np_shard(same, 0))
        mode.manual_seed(ts.LocalInt({0: 1, 1: 2, 2: 1}))
        per = ts.randn(4)
        assert not np.array_equal(np_shard(per, 0), np_shard(per, 1))
        np.testing.assert_array_equal(np_shard(per, 0), np_shard(per, 2))  # equal seeds, equal numbers
        with pytest.raises(ts.Error, match=r"per-rank seeds cover ranks \{0, 1\} but the local mode has ranks \{0, 1, 2\}"):
            mode.manual_seed(ts.LocalInt({0: 1, 1: 2}))
    with pytest.raises(ts.Error, match=r"manual_seed: the mode is not active"):
        mode.manual_seed(1)


# --- current_rank, in_per_rank_region -------------------------------------------------------


def test_current_rank_outside_and_inside_a_mode():
    assert ts.current_rank() == 0
    assert isinstance(ts.current_rank(), int)
    with ts.LocalMode(3):
        rank = ts.current_rank()
        assert isinstance(rank, ts.LocalInt)
        assert rank.values() == {0: 0, 1: 1, 2: 2}
    with ts.LocalMode([5]):
        assert ts.current_rank() == 5  # one rank: a plain int


def test_in_per_rank_region_is_true_inside_run_per_rank_only():
    assert not ts.in_per_rank_region()
    with ts.LocalMode(2):
        seen = ts.run_per_rank(lambda r: ts.in_per_rank_region(), ts.current_rank())
    assert seen is True


# --- local_tensor -----------------------------------------------------------------------------


def test_local_tensor_from_a_dict_keeps_each_shard():
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[5, 6], [7, 8]], np.float32)
    lt = ts.local_tensor({1: ts.tensor(b), 0: ts.tensor(a)})
    assert lt.is_local
    assert lt.ranks == [0, 1]
    assert lt.shape == (2, 2)
    np.testing.assert_array_equal(np_shard(lt, 0), a)
    np.testing.assert_array_equal(np_shard(lt, 1), b)
    np.testing.assert_array_equal(np_shard(lt * 2 + 10, 1), b * 2 + 10)


def test_uneven_shards_give_a_local_int_size():
    lt = per_rank({0: np.zeros((1, 2)), 1: np.zeros((2, 2)), 2: np.zeros((1, 2))})
    rows = lt.shape[0]
    assert isinstance(rows, ts.LocalInt)
    assert rows.values() == {0: 1, 1: 2, 2: 1}
    assert lt.shape[1] == 2


def test_local_tensor_errors():
    with pytest.raises(ts.Error, match="local tensor cannot be empty"):
        ts.local_tensor({})
    with pytest.raises(ts.Error, match="float32.*int64|int64.*float32"):
        ts.local_tensor({0: ts.ones(2), 1: ts.tensor([1, 2])})
    with pytest.raises(ts.Error, match="local tensor has no shard for rank 4"):
        ts.local_tensor({0: ts.ones(2)}).shard(4)


# --- rank_map ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 7])
def test_rank_map_gives_each_rank_its_own_shard(n):
    with ts.LocalMode(n):
        lt = ts.rank_map(lambda r: ts.arange(3) + 10 * r)
    assert lt.ranks == list(range(n))
    for r in range(n):
        np.testing.assert_array_equal(np_shard(lt, r), np.arange(3) + 10 * r)


def test_rank_map_runs_fn_with_factories_plain():
    kinds = []
    with ts.LocalMode(3):
        ts.rank_map(lambda r: kinds.append(ts.ones(1).is_local) or ts.ones(1))
    assert kinds == [False, False, False]


def test_rank_map_with_uneven_shards():
    with ts.LocalMode(3):
        lt = ts.rank_map(lambda r: ts.arange(r + 1))
    assert lt.shape[0].values() == {0: 1, 1: 2, 2: 3}
    for r in range(3):
        np.testing.assert_array_equal(np_shard(lt, r), np.arange(r + 1))


def test_rank_map_outside_a_mode_calls_fn_for_rank_0():
    t = ts.rank_map(lambda r: ts.full((2,), float(r + 5)))
    assert not t.is_local
    np.testing.assert_array_equal(np.asarray(t.numpy()), np.full(2, 5.0, np.float32))


def test_a_python_exception_in_rank_map_propagates_as_itself():
    class Boom(Exception):
        pass

    def fn(r):
        if r >= 1:
            raise Boom(f"rank {r} failed")
        return ts.ones(1)

    with ts.LocalMode(3) as mode:
        with pytest.raises(Boom, match="rank 1 failed") as info:  # the lowest failing rank
            ts.rank_map(fn)
        assert info.traceback[-1].name == "fn"  # the traceback reaches into fn
        assert ts.active_local_mode() is mode  # the mode is intact and usable
        assert ts.rank_map(lambda r: ts.ones(1) * r).ranks == [0, 1, 2]
    with pytest.raises(ZeroDivisionError):  # outside a mode too
        ts.rank_map(lambda r: ts.ones(1) / 0 if False else 1 / 0)


def test_rank_map_fn_returning_a_non_tensor_is_an_error():
    with ts.LocalMode(2):
        with pytest.raises(ts.Error, match=r"ts.rank_map: fn\(0, ...\) returned 'x'; expected a ts.Tensor"):
            ts.rank_map(lambda r: "x")


def test_rank_map_fn_leaving_a_mode_open_is_an_error_not_a_crash():
    with ts.LocalMode(2) as mode:
        with pytest.raises(ts.Error, match=r"left scopes open \(ts.LocalMode\(4\)\)"):
            ts.rank_map(lambda r: ts.LocalMode(4).__enter__() and ts.ones(1))
        assert ts.active_local_mode() is mode


def test_collectives_inside_rank_map_are_refused():
    with ts.LocalMode(2):
        x = ts.ones(2)
        with pytest.raises(ts.Error, match="cannot be issued inside run_per_rank"):
            ts.rank_map(lambda r: ts.dist.all_reduce(x) or ts.ones(1))


def test_rank_map_from_two_python_threads_at_once():
    results = {}

    def work(n):
        with ts.LocalMode(n):
            total = None
            for _ in range(20):
                lt = ts.rank_map(lambda r: ts.full((64,), float(r)))
                ts.dist.all_reduce(lt)
                total = lt
        results[n] = total

    threads = [threading.Thread(target=work, args=(n,)) for n in (3, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in (3, 7):
        expected = np.full(64, sum(range(n)), np.float32)
        for r in range(n):
            np.testing.assert_array_equal(np_shard(results[n], r), expected)


# --- tensor_map -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 7])
def test_tensor_map_maps_each_shard_with_its_rank(n):
    with ts.LocalMode(n):
        lt = ts.rank_map(lambda r: ts.ones(2, 2) * (r + 1))
        scaled = ts.tensor_map(lt, lambda r, shard: shard * (r + 1))
    for r in range(n):
        np.testing.assert_array_equal(np_shard(scaled, r), np.full((2, 2), (r + 1) ** 2, np.float32))


def test_tensor_map_drops_ranks_where_fn_returns_none():
    lt = per_rank({r: np.arange(2) + 10 * r for r in range(4)})
    kept = ts.tensor_map(lt, lambda r, shard: None if r % 2 else shard + 1)
    assert kept.ranks == [0, 2]
    np.testing.assert_array_equal(np_shard(kept, 2), np.arange(2) + 21)
    with pytest.raises(ts.Error, match="dropped every rank"):
        ts.tensor_map(lt, lambda r, shard: None)


def test_tensor_map_on_a_plain_tensor_calls_fn_once_for_rank_0():
    calls = []
    out = ts.tensor_map(ts.ones(2), lambda r, t: calls.append(r) or t * 3)
    assert calls == [0]
    np.testing.assert_array_equal(np.asarray(out.numpy()), np.full(2, 3.0, np.float32))


def test_a_python_exception_in_tensor_map_propagates_as_itself():
    lt = per_rank({r: np.zeros(1) for r in range(3)})
    with pytest.raises(KeyError, match="'rank 2'"):
        ts.tensor_map(lt, lambda r, shard: {}["rank 2"] if r == 2 else shard)


# --- run_per_rank -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 7])
def test_run_per_rank_data_offset(n):
    with ts.LocalMode(n):
        slices = ts.run_per_rank(lambda rank, size: ts.arange(rank * size, (rank + 1) * size), ts.current_rank(), 4)
    if n == 1:
        assert not slices.is_local or slices.ranks == [0]
    for r in range(n):
        got = np_shard(slices, r) if slices.is_local else np.asarray(slices.numpy())
        np.testing.assert_array_equal(got, np.arange(4 * r, 4 * r + 4))


def test_run_per_rank_unwraps_local_tensors_and_local_ints_per_rank():
    lt = per_rank({r: np.arange(3) + 10 * r for r in range(3)})
    k = ts.LocalInt({0: 1, 1: 2, 2: 3})
    seen = {}

    def fn(shard, scale, offset=0):
        assert not shard.is_local and isinstance(scale, int) and offset == 5
        seen[scale] = True
        return shard * scale + offset

    with ts.LocalMode(3):
        out = ts.run_per_rank(fn, lt, k, offset=5)
    assert sorted(seen) == [1, 2, 3]
    for r in range(3):
        np.testing.assert_array_equal(np_shard(out, r), (np.arange(3) + 10 * r) * (r + 1) + 5)


def test_run_per_rank_combines_results_as_ops_do():
    with ts.LocalMode(3):
        rank = ts.current_rank()
        assert ts.run_per_rank(lambda r: r * 2, rank).values() == {0: 0, 1: 2, 2: 4}
        assert ts.run_per_rank(lambda r: 7, rank) == 7  # equal ints: a plain int
        assert ts.run_per_rank(lambda r: 1.5, rank) == 1.5
        assert ts.run_per_rank(lambda r: None, rank) is None
        pair = ts.run_per_rank(lambda r: (r, "same"), rank)
        assert isinstance(pair, tuple) and pair[0].values() == {0: 0, 1: 1, 2: 2} and pair[1] == "same"
        with pytest.raises(ts.Error, match=r"different values per rank \(0: 0.0, 1: 0.5, 2: 1.0\)"):
            ts.run_per_rank(lambda r: r / 2, rank)
        with pytest.raises(ts.Error, match="sequences of different lengths"):
            ts.run_per_rank(lambda r: [0] * r, rank)


def test_run_per_rank_outside_a_mode():
    calls = []
    assert ts.run_per_rank(lambda a, b: calls.append(1) or a + b, 2, 3) == 5
    assert calls == [1]  # no local argument: called once
    lt = per_rank({0: np.array([1.0]), 2: np.array([3.0])})
    out = ts.run_per_rank(lambda shard: shard * 10, lt)  # local arguments: once per rank
    assert out.ranks == [0, 2]
    np.testing.assert_array_equal(np_shard(out, 2), np.array([30.0], np.float32))


def test_run_per_rank_errors():
    lt2 = per_rank({0: np.zeros(1), 1: np.zeros(1)})
    with ts.LocalMode(3):
        with pytest.raises(ts.Error, match=r"argument 0 is local over ranks \{0, 1\} but the local mode has ranks \{0, 1, 2\}"):
            ts.run_per_rank(lambda s: s, lt2)
        x = ts.ones(2)
        with pytest.raises(ts.Error, match="cannot be issued inside run_per_rank"):
            ts.run_per_rank(lambda r: ts.dist.all_reduce(x), ts.current_rank())
        with pytest.raises(ValueError, match="bad rank 1"):
            ts.run_per_rank(lambda r: (_ for _ in ()).throw(ValueError(f"bad rank {r}")) if r else 0, ts.current_rank())
    lt3 = per_rank({0: np.zeros(1), 1: np.zeros(1), 2: np.zeros(1)})
    with pytest.raises(ts.Error, match=r"argument b is local over ranks \{0, 1, 2\} but an earlier argument"):
        ts.run_per_rank(lambda a, b: a, lt2, b=lt3)

"""ts.Shard / ts.Replicate / ts.Partial and ts.DTensor against the documented layouts and op rules. Oracles
are NumPy computations on the array that was distributed, and the layout formulas written out here."""
import math

import numpy as np
import pytest

import tessera as ts


def to_np(t):
    # tolist() of an empty tensor loses its shape; put it back.
    return np.array(t.tolist(), dtype=np.float64).reshape(t.shape)


def full(dt):
    """The global value of a DTensor, as NumPy (every rank's copy must agree: reconcile checks)."""
    return to_np(dt.full_tensor().reconcile())


def chunk_rows(n, k):
    """torch.chunk layout: f = ceil(n / k); shard i has max(0, min(f, n - f*i))."""
    f = -(-n // k)
    return [max(0, min(f, n - f * i)) for i in range(k)]


def balanced_rows(n, k):
    """Balanced layout: the first n % k shards get one extra."""
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def rows_per_rank(dt, ranks):
    return [dt.to_local().shard(r).shape[0] for r in ranks]


def plain(array):
    """A plain tensor (what every rank holds), whatever mode is active."""
    with ts.maybe_disable_local_mode():
        return ts.tensor(np.asarray(array, dtype=np.float32))


def sample(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- placements ----------------------------------------------------------------------------------

def test_placement_reprs_and_short_forms():
    assert repr(ts.Shard(0)) == "Shard(dim=0)" and str(ts.Shard(0)) == "S(0)"
    assert repr(ts.Replicate()) == "Replicate()" and str(ts.Replicate()) == "R"
    assert repr(ts.Partial()) == "Partial(sum)" and str(ts.Partial("max")) == "P(max)"
    assert str(ts.BalancedShard(1)) == "B(1)"


def test_placement_kinds_equality_and_hash():
    assert ts.Shard(0) == ts.Shard(0) and ts.Shard(0) != ts.Shard(1)
    assert ts.Replicate() == ts.Replicate() and ts.Replicate() != ts.Shard(0)
    assert ts.Partial() == ts.Partial("sum") and ts.Partial() != ts.Partial("avg")
    assert len({ts.Shard(0), ts.Shard(0), ts.Replicate(), ts.Partial()}) == 3
    assert ts.Shard(1).is_shard() and ts.Shard(1).is_shard(1) and not ts.Shard(1).is_shard(0)
    assert ts.Replicate().is_replicate() and not ts.Replicate().is_shard()
    assert ts.Partial("max").is_partial() and ts.Partial("max").reduce_op == "max"
    assert ts.Shard(2).dim == 2 and ts.Shard(-1).dim == -1
    assert isinstance(ts.BalancedShard(0), ts.Shard) and isinstance(ts.Shard(0), ts.Placement)
    assert ts.BalancedShard(0) != ts.Shard(0)


def test_placements_parse_back():
    assert ts.Placement.parse("S(0)") == ts.Shard(0)
    assert ts.Placement.parse("Shard(dim=1)") == ts.Shard(1)
    assert isinstance(ts.Placement.parse("R"), ts.Replicate)
    assert ts.parse_placements("S(0),R") == (ts.Shard(0), ts.Replicate())
    assert ts.parse_placements("(Shard(dim=0), Partial(max))") == (ts.Shard(0), ts.Partial("max"))
    with pytest.raises(ts.Error, match="placement 'Q'"):
        ts.Placement.parse("Q")
    with pytest.raises(ts.Error, match="unknown reduce op 'bogus'"):
        ts.Partial("bogus")


# ---- distribute / full_tensor / to_local ---------------------------------------------------------

@pytest.mark.parametrize("world", [1, 3, 7])
@pytest.mark.parametrize("rows", [10, 2, 0, 21])
def test_round_trip_and_shard_sizes(world, rows):
    x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) - 5
    with ts.LocalMode(world):
        mesh = ts.init_device_mesh("cpu", (world,))
        for placement, sizes in ((ts.Shard(0), chunk_rows(rows, world)),
                                 (ts.BalancedShard(0), balanced_rows(rows, world))):
            dt = ts.distribute_tensor(plain(x), mesh, [placement])
            assert dt.placements == (placement,)
            assert dt.shape == (rows, 3) and dt.size() == (rows, 3) and dt.size(1) == 3
            assert rows_per_rank(dt, range(world)) == sizes
            np.testing.assert_array_equal(full(dt), x)
            # Each shard is the rows the layout gives it, in order.
            offsets = np.cumsum([0] + sizes)
            for r in range(world):
                np.testing.assert_array_equal(to_np(dt.to_local().shard(r)).reshape(-1, 3),
                                              x[offsets[r]:offsets[r + 1]])
        replicated = ts.distribute_tensor(plain(x), mesh, [ts.Replicate()])
        for r in range(world):
            np.testing.assert_array_equal(to_np(replicated.to_local().shard(r)).reshape(rows, 3), x)


def test_golden_uneven_shards_10_over_3():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        assert rows_per_rank(ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)]), range(3)) == [4, 4, 2]
        assert rows_per_rank(ts.distribute_tensor(plain(x), mesh, [ts.BalancedShard(0)]), range(3)) == [4, 3, 3]
        # The shard size along dim 0 differs per rank: a ts.LocalInt.
        local = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)]).to_local()
        assert local.shape[0].values() == {0: 4, 1: 4, 2: 2}


def test_golden_two_mesh_dims_sharding_one_tensor_dim():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (2, 2), mesh_dim_names=("a", "b"))
        dt = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0), ts.Shard(0)])
        # Golden: 3, 2, 3, 2 rows at offsets 0, 3, 5, 8.
        assert rows_per_rank(dt, range(4)) == [3, 2, 3, 2]
        for rank, offset in zip(range(4), (0, 3, 5, 8)):
            np.testing.assert_array_equal(to_np(dt.to_local().shard(rank))[0], x[offset])
        mixed = dt.redistribute(placements=[ts.Replicate(), ts.Shard(0)])
        assert mixed.placements == (ts.Replicate(), ts.Shard(0))
        np.testing.assert_array_equal(full(mixed), x)


def test_placements_as_any_sequence_or_text():
    x = sample(6, 4)
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (2, 2))
        a = ts.distribute_tensor(plain(x), mesh, (ts.Shard(0), ts.Replicate()))
        b = ts.distribute_tensor(plain(x), mesh, ["S(0)", "R"])
        c = ts.distribute_tensor(plain(x), mesh, "S(0),R")
        d = ts.distribute_tensor(plain(x), device_mesh=mesh, placements=iter_list([ts.Shard(0), ts.Replicate()]))
        for dt in (a, b, c, d):
            assert dt.placements == (ts.Shard(0), ts.Replicate())
        assert ts.distribute_tensor(plain(x), mesh).placements == (ts.Replicate(), ts.Replicate())


def iter_list(items):
    class Seq:  # a sequence that is neither a list nor a tuple
        def __len__(self):
            return len(items)

        def __getitem__(self, i):
            return items[i]
    return Seq()


def test_golden_3d_mesh_round_trip():
    x = sample(8, 16, 32, seed=3)
    with ts.LocalMode(24):
        mesh = ts.init_device_mesh("cpu", (2, 3, 4), mesh_dim_names=("pp", "dp", "tp"))
        dt = ts.distribute_tensor(plain(x), mesh, [ts.Replicate(), ts.Shard(0), ts.Shard(2)])
        np.testing.assert_array_equal(full(dt), x)
        # 8 rows over dp (3 ranks): 3, 3, 2; 32 columns over tp: 8 each.
        coords = mesh.get_coordinate()
        for rank in range(24):
            shard = dt.to_local().shard(rank)
            assert shard.shape == (chunk_rows(8, 3)[coords[1][rank]], 16, 8)


def test_from_local_even_and_uneven():
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        local = ts.local_tensor({r: plain(np.full((2, 2), r)) for r in range(3)})
        dt = ts.DTensor.from_local(local, mesh, [ts.Shard(0)])
        assert dt.shape == (6, 2)
        np.testing.assert_array_equal(full(dt), np.repeat(np.arange(3.0), 2)[:, None] * np.ones((1, 2)))
        uneven = ts.local_tensor({0: plain(np.zeros((4, 2))), 1: plain(np.ones((4, 2))), 2: plain(np.full((2, 2), 2))})
        dt = ts.DTensor.from_local(uneven, mesh, [ts.Shard(0)], shape=(10, 2))
        assert dt.shape == (10, 2)
        assert ts.DTensor.from_local(plain(np.ones((2, 2))), mesh).placements == (ts.Replicate(),)
        with pytest.raises(ts.Error, match=r"rank 0 holds a shard of shape \[4, 2\]"):
            ts.DTensor.from_local(uneven, mesh, [ts.Shard(0)], shape=(9, 2))


# ---- redistribute ---------------------------------------------------------------------------------

def test_golden_redistribute_shard_to_replicate_on_4_ranks():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        dt = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        rep = dt.redistribute(placements=[ts.Replicate()])
        assert rep.placements == (ts.Replicate(),)
        for r in range(4):
            np.testing.assert_array_equal(to_np(rep.to_local().shard(r)), x)
        moved = dt.redistribute(mesh, [ts.Shard(1)])
        assert rows_per_rank(moved, range(4)) == [10] * 4
        np.testing.assert_array_equal(full(moved), x)
        np.testing.assert_array_equal(full(dt.redistribute()), x)  # default: Replicate


def test_partial_to_replicate_sums():
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        terms = {r: np.full((2, 2), r + 1, dtype=np.float32) for r in range(3)}
        dt = ts.DTensor.from_local(ts.local_tensor({r: plain(t) for r, t in terms.items()}), mesh, [ts.Partial()])
        np.testing.assert_array_equal(full(dt), sum(terms.values()))
        with pytest.raises(ts.Error, match="S\\(0\\) -> P\\(sum\\).*not supported"):
            ts.distribute_tensor(plain(np.ones((3, 2))), mesh, [ts.Shard(0)]).redistribute(placements=[ts.Partial()])


# ---- ops ----------------------------------------------------------------------------------------

def test_golden_linear_layer_on_4_ranks():
    x, w, b = sample(16, 8, seed=1), sample(8, 4, seed=2), sample(4, seed=3)
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        dx = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        dw = ts.distribute_tensor(plain(w), mesh, [ts.Replicate()])
        db = ts.distribute_tensor(plain(b), mesh, [ts.Replicate()])
        product = dx @ dw
        assert product.placements == (ts.Shard(0),)  # S(0) x R -> S(0)
        y = ts.relu(ts.matmul(dx, dw) + db)
        np.testing.assert_allclose(full(y), np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(full(dx.matmul(dw).relu()), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)


def test_golden_hybrid_matmul_on_4x2_mesh():
    x, w = sample(16, 8, seed=4), sample(8, 12, seed=5)
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        dx = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0), ts.Replicate()])
        dw = ts.distribute_tensor(plain(w), mesh, [ts.Replicate(), ts.Shard(1)])
        y = ts.matmul(dx, dw)
        assert y.placements == (ts.Shard(0), ts.Shard(1))
        np.testing.assert_allclose(full(y), x @ w, rtol=1e-5, atol=1e-5)


def test_shard_1_times_shard_0_is_partial_sum():
    a, b = sample(4, 6, seed=6), sample(6, 5, seed=7)
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        y = ts.distribute_tensor(plain(a), mesh, [ts.Shard(1)]) @ ts.distribute_tensor(plain(b), mesh, [ts.Shard(0)])
        assert y.placements == (ts.Partial(),)
        np.testing.assert_allclose(full(y), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("world", [1, 3, 7])
def test_arithmetic_with_dtensors_tensors_and_numbers(world):
    a, b = sample(10, 3, seed=8), sample(10, 3, seed=9) + 3
    with ts.LocalMode(world):
        mesh = ts.init_device_mesh("cpu", (world,))
        da = ts.distribute_tensor(plain(a), mesh, [ts.Shard(0)])
        db = ts.distribute_tensor(plain(b), mesh, [ts.Shard(0)])
        scalar = plain(2.0)  # 0-d: acts as a number
        cases = {
            "dt + dt": (da + db, a + b), "dt - dt": (da - db, a - b),
            "dt * dt": (da * db, a * b), "dt / dt": (da / db, a / b),
            "dt + 1": (da + 1, a + 1), "1 + dt": (1 + da, 1 + a),
            "dt - 2.5": (da - 2.5, a - 2.5), "2.5 - dt": (2.5 - da, 2.5 - a),
            "3 * dt": (3 * da, 3 * a), "dt / 4": (da / 4, a / 4), "1 / dt": (1 / db, 1 / b),
            "-dt": (-da, -a), "dt * 0-d": (da * scalar, a * 2), "0-d - dt": (scalar - da, 2 - a),
            "ts.add(dt, 1)": (ts.add(da, 1), a + 1), "ts.sub(1, dt)": (ts.sub(1, da), 1 - a),
            "ts.mul(dt, dt)": (ts.mul(da, db), a * b), "ts.div(dt, 2)": (ts.div(da, 2), a / 2),
            "ts.maximum": (ts.maximum(da, db), np.maximum(a, b)),
            "dt.add(dt)": (da.add(db), a + b), "exp": (ts.exp(da), np.exp(a)), "tanh": (da.tanh(), np.tanh(a)),
            "abs": (abs_of(da), np.abs(a)), "sqrt": (ts.sqrt(db), np.sqrt(b)),
        }
        for name, (actual, expected) in cases.items():
            assert isinstance(actual, ts.DTensor), name
            np.testing.assert_allclose(full(actual), expected, rtol=1e-5, atol=1e-6, err_msg=name)
    # The Tensor forms of the module functions still work beside the DTensor ones.
    assert ts.add(plain([1.0, 2.0]), 1).tolist() == [2.0, 3.0]
    assert ts.sub(10, plain([1.0])).tolist() == [9.0]


def abs_of(dt):
    return ts.abs(dt)


@pytest.mark.parametrize("world", [1, 3, 7])
def test_reductions_match_numpy(world):
    x = sample(10, 6, seed=10)
    with ts.LocalMode(world):
        mesh = ts.init_device_mesh("cpu", (world,))
        dt = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        np.testing.assert_allclose(full(dt.sum()), x.sum(), rtol=1e-5)
        np.testing.assert_allclose(full(ts.sum(dt, 0)), x.sum(0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(full(dt.sum(dim=1, keepdim=True)), x.sum(1, keepdims=True), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(full(dt.mean(0)), x.mean(0), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(full(dt.max(0)), x.max(0), rtol=1e-6)
        np.testing.assert_allclose(full(ts.min(dt, 1)), x.min(1), rtol=1e-6)
        np.testing.assert_allclose(full(ts.softmax(dt, 1)), np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-5)
        assert dt.sum().item() == pytest.approx(float(x.sum()), rel=1e-5)
        if world > 1:
            assert dt.sum(0).placements == (ts.Partial(),)  # reduced over the sharded dim
            if all(chunk_rows(10, world)):  # an empty shard has no max to keep pending
                assert dt.max(0).placements == (ts.Partial("max"),)


def test_shape_methods_and_properties():
    x = sample(6, 4, seed=11)
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        dt = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        assert dt.ndim == 2 and dt.dim() == 2 and dt.numel() == 24 and len(dt) == 6
        assert dt.dtype == ts.float32 and dt.device_mesh == mesh and dt.device == "cpu"
        assert dt.t().shape == (4, 6) and dt.t().placements == (ts.Shard(1),)
        np.testing.assert_array_equal(full(dt.t()), x.T)
        np.testing.assert_array_equal(full(dt.transpose(0, 1)), x.T)
        np.testing.assert_array_equal(full(dt.view(6, 2, 2)), x.reshape(6, 2, 2))
        np.testing.assert_array_equal(full(dt.reshape((3, 8))), x.reshape(3, 8))
        assert dt.to(ts.float64).dtype == ts.float64 and dt.double().dtype == ts.float64
        np.testing.assert_array_equal(full(ts.cat([dt, dt], 1)), np.concatenate([x, x], 1))
        zeros = ts.zeros_like(dt)
        assert zeros.placements == dt.placements and zeros.shape == dt.shape
        np.testing.assert_array_equal(full(zeros), np.zeros_like(x))
        np.testing.assert_array_equal(full(ts.full_like(dt, 7)), np.full_like(x, 7))
        assert "DTensor(local_tensor=" in repr(dt) and "placements=(Shard(dim=0),)" in repr(dt)
        assert str(dt) == "DTensor(shape=[6, 4], placements=S(0), mesh=DeviceMesh('cpu', [0, 1]), dtype=float32)"


def test_autograd_through_a_dtensor():
    x = sample(10, 4, seed=12)
    with ts.LocalMode(3):
        mesh = ts.init_device_mesh("cpu", (3,))
        dx = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        assert dx.grad is None and not dx.requires_grad
        assert dx.requires_grad_() is dx
        assert dx.requires_grad and dx.is_leaf
        loss = (dx * dx).sum()
        assert loss.grad_fn is not None
        loss.backward()
        assert dx.grad.placements == (ts.Shard(0),)
        np.testing.assert_allclose(full(dx.grad), 2 * x, rtol=1e-6)
        assert not dx.detach().requires_grad


def test_visualize_sharding_prints_like_pytorch(capsys):
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        dt = ts.distribute_tensor(plain(np.zeros((10, 4))), mesh, [ts.Shard(0)])
        assert ts.visualize_sharding(dt, header="my tensor") is None
        printed = capsys.readouterr().out
        text = ts.visualize_sharding(dt, print_output=False)
        assert capsys.readouterr().out == ""
    assert printed.startswith("my tensor\n") and text in printed
    # The rows each rank holds, from the chunk layout (ranges inclusive).
    start = 0
    for rank, rows in enumerate(chunk_rows(10, 4)):
        span = f"rows {start}-{start + rows - 1}" if rows > 1 else f"rows {start}"
        assert any(line.startswith(span) and line.rstrip().endswith(f"rank {rank}") for line in text.splitlines()), span
        start += rows


def test_implicit_replication():
    x = sample(4, 3, seed=13)
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        dt = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        other = plain(np.ones((4, 3)))
        with pytest.raises(ts.Error, match="distribute the tensor first"):
            dt + other
        with ts.implicit_replication():
            np.testing.assert_allclose(full(dt + other), x + 1)
        with pytest.raises(ts.Error, match="distribute the tensor first"):
            other + dt  # off again after the block


def test_errors_name_what_was_wrong():
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        other_mesh = ts.init_device_mesh("cpu", (2, 2))
        x = plain(np.ones((4, 4)))
        with pytest.raises(ts.Error, match="shard dim 2 is out of range for a tensor of 2 dims"):
            ts.distribute_tensor(x, mesh, [ts.Shard(2)])
        with pytest.raises(ts.Error, match=r"2 placements \(S\(0\),S\(1\)\) for a mesh of 1 dims"):
            ts.distribute_tensor(x, mesh, [ts.Shard(0), ts.Shard(1)])
        with pytest.raises(ts.Error, match="P\\(sum\\) is not allowed"):
            ts.distribute_tensor(x, mesh, [ts.Partial()])
        a = ts.distribute_tensor(x, mesh, [ts.Shard(0)])
        b = ts.distribute_tensor(x, other_mesh, [ts.Shard(0), ts.Replicate()])
        with pytest.raises(ts.Error, match="add: inputs live on different meshes"):
            a + b
        with pytest.raises(ts.Error, match="matmul: inputs live on different meshes"):
            a @ b
        with pytest.raises(TypeError, match="placement 0 is a int"):
            ts.distribute_tensor(x, mesh, [0])
        with pytest.raises(TypeError, match="placements must be a sequence"):
            ts.distribute_tensor(x, mesh, ts.Shard(0))
        with pytest.raises(TypeError, match="device_mesh must be a ts.DeviceMesh"):
            ts.distribute_tensor(x, None, [ts.Shard(0)])
        with pytest.raises(TypeError, match="distribute it first"):
            a @ x
        with pytest.raises(TypeError):
            a + "text"

"""Tensor, sequence, loss and data parallelism of modules from Python (PyTorch's module paths and
keywords): the parallel modules' outputs, losses and gradients equal a dense NumPy computation
from the same starting parameters, and the parameters get the documented layouts."""
import numpy as np
import pytest

import tessera as ts
from tessera import nn
from tessera.distributed._composable import replicate
from tessera.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from tessera.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, PrepareModuleOutput,
                                                 RowwiseParallel, SequenceParallel, loss_parallel,
                                                 parallelize_module)


def arr(t):
    if isinstance(t, ts.DTensor):
        t = t.full_tensor()
    if t.is_local:
        t = t.reconcile()
    return np.array(t.tolist(), dtype=np.float64).reshape(t.shape)


def values(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def mlp(seed):
    with ts.maybe_disable_local_mode():
        ts.manual_seed(seed)
        return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))


def dense_mlp(weights, x):
    w1, b1, w2, b2 = weights
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


@pytest.mark.parametrize("tp", [1, 2])
def test_colwise_then_rowwise_mlp_equals_the_dense_one(tp):
    model = mlp(3)
    weights = [arr(p.data) for p in model.parameters()]
    x = values(5, 6, seed=1)
    with ts.LocalMode(tp):
        mesh = ts.init_device_mesh("cpu", (tp,), mesh_dim_names=("tp",))
        assert parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()}) is model
        w1 = model[0].weight
        assert w1.is_dtensor and w1.placements == (ts.Shard(0),)
        assert model[2].weight.placements == (ts.Shard(1),) and model[2].bias.placements == (ts.Replicate(),)
        out = model(ts.tensor(x))
        assert out.is_local  # use_local_output: a local tensor, replicated over tp
        np.testing.assert_allclose(arr(out), dense_mlp(weights, x.astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_sequence_parallel_norm_and_prepare_module_io():
    x = values(2, 4, 6, seed=2)
    with ts.maybe_disable_local_mode():
        norm, lin = nn.RMSNorm(6, eps=1e-6), nn.Linear(6, 6)
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        parallelize_module(norm, mesh, SequenceParallel())
        assert norm.weight.placements == (ts.Replicate(),)
        dx = ts.distribute_tensor(ts.tensor(x), mesh, [ts.Shard(1)])
        out = norm(dx)
        assert isinstance(out, ts.DTensor) and out.placements == (ts.Shard(1),)
        a = x.astype(np.float64)
        np.testing.assert_allclose(arr(out), a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6), rtol=1e-4,
                                   atol=1e-5)

        parallelize_module(lin, mesh, PrepareModuleInput(input_layouts=ts.Shard(1), desired_input_layouts=ts.Replicate(),
                                                         use_local_output=True))
        parallelize_module(lin, mesh, PrepareModuleOutput(output_layouts=ts.Replicate(),
                                                          desired_output_layouts=ts.Shard(0)))
        local_rows = dx.to_local()
        y = lin(local_rows)
        assert y.is_local and y.shard(0).shape == (1, 4, 6)
        np.testing.assert_allclose(arr(y.shard(1)), a[1:] @ arr(lin.weight.data).T + arr(lin.bias.data), rtol=1e-5,
                                   atol=1e-5)


def test_loss_parallel_cross_entropy_equals_the_dense_loss():
    logits, target = values(6, 10, seed=4).astype(np.float64), np.array([3, 9, 0, 0, 5, 7])
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -logp[np.arange(6), target].mean()
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        sharded = ts.distribute_tensor(ts.tensor(logits.astype(np.float32)), mesh, [ts.Shard(1)])
        labels = ts.distribute_tensor(ts.tensor(target), mesh, [ts.Replicate()])
        with loss_parallel():
            loss = ts.nn.functional.cross_entropy(sharded, labels)
        assert loss.full_tensor().reconcile().item() == pytest.approx(expected, rel=1e-5)


def test_fully_shard_gradients_equal_the_dense_ones():
    ts.manual_seed(7)
    with ts.maybe_disable_local_mode():
        lin = nn.Linear(3, 4)
    w, b = arr(lin.weight.data), arr(lin.bias.data)
    x = values(4, 3, seed=5).astype(np.float64)
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,), mesh_dim_names=("dp",))
        assert fully_shard(lin, mesh=mesh, mp_policy=MixedPrecisionPolicy()) is lin
        assert lin.weight.placements == (ts.Shard(0),) and lin.weight.to_local().shard(1).shape == (2, 3)
        # Each rank trains on its half of the rows; gradients are averaged over dp.
        mine = ts.distribute_tensor(ts.tensor(x.astype(np.float32)), mesh, [ts.Shard(0)]).to_local()
        ts.sum(lin(mine)).backward()
        dw = np.ones((2, 4)).T @ x[:2] / 2 + np.ones((2, 4)).T @ x[2:] / 2
        np.testing.assert_allclose(arr(lin.weight.grad), dw, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(arr(lin.bias.grad), np.full(4, 2.0), rtol=1e-6)
        np.testing.assert_allclose(arr(lin.weight.data), w)  # the values are only laid out


def test_replicate_averages_gradients():
    ts.manual_seed(8)
    with ts.maybe_disable_local_mode():
        lin = nn.Linear(2, 3)
    x = values(4, 2, seed=6).astype(np.float64)
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        replicate(lin, device_mesh=mesh, bucket_cap_mb=1.0)
        mine = ts.distribute_tensor(ts.tensor(x.astype(np.float32)), mesh, [ts.Shard(0)]).to_local()
        ts.sum(lin(mine)).backward()
        dw = (np.ones((2, 3)).T @ x[:2] + np.ones((2, 3)).T @ x[2:]) / 2
        np.testing.assert_allclose(arr(lin.weight.grad), dw, rtol=1e-5)  # every rank's copy the same


def test_plan_errors_name_what_was_wrong():
    with ts.LocalMode(2):
        mesh = ts.init_device_mesh("cpu", (2,))
        with pytest.raises(TypeError, match="the plan's value for '0' must be a parallel style"):
            parallelize_module(mlp(1), mesh, {"0": "colwise"})
        with pytest.raises(TypeError, match="parallelize_plan must be a parallel style or a dict"):
            parallelize_module(mlp(1), mesh, ["0"])
        with pytest.raises(ts.Error, match="nothing"):
            parallelize_module(mlp(1), mesh, {"nothing": ColwiseParallel()})


def test_transformer_tp_plan_is_torchtitans():
    plan = ts.models.transformer_tp_plan()
    assert list(plan)[:3] == ["tok_embeddings", "norm", "output"]
    assert isinstance(plan["layers.*.attention.wq"], ColwiseParallel)
    assert plan["layers.*.feed_forward.w2"].output_layouts == ts.Shard(1)
    assert plan["output"].use_local_output is False
    assert ts.models.transformer_tp_plan(loss_parallel=False)["output"].output_layouts == ts.Replicate()
    assert plan["layers.*.attention"].input_layouts == [ts.Shard(1), None, None]

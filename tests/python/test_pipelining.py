"""tessera.distributed.pipelining from Python, in rank programs (ts.spawn): a pipelined step leaves
the gradients a single-process run of the whole model on the whole batch gives, for each schedule,
and the schedules' orders follow their documented rules."""
import numpy as np
import pytest

import tessera as ts
from tessera import nn
from tessera.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B,
                                            ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble)
from tessera.nn.functional import cross_entropy

WIDTHS = [5, 7, 6, 8, 4]  # four Linear layers: stage s holds layer s (or s, s + 1 with two stages per rank)
ROWS = 8


def layers(seed):
    ts.manual_seed(seed)
    return [nn.Linear(a, b) for a, b in zip(WIDTHS, WIDTHS[1:])]


def batch():
    with ts.maybe_disable_local_mode():
        ts.manual_seed(77)
        x = ts.randn(ROWS, WIDTHS[0])
    y = ts.tensor([0, 3, 1, 2, 2, 0, 3, 1])
    return x, y


def dense_grads(seed):
    """The whole model on the whole batch in one process: the oracle."""
    model = nn.Sequential(*layers(seed))
    x, y = batch()
    cross_entropy(model(x), y).backward()
    return [np.array(p.grad.tolist()) for p in model.parameters()]


def loss_fn(output, target):
    return cross_entropy(output, target)


def run_pipeline(ranks, stage_ranks, make_schedule, n_microbatches):
    """stage_ranks[s]: the rank holding stage s (layer s). Returns each layer's (weight, bias) grads and
    the losses the last stage's rank collected."""
    num_stages = len(stage_ranks)
    grads, losses = {}, []
    x, y = batch()

    def program(rank):
        mine = layers(3)  # every rank builds the whole model alike, then keeps its stages' layers
        held = [s for s in range(num_stages) if stage_ranks[s] == rank]
        stages = [PipelineStage(mine[s], s, num_stages) for s in held]
        schedule = make_schedule(stages, n_microbatches)
        kwargs = {}
        if num_stages - 1 in held:
            kwargs = {"target": y, "losses": losses}
        if 0 in held:
            schedule.step(x, **kwargs)
        else:
            schedule.step(**kwargs)
        for s in held:
            grads[s] = [np.array(mine[s].weight.grad.tolist()), np.array(mine[s].bias.grad.tolist())]

    ts.spawn(ranks, program)
    return [g for s in range(num_stages) for g in grads[s]], losses


SINGLE = [("gpipe", lambda stages, n: ScheduleGPipe(stages[0], n, loss_fn=loss_fn)),
          ("1f1b", lambda stages, n: Schedule1F1B(stages[0], n, loss_fn=loss_fn))]


@pytest.mark.parametrize("name,make", SINGLE, ids=[n for n, _ in SINGLE])
def test_one_stage_per_rank_gives_the_dense_gradients(name, make):
    got, losses = run_pipeline(4, [0, 1, 2, 3], make, n_microbatches=4)
    for g, expected in zip(got, dense_grads(3)):
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-6)
    assert len(losses) == 4  # one per micro-batch, on the last stage's rank


MULTI = [("interleaved_1f1b", [0, 1, 0, 1], lambda stages, n: ScheduleInterleaved1F1B(stages, n, loss_fn=loss_fn)),
         ("interleaved_zb", [0, 1, 0, 1], lambda stages, n: ScheduleInterleavedZeroBubble(stages, n, loss_fn=loss_fn)),
         ("zbv", [0, 1, 1, 0], lambda stages, n: ScheduleZBVZeroBubble(stages, n, loss_fn=loss_fn))]


@pytest.mark.parametrize("name,stage_ranks,make", MULTI, ids=[n for n, _, _ in MULTI])
def test_two_stages_per_rank_give_the_dense_gradients(name, stage_ranks, make):
    got, losses = run_pipeline(2, stage_ranks, make, n_microbatches=4)
    for g, expected in zip(got, dense_grads(3)):
        np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-6)
    # The micro-batches' mean loss is the whole batch's (equal rows per micro-batch).
    x, y = batch()
    whole = cross_entropy(nn.Sequential(*layers(3))(x), y).item()
    assert np.mean([l.item() for l in losses]) == pytest.approx(whole, rel=1e-5)


def compute_only(actions):
    return [a for a in actions if "SEND" not in a and "RECV" not in a]


def test_schedule_orders_follow_their_rules():
    orders = {}

    def program(rank):
        lin = nn.Linear(2, 2)
        stage = PipelineStage(lin, rank, 2)
        orders["1f1b"] = [compute_only(Schedule1F1B(stage, 4, loss_fn).actions(r)) for r in range(2)]
        orders["gpipe"] = [compute_only(ScheduleGPipe(stage, 2, loss_fn).actions(r)) for r in range(2)]
        orders["table"] = Schedule1F1B(stage, 4, loss_fn).table()
        orders["bubble"] = ScheduleGPipe(stage, 2, loss_fn).bubble_fraction()

    ts.spawn(2, program)
    # 1F1B: stage s warms up with (stages - s) forwards, then alternates a backward and a forward.
    assert orders["1f1b"] == [["0F0", "0F1", "0B0", "0F2", "0B1", "0F3", "0B2", "0B3"],
                              ["1F0", "1B0", "1F1", "1B1", "1F2", "1B2", "1F3", "1B3"]]
    assert orders["gpipe"] == [["0F0", "0F1", "0B0", "0B1"], ["1F0", "1F1", "1B0", "1B1"]]
    assert "0F0" in orders["table"]
    assert 0 < orders["bubble"] < 1


def test_a_loss_fn_that_raises_or_returns_no_tensor_is_an_error():
    def program(rank):
        stage = PipelineStage(nn.Linear(3, 3), rank, 2)
        bad = ScheduleGPipe(stage, 2, loss_fn=lambda out, target: "not a loss")
        x, y = ts.ones(2, 3), ts.tensor([0, 1])
        if rank == 0:
            bad.step(x)
        else:
            bad.step(target=y, losses=[])

    with pytest.raises(ts.Error, match="loss_fn returned str 'not a loss'; expected a ts.Tensor"):
        ts.spawn(2, program)
    with pytest.raises(TypeError, match="stages must be a non-empty list of PipelineStage"):
        ScheduleInterleaved1F1B([], 2)

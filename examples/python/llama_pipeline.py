"""Trains the reference Llama (dim 64, 4 layers, vocab 256, sequence 32) with pipeline parallelism x
FSDP x tensor parallelism on a (pp=2, dp=2, tp=2) mesh of 8 ranks, each rank a per-rank program
(ts.spawn), beside the same model trained densely on the same micro-batches: the Python spelling of
examples/llama_pipeline/llama_pipeline.cpp, ending with the same `final parameters checksum <hex>`.

    python examples/python/llama_pipeline.py [--schedule 1f1b|gpipe] [--steps N]

Every rank builds the whole model from one seed and keeps its stage (layers 0-1 with the token
embedding on pp rank 0, layers 2-3 with the final norm and output projection on pp rank 1), makes it
tensor-parallel on mesh["tp"] (torchtitan's plan, sequence and loss parallel) and fully shards it on
mesh["dp"]. Each dp replica trains on its half of the batch.
"""
import argparse
import sys

import numpy as np

import tessera as ts
from tessera.distributed.fsdp import fully_shard
from tessera.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
from tessera.distributed.tensor.parallel import ColwiseParallel, loss_parallel, parallelize_module
from tessera.models import Transformer, TransformerArgs, TransformerStage, transformer_tp_plan
from tessera.nn.functional import cross_entropy
from tessera.optim import SGD

VOCAB, SEQ, BATCH, MICRO, RANKS, LR = 256, 32, 8, 4, 8, 0.1
MASK64 = (1 << 64) - 1


def model_args():
    return TransformerArgs(dim=64, n_layers=4, n_heads=4, n_kv_heads=2, vocab_size=VOCAB, ffn_hidden=176,
                           max_seq_len=SEQ)


def batch_of(step):
    """Step's batch [BATCH, SEQ + 1] of tokens from a fixed 64-bit linear congruential sequence."""
    state = (0x9E3779B97F4A7C15 * (step + 1)) & MASK64
    tokens = []
    for _ in range(BATCH * (SEQ + 1)):
        state = (state * 6364136223846793005 + 1442695040888963407) & MASK64
        tokens.append((state >> 33) % VOCAB)
    return ts.tensor(tokens, dtype=ts.int64).view(BATCH, SEQ + 1)


def inputs_of(batch):
    return batch.narrow(1, 0, SEQ).contiguous()


def targets_of(batch):
    return batch.narrow(1, 1, SEQ).contiguous()


def fnv1a(value, data):
    for byte in data:
        value = ((value ^ byte) * 1099511628211) & MASK64
    return value


def dense_losses(steps):
    """The dense model on one rank: micro-batch k is every replica's micro-batch k (rows k and k + 4),
    gradients accumulated in micro-batch order and scaled by 1/MICRO, as the schedule does."""
    ts.manual_seed(2026)
    model = Transformer(model_args())
    optimizer = SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(steps):
        batch = batch_of(step)
        optimizer.zero_grad()
        row = []
        for k in range(MICRO):
            micro = ts.cat([batch.narrow(0, k, 1), batch.narrow(0, k + BATCH // 2, 1)], 0)
            loss = cross_entropy(model(inputs_of(micro)).view(-1, VOCAB), targets_of(micro).view(-1))
            loss.backward()
            row.append(loss.item())
        for p in model.parameters():
            p.data.grad = p.data.grad * (1.0 / MICRO)
        optimizer.step()
        losses.append(row)
    return losses


def stage_plan(stage):
    """torchtitan's plan for the parts this stage holds; the last stage's logits come back as the rank's
    vocabulary shard (loss parallelism), which loss_fn lays out again."""
    plan = {}
    for path, style in transformer_tp_plan(loss_parallel=True).items():
        if path == "tok_embeddings" and not stage.is_first:
            continue
        if path in ("norm", "output") and not stage.is_last:
            continue
        if path == "output":
            style = ColwiseParallel(input_layouts=ts.Shard(1), output_layouts=ts.Shard(-1), use_local_output=True)
        plan[path] = style
    return plan


def train(rank, gpipe, dense, result):
    mesh = ts.init_device_mesh("cpu", (2, 2, 2), mesh_dim_names=("pp", "dp", "tp"))
    pp, dp = rank // 4, (rank // 2) % 2
    printer = rank == 4  # the last stage's first rank: it sees the losses

    ts.manual_seed(2026)
    whole = Transformer(model_args())
    stage = TransformerStage(whole, 2 * pp, 2 * pp + 2)
    parallelize_module(stage, mesh["tp"], stage_plan(stage))
    for _, layer in stage.layers.named_children():
        fully_shard(layer, mesh=mesh["dp"])
    fully_shard(stage, mesh=mesh["dp"])

    tp_mesh = mesh["tp"]

    def loss_fn(logits, target):
        with loss_parallel():
            sharded = ts.DTensor.from_local(logits, tp_mesh, [ts.Shard(2)])
            replicated = ts.DTensor.from_local(target, tp_mesh, [ts.Replicate()])
            return cross_entropy(sharded.view(-1, VOCAB), replicated.view(-1)).to_local()

    pipeline_stage = PipelineStage(stage, pp, 2, group=mesh["pp"].get_group())
    schedule = (ScheduleGPipe if gpipe else Schedule1F1B)(pipeline_stage, MICRO, loss_fn=loss_fn)
    if printer:
        print(f"{'ScheduleGPipe' if gpipe else 'Schedule1F1B'}, each pipeline rank's actions:\n{schedule.table()}")
    optimizer = SGD(stage.parameters(), lr=LR)

    for step in range(len(dense)):
        replica_rows = batch_of(step).narrow(0, dp * BATCH // 2, BATCH // 2)
        optimizer.zero_grad()
        losses = []
        if pp == 0:
            schedule.step(inputs_of(replica_rows))
        else:
            schedule.step(target=targets_of(replica_rows), losses=losses)
        optimizer.step()
        if pp == 0:
            continue
        worst, values = 0.0, []
        for k, micro_loss in enumerate(losses):
            # The rank's own loss of its replica's micro-batch k, averaged over the replicas.
            loss = micro_loss.shard(rank).clone()
            ts.dist.all_reduce(loss, op=ts.ReduceOp.AVG, group=mesh["dp"].get_group())
            value, want = loss.item(), dense[step][k]
            worst = max(worst, abs(value - want) / abs(want))
            values.append(f"{value:f}"[:9])
        result["all_close"] = result["all_close"] and worst <= 1e-5
        if printer:
            print(f"step {step + 1}  micro-batch losses {' '.join(values)}  "
                  f"largest relative difference from the dense run {worst:.2e}")

    # Every parameter's full value, hashed in name order per stage; stage 0's hash travels to rank 4.
    checksum = 14695981039346656037
    for name, p in stage.named_parameters():
        values = np.ascontiguousarray(p.full_tensor().shard(rank).numpy(), dtype=np.float32)
        checksum = fnv1a(checksum, name.encode())
        checksum = fnv1a(checksum, values.tobytes())
    signed = checksum - (1 << 64) if checksum >= 1 << 63 else checksum
    stage_hash = ts.tensor([signed], dtype=ts.int64)
    if rank == 0:
        ts.dist.send(stage_hash, 4, tag=0)
    if printer:
        ts.dist.recv(stage_hash, 0, tag=0)
        first = stage_hash.tolist()[0] & MASK64
        print(f"losses {'match' if result['all_close'] else 'DO NOT match'} the dense run within 1e-5 relative")
        print(f"final parameters checksum {fnv1a(first, checksum.to_bytes(8, 'little')):016x}")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedule", choices=("1f1b", "gpipe"), default="1f1b")
    parser.add_argument("--steps", type=int, default=5)
    options = parser.parse_args(argv)
    if options.steps < 1:
        parser.error(f"--steps {options.steps} must be a positive number of steps")
    dense = dense_losses(options.steps)
    result = {"all_close": True}
    ts.spawn(RANKS, lambda rank: train(rank, options.schedule == "gpipe", dense, result))
    return 0 if result["all_close"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

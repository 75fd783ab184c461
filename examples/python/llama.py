"""Trains the reference Llama (dim 64, 2 layers, vocab 256, sequence 32) for 10 steps with FSDP,
tensor parallelism, sequence parallelism and loss parallelism on a (dp=2, tp=2) mesh of 4
simulated ranks, beside the same model trained densely on the whole batch, and prints every step's
losses. The same program as the C++ example examples/llama/llama.cpp, written with PyTorch's
names: it ends with the same `final parameters checksum <hex>` line, bit for bit.

    python examples/python/llama.py
"""
import sys

import numpy as np

import tessera as ts
from tessera.distributed.fsdp import fully_shard
from tessera.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                 SequenceParallel, loss_parallel, parallelize_module)
from tessera.models import Transformer, TransformerArgs
from tessera.nn.functional import cross_entropy
from tessera.nn.utils import clip_grad_norm_
from tessera.optim import AdamW
from tessera.optim.lr_scheduler import LinearLR

VOCAB, SEQ, BATCH_PER_REPLICA, STEPS = 256, 32, 2, 10
MASK64 = (1 << 64) - 1


def model_args():
    return TransformerArgs(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=VOCAB, ffn_hidden=176,
                           max_seq_len=SEQ)


def batch_tokens(step):
    """Step's global batch [2 * BATCH_PER_REPLICA, SEQ + 1] of tokens (inputs and next-token targets), from
    a fixed 64-bit linear congruential sequence."""
    state = (0x9E3779B97F4A7C15 * (step + 1)) & MASK64
    tokens = []
    for _ in range(2 * BATCH_PER_REPLICA * (SEQ + 1)):
        state = (state * 6364136223846793005 + 1442695040888963407) & MASK64
        tokens.append((state >> 33) % VOCAB)
    return tokens


def fnv1a(value, data):
    for byte in data:
        value = ((value ^ byte) * 1099511628211) & MASK64
    return value


def tp_plan():
    """torchtitan's plan: vocabulary-parallel embedding into a sequence shard, sequence-parallel norms,
    attention and feed-forward column- then row-parallel, the output projection column-parallel with
    its logits left sharded on the vocabulary (loss parallelism)."""
    plan = {
        "tok_embeddings": RowwiseParallel(input_layouts=ts.Replicate(), output_layouts=ts.Shard(1)),
        "norm": SequenceParallel(),
        "output": ColwiseParallel(input_layouts=ts.Shard(1), output_layouts=ts.Shard(-1), use_local_output=False),
    }
    block = {
        "attention_norm": SequenceParallel(),
        "attention": PrepareModuleInput(input_layouts=(ts.Shard(1), None, None),
                                        desired_input_layouts=(ts.Replicate(), None, None)),
        "attention.wq": ColwiseParallel(),
        "attention.wk": ColwiseParallel(),
        "attention.wv": ColwiseParallel(),
        "attention.wo": RowwiseParallel(output_layouts=ts.Shard(1)),
        "ffn_norm": SequenceParallel(),
        "feed_forward": PrepareModuleInput(input_layouts=(ts.Shard(1),), desired_input_layouts=(ts.Replicate(),)),
        "feed_forward.w1": ColwiseParallel(),
        "feed_forward.w2": RowwiseParallel(output_layouts=ts.Shard(1)),
        "feed_forward.w3": ColwiseParallel(),
    }
    plan.update({"layers.*." + path: style for path, style in block.items()})
    return plan


def main():
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))

        # The dense model and the parallel one start from the same parameters.
        with ts.maybe_disable_local_mode():
            ts.manual_seed(2026)
            dense = Transformer(model_args())
            ts.manual_seed(2026)
            model = Transformer(model_args())

        parallelize_module(model, mesh["tp"], tp_plan())
        for layer in model.layers:
            fully_shard(layer, mesh=mesh["dp"])
        fully_shard(model, mesh=mesh["dp"])

        dense_optimizer = AdamW(dense.parameters(), lr=3e-3)
        optimizer = AdamW(model.parameters(), lr=3e-3)
        dense_warmup = LinearLR(dense_optimizer, start_factor=0.25, total_iters=4)
        warmup = LinearLR(optimizer, start_factor=0.25, total_iters=4)

        all_close = True
        for step in range(STEPS):
            with ts.maybe_disable_local_mode():
                batch = ts.tensor(batch_tokens(step), dtype=ts.int64).view(2 * BATCH_PER_REPLICA, SEQ + 1)
            inputs = batch.narrow(1, 0, SEQ).contiguous()
            targets = batch.narrow(1, 1, SEQ).contiguous()

            with ts.maybe_disable_local_mode():
                dense_optimizer.zero_grad()
                dense_loss = cross_entropy(dense(inputs).view(-1, VOCAB), targets.view(-1))
                dense_loss.backward()
                clip_grad_norm_(dense.parameters(), 1.0)
                dense_optimizer.step()
                dense_warmup.step()
                dense_value = dense_loss.item()

            optimizer.zero_grad()
            # Each dp replica trains on its rows of the batch; both tp ranks of a replica see them.
            my_inputs = ts.distribute_tensor(inputs, mesh, [ts.Shard(0), ts.Replicate()]).to_local()
            my_targets = ts.distribute_tensor(targets, mesh, [ts.Shard(0), ts.Replicate()]).to_local()
            with loss_parallel():
                logits = model(my_inputs)
                target = ts.DTensor.from_local(my_targets, mesh["tp"], [ts.Replicate()])
                loss = cross_entropy(logits.view(-1, VOCAB), target.view(-1))
                loss.backward()
            clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            warmup.step()

            # The replicas' losses averaged: the loss of the whole batch (equal token counts).
            replica_loss = loss.to_local().detach().clone()
            ts.dist.all_reduce(replica_loss, op=ts.ReduceOp.AVG, group=mesh["dp"].get_group())
            parallel_value = replica_loss.reconcile().item()
            error = abs(parallel_value - dense_value) / abs(dense_value)
            all_close = all_close and error <= 1e-5
            print(f"step {step + 1:2d}  loss {parallel_value:.7f}  dense {dense_value:.7f}  "
                  f"relative difference {error:.2e}")

        checksum = 14695981039346656037
        for name, p in model.named_parameters():
            values = np.ascontiguousarray(p.full_tensor().reconcile().numpy(), dtype=np.float32)
            checksum = fnv1a(checksum, name.encode())
            checksum = fnv1a(checksum, values.tobytes())
        print(f"losses {'match' if all_close else 'DO NOT match'} the dense run within 1e-5 relative")
        print(f"final parameters checksum {checksum:016x}")
        return 0 if all_close else 1


if __name__ == "__main__":
    sys.exit(main())

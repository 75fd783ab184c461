"""Scenario 1: create a local tensor from per-rank tensors, compute per rank, reconcile,
and let a local mode make local tensors.

Each check compares what Tessera computed with a value computed independently (NumPy or plain
Python); main() prints every check and exits non-zero if any differs."""
import sys

import numpy as np

import tessera as ts
import tutorial_checks


def create_local_tensor():
    rank0 = np.array([[1, 2], [3, 4]], np.float32)
    rank1 = np.array([[5, 6], [7, 8]], np.float32)
    lt = ts.local_tensor({0: ts.tensor(rank0), 1: ts.tensor(rank1)})
    actual = (lt.shape, lt.ranks, lt.shard(0).tolist(), lt.shard(1).tolist())
    expected = ((2, 2), [0, 1], rank0.tolist(), rank1.tolist())
    return actual, expected


def arithmetic_operations():
    input0 = np.array([1, 2, 3], np.float32)
    input1 = np.array([4, 5, 6], np.float32)
    lt = ts.local_tensor({0: ts.tensor(input0), 1: ts.tensor(input1)})
    doubled = lt * 2  # the same op on every rank's shard (SPMD)
    added = lt + 10
    actual = (doubled.shard(0).tolist(), doubled.shard(1).tolist(), added.shard(0).tolist())
    expected = ((input0 * 2).tolist(), (input1 * 2).tolist(), (input0 + 10).tolist())
    return actual, expected


def reconcile_identical_shards():
    value = [1.0, 2.0, 3.0]
    lt = ts.local_tensor({r: ts.tensor(value) for r in range(3)})
    return lt.reconcile().tolist(), value


def use_local_mode(world_size=4):
    with ts.LocalMode(world_size):
        x = ts.ones(2, 3)  # a factory inside the mode makes a local tensor
        actual = (x.is_local, len(x.ranks), x.shape)
    return actual, (True, world_size, (2, 3))


def access_individual_shards():
    inputs = {0: [1.0, 2.0], 1: [3.0, 4.0], 2: [5.0, 6.0]}
    lt = ts.local_tensor({r: ts.tensor(v) for r, v in inputs.items()})
    return [lt.shard(0).tolist(), lt.shard(1).tolist()], [inputs[0], inputs[1]]


CHECKS = [create_local_tensor, arithmetic_operations, reconcile_identical_shards, use_local_mode,
          access_individual_shards]


def main():
    return tutorial_checks.run(CHECKS)


if __name__ == "__main__":
    sys.exit(main())

"""Scenario 2: collectives on world 3 -- all_reduce SUM, broadcast, all_gather,
reduce_scatter -- each compared with the same reduction done in NumPy.

main() prints every check and exits non-zero if any differs."""
import sys

import numpy as np

import tessera as ts
import tutorial_checks

WORLD = 3


def local_of(arrays):
    return ts.local_tensor({r: ts.tensor(a) for r, a in arrays.items()})


def all_reduce_sum():
    arrays = {r: np.array([[1, 2], [3, 4]], np.float32) + 4 * r for r in range(WORLD)}
    lt = local_of(arrays)
    ts.dist.all_reduce(lt, op=ts.ReduceOp.SUM)
    return lt.reconcile().tolist(), sum(arrays.values()).tolist()  # every rank holds the same sum


def broadcast_from_rank(src=0):
    arrays = {r: np.array([10, 20, 30], np.float32) + 30 * r for r in range(WORLD)}
    lt = local_of(arrays)
    ts.dist.broadcast(lt, src=src)
    return lt.reconcile().tolist(), arrays[src].tolist()


def all_gather_tensors():
    arrays = {r: np.array([[1, 2]], np.float32) + 2 * r for r in range(WORLD)}
    lt = local_of(arrays)
    outputs = [ts.zeros_like(lt) for _ in range(WORLD)]
    ts.dist.all_gather(outputs, lt)  # fills the caller's list in place
    return [out.reconcile().tolist() for out in outputs], [arrays[i].tolist() for i in range(WORLD)]


def reduce_scatter_tensors():
    # Rank r holds [[1,2],[3,4],[5,6]] * (r + 1); row i of the sum goes to rank i.
    base = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    arrays = {r: base * (r + 1) for r in range(WORLD)}
    inp = local_of(arrays)
    out = local_of({r: np.zeros((1, 2), np.float32) for r in range(WORLD)})
    ts.dist.reduce_scatter_tensor(out, inp, op=ts.ReduceOp.SUM)
    total = sum(arrays.values())
    return [out.shard(r).tolist() for r in range(WORLD)], [total[r:r + 1].tolist() for r in range(WORLD)]


CHECKS = [all_reduce_sum, broadcast_from_rank, all_gather_tensors, reduce_scatter_tensors]


def main():
    return tutorial_checks.run(CHECKS)


if __name__ == "__main__":
    sys.exit(main())

"""Tutorial scenario 4: shards of different sizes give per-rank (local int) dimensions;
local ints compute per rank; 10 rows over 3 ranks round-trip exactly with either shard layout."""
import sys

import numpy as np

import tessera as ts
import tutorial_checks
from tutorial_checks import plain


def chunk_rows(n, k):
    """torch.chunk sizes: f = ceil(n / k); shard i gets max(0, min(f, n - f*i))."""
    f = -(-n // k)
    return [max(0, min(f, n - f * i)) for i in range(k)]


def balanced_rows(n, k):
    """Balanced sizes: the first n % k shards get one extra."""
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def create_uneven_shards():
    shards = {0: [[1, 2, 3, 4]], 1: [[5, 6, 7, 8], [9, 10, 11, 12]], 2: [[13, 14, 15, 16]]}
    lt = ts.local_tensor({r: plain(rows) for r, rows in shards.items()})
    rows = lt.shape[0]
    actual = (isinstance(rows, ts.LocalInt), rows.values() if isinstance(rows, ts.LocalInt) else None)
    return actual, (True, {r: len(rows) for r, rows in shards.items()})


def local_int_arithmetic():
    a, b = {0: 10, 1: 20, 2: 30}, {0: 1, 1: 2, 2: 3}
    la, lb = ts.LocalInt(a), ts.LocalInt(b)
    actual = ((la + lb).values(), (la * lb).values())
    return actual, ({r: a[r] + b[r] for r in a}, {r: a[r] * b[r] for r in a})


def dtensor_uneven_sharding(rows=10, world=3):
    original = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    with ts.LocalMode(world):
        mesh = ts.init_device_mesh("cpu", (world,))
        by_chunk = ts.distribute_tensor(plain(original), mesh, [ts.Shard(0)])
        balanced = ts.distribute_tensor(plain(original), mesh, [ts.BalancedShard(0)])
        sizes = ([by_chunk.to_local().shard(r).shape[0] for r in range(world)],
                 [balanced.to_local().shard(r).shape[0] for r in range(world)])
        gathered = tuple(np.array(d.full_tensor().reconcile().tolist()) for d in (by_chunk, balanced))
    return (sizes, gathered), ((chunk_rows(rows, world), balanced_rows(rows, world)), (original, original))


CHECKS = [create_uneven_shards, local_int_arithmetic, dtensor_uneven_sharding]


def main():
    return tutorial_checks.run(CHECKS)


if __name__ == "__main__":
    sys.exit(main())

"""Tutorial scenario 3: DTensors on a 1-d mesh of 4 ranks -- distribute and gather back,
a sharded matmul and a linear layer, each checked against the same computation in NumPy."""
import sys

import numpy as np

import tessera as ts
import tutorial_checks
from tutorial_checks import plain, value


def distribute_and_verify():
    expected = np.arange(16, dtype=np.float32).reshape(4, 4)
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        sharded = ts.distribute_tensor(plain(expected), mesh, [ts.Shard(0)])  # rank r holds row r
        replicated = ts.distribute_tensor(plain(expected), mesh, [ts.Replicate()])
        actual = (value(sharded.full_tensor().reconcile()), value(replicated.to_local().reconcile()))
    return actual, (expected, expected)


def dtensor_matmul(seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((8, 4)).astype(np.float32), rng.standard_normal((4, 6)).astype(np.float32)
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        product = ts.distribute_tensor(plain(a), mesh, [ts.Shard(0)]) @ ts.distribute_tensor(plain(b), mesh, [ts.Replicate()])
        return value(product.full_tensor().reconcile()), a.astype(np.float64) @ b


def dtensor_linear_layer(seed=1):
    rng = np.random.default_rng(seed)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((16, 8), (8, 4), (4,)))
    with ts.LocalMode(4):
        mesh = ts.init_device_mesh("cpu", (4,))
        dx = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0)])
        dw = ts.distribute_tensor(plain(w), mesh, [ts.Replicate()])
        db = ts.distribute_tensor(plain(b), mesh, [ts.Replicate()])
        y = ts.relu(ts.matmul(dx, dw) + db)  # stays S(0) throughout
        return value(y.full_tensor().reconcile()), np.maximum(x.astype(np.float64) @ w + b, 0)


CHECKS = [distribute_and_verify, dtensor_matmul, dtensor_linear_layer]


def main():
    return tutorial_checks.run(CHECKS)


if __name__ == "__main__":
    sys.exit(main())

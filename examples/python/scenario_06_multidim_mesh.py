"""Tutorial scenario 6: multi-dimensional meshes -- a 2-d (dp, tp) mesh, hybrid data +
tensor parallelism on it, and a 3-d (pp, dp, tp) mesh over 24 ranks."""
import math
import sys

import numpy as np

import tessera as ts
import tutorial_checks
from tutorial_checks import plain, value


def create_2d_mesh():
    shape, names = (4, 2), ("dp", "tp")
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", shape, mesh_dim_names=names)
        return (mesh.shape, mesh.mesh_dim_names, mesh.size()), (shape, names, math.prod(shape))


def hybrid_parallelism(seed=2):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 12)).astype(np.float32)
    with ts.LocalMode(8):
        mesh = ts.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
        # Batch split over dp, weight columns over tp: the product is [S(0), S(1)].
        dx = ts.distribute_tensor(plain(x), mesh, [ts.Shard(0), ts.Replicate()])
        dw = ts.distribute_tensor(plain(w), mesh, [ts.Replicate(), ts.Shard(1)])
        return value(ts.matmul(dx, dw).full_tensor().reconcile()), x.astype(np.float64) @ w


def create_3d_mesh(seed=3):
    shape, names = (2, 3, 4), ("pp", "dp", "tp")
    t = np.random.default_rng(seed).standard_normal((8, 16, 32)).astype(np.float32)
    with ts.LocalMode(24):
        mesh = ts.init_device_mesh("cpu", shape, mesh_dim_names=names)
        # 8 rows over dp (3 ranks) is uneven: 3, 3, 2.
        dt = ts.distribute_tensor(plain(t), mesh, [ts.Replicate(), ts.Shard(0), ts.Shard(2)])
        actual = ((mesh.shape, mesh.mesh_dim_names, mesh.size()), value(dt.full_tensor().reconcile()))
    return actual, ((shape, names, math.prod(shape)), t.astype(np.float64))


CHECKS = [create_2d_mesh, hybrid_parallelism, create_3d_mesh]


def main():
    return tutorial_checks.run(CHECKS)


if __name__ == "__main__":
    sys.exit(main())

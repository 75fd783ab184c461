"""Scenario 5: computations that differ per rank (non-SPMD) -- rank_map, tensor_map,
disabling the mode, and run_per_rank.

main() prints every check and exits non-zero if any differs."""
import sys

import tessera as ts
import tutorial_checks

WORLD = 4


def kind_of(t):
    return "local" if t.is_local else "plain"


def use_rank_map(world_size=WORLD):
    with ts.LocalMode(world_size):
        lt = ts.rank_map(lambda rank: ts.full((2, 3), float(rank)))  # shard r filled with r
    actual = {r: lt.shard(r)[0][0].item() for r in range(world_size)}
    return actual, {r: float(r) for r in range(world_size)}


def use_tensor_map(world_size=WORLD):
    with ts.LocalMode(world_size):
        lt = ts.rank_map(lambda rank: ts.ones(2, 2) * (rank + 1))
        scaled = ts.tensor_map(lt, lambda rank, shard: shard * (rank + 1))
    actual = {r: scaled.shard(r)[0][0].item() for r in range(world_size)}
    return actual, {r: float((r + 1) ** 2) for r in range(world_size)}


def disable_mode_temporarily(world_size=WORLD):
    with ts.LocalMode(world_size) as mode:
        inside = kind_of(ts.ones(2, 2))
        with mode.disable():
            disabled = kind_of(ts.ones(2, 2))
    return (inside, disabled), ("local", "plain")


def use_maybe_disable():
    def create():
        with ts.maybe_disable_local_mode():
            return ts.tensor([1.0, 2.0, 3.0])

    outside = kind_of(create())
    with ts.LocalMode(WORLD):
        inside = kind_of(create())
    return (outside, inside), ("plain", "plain")


def per_rank_data_offset(world_size=WORLD, chunk=4):
    # Each rank reads its own slice of a dataset: a non-SPMD function run once per rank.
    def data_offset(rank, size):
        return ts.arange(rank * size, (rank + 1) * size)

    with ts.LocalMode(world_size):
        slices = ts.run_per_rank(data_offset, ts.current_rank(), chunk)
    actual = {r: slices.shard(r).tolist() for r in range(world_size)}
    return actual, {r: list(range(r * chunk, (r + 1) * chunk)) for r in range(world_size)}


CHECKS = [use_rank_map, use_tensor_map, disable_mode_temporarily, use_maybe_disable, per_rank_data_offset]


def main():
    return tutorial_checks.run(CHECKS)


if __name__ == "__main__":
    sys.exit(main())

"""Per-op overhead of Tessera from Python: `a + b` and `a + 1.0` on 1-element
local tensors over 8 ranks, per rank per op, against PyTorch LocalTensor's same program when torch
is installed (bench/vs_pytorch/compare.py's add cases, run in this process). One thread each side.

    python bench/python/local_add_overhead.py [--reps N] [--cpu-time]

Prints one line per case: Tessera time, PyTorch time (or "torch not installed") and the ratio.
bench/vs_pytorch's C++ program times the same two cases in C++ (add_1elem_r8, add_scalar_r8):
    build/bin/bench_vs_pytorch --cases add_1elem_r8,add_scalar_r8 [--cpu-time]
"""
import argparse
import contextlib
import io
import os
import sys
import time

# Single-threaded on both sides, before either library starts its threads.
os.environ.setdefault("TESSERA_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import tessera as ts  # noqa: E402

RANKS = 8
# The wall clock, or with --cpu-time this process's CPU clock (both sides run on one thread, so on a
# busy machine the CPU clock leaves out the waits for a core).
clock = time.perf_counter


def tessera_seconds(scalar, reps):
    """Seconds per rank per op of `a + b` (or `a + 1.0`) on 1-element local tensors."""
    with ts.LocalMode(RANKS):
        a, b = ts.ones(1), ts.ones(1)
        c = a + 1.0 if scalar else a + b  # warm-up: the first call loads kernels and plans
        start = clock()
        for _ in range(reps):
            c = a + 1.0 if scalar else a + b
        elapsed = clock() - start
        if c.shard(RANKS - 1).item() != 2.0:
            raise SystemExit("wrong result: 1 + 1 on the last rank is not 2")
    return elapsed / reps / RANKS


def torch_seconds(case, cpu_time):
    """PyTorch LocalTensor's time for the same case, or None when torch is not installed."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vs_pytorch"))
    import compare

    compare.require_torch()
    compare.clock = time.process_time if cpu_time else time.perf_counter
    # compare.py reports each call's time on stdout for its parent process; nobody reads it here.
    with contextlib.redirect_stdout(io.StringIO()):
        seconds, _ = compare.torch_case(case, warmup=1, reps=2000, budget=5.0)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20000, help="timed ops per case (default 20000)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with this process's CPU clock instead of the wall clock (for a busy machine)")
    args = parser.parse_args()
    global clock
    clock = time.process_time if args.cpu_time else time.perf_counter
    print(f"{'case':<22}{'Tessera (Python)':>18}{'PyTorch LocalTensor':>22}{'ratio':>10}")
    for name, scalar, torch_case in [("a + b, 8 ranks", False, "add_1elem_r8"),
                                      ("a + 1.0, 8 ranks", True, "add_scalar_r8")]:
        ours = tessera_seconds(scalar, args.reps)
        theirs = torch_seconds(torch_case, args.cpu_time)
        other = "torch not installed" if theirs is None else f"{theirs * 1e6:.2f} us"
        ratio = "" if theirs is None else f"{theirs / ours:.1f}x"
        print(f"{name:<22}{ours * 1e9:>15.0f} ns{other:>22}{ratio:>10}")


if __name__ == "__main__":
    main()

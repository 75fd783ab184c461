#!/usr/bin/env python3
"""Tessera against PyTorch LocalTensor, side by side, one thread each.

Runs every case twice: in PyTorch (LocalTensorMode / LocalTensor, DTensor on a "fake" process
group of the case's world size) and in Tessera (the bench_vs_pytorch program, built from
tessera_cases.cpp beside this file), case by case: each case's two runs follow each other (which
side goes first alternates), so a slow phase of a shared machine falls on both sides of a row. Then
it prints one table: case, PyTorch time, Tessera time and how many times faster Tessera is. The two sides run the same programs; keep CASES below and
tessera_cases.cpp in step.

Needs torch with torch.distributed._local_tensor (PyTorch 2.9 or later). Never run by CI.

    python3 bench/vs_pytorch/compare.py [build/bin/bench_vs_pytorch] [--quick] [--cases r8,r64]

Each PyTorch case runs in a child process of its own (its own process group and world size)
under --timeout; one that does not finish is shown as a lower bound (">120 s"). Timed iterations
stop early once a case has spent --budget seconds, so slow PyTorch cases cost seconds, not hours.
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BINARY = os.path.join(HERE, "..", "..", "build", "bin", "bench_vs_pytorch")

# Single-threaded kernels on both sides; set before torch is imported (children inherit them).
SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TESSERA_THREADS": "1"}


# ----------------------------------------------------------------------------------------------
# The PyTorch side. Everything that touches torch is imported inside the child process only.


def require_torch():
    """Imports what the PyTorch cases need, or exits with a message saying what is missing."""
    try:
        import torch  # noqa: F401
    except ImportError as e:
        sys.exit(f"compare.py: PyTorch is not installed ({e}); install torch (2.9 or later) to compare")
    try:
        import torch.distributed as dist
        from torch.distributed._local_tensor import LocalTensorMode  # noqa: F401
        from torch.testing._internal.distributed.fake_pg import FakeStore  # noqa: F401
    except ImportError as e:
        sys.exit(f"compare.py: torch {torch.__version__} lacks torch.distributed._local_tensor or the fake "
                 f"process group ({e}); LocalTensor needs PyTorch 2.9 or later built with distributed support")
    if not dist.is_available():
        sys.exit(f"compare.py: torch {torch.__version__} was built without torch.distributed")


# time.perf_counter, or time.process_time under --cpu-time (as bench_vs_pytorch --cpu-time).
clock = time.perf_counter


def mean_seconds(warmup, reps, budget, body):
    """Calls body(0), body(1), ...: `warmup` untimed, then up to `reps` timed, stopping once the
    timed ones have taken `budget` seconds (at least one always runs). Returns (mean, note).
    A warm-up call that alone takes `budget` is the measurement (noted "cold"): one-time costs are
    lost in it, and a case that slow should not run twice. Each call's time is printed as it ends,
    so the parent still learns something from a child it had to stop."""
    print(f"begin {time.time():.3f}", flush=True)  # set-up done: from here on, calls only
    for i in range(warmup):
        start = clock()
        body(i)
        elapsed = clock() - start
        print(f"warm {elapsed:.9g}", flush=True)
        if elapsed >= budget:
            return elapsed, "1 it, cold"
    start = clock()
    done = 0
    while done < reps:
        before = clock()
        body(warmup + done)
        done += 1
        now = clock()
        print(f"iter {now - before:.9g}", flush=True)
        if now - start >= budget:
            break
    return (clock() - start) / done, f"{done} it"


def check(ok, what):
    if not ok:
        raise RuntimeError(f"wrong result: {what}")


def torch_case(name, warmup, reps, budget):
    """Runs one case in this process and returns (seconds per iteration, note)."""
    import types

    import torch
    import torch.distributed as dist
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.testing._internal.distributed.fake_pg import FakeStore

    torch.set_num_threads(1)
    # PyTorch takes the inter-op thread count once per process; a second case in the same process
    # (bench/python/local_add_overhead.py runs two) finds it set already. Reading it starts no threads.
    if torch.get_num_interop_threads() != 1:
        torch.set_num_interop_threads(1)
    spec = CASES[name]
    world = spec["ranks"]
    # LocalTensor's collectives run on a process group; the fake backend gives one of any world
    # size in this single process (as PyTorch's own LocalTensor tests do).
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    try:
        with LocalTensorMode(world) as mode:
            t = types.SimpleNamespace(torch=torch, dist=dist, mode=mode, world=world, iterations=warmup + reps,
                                      init_device_mesh=init_device_mesh, distribute_tensor=distribute_tensor,
                                      Shard=Shard, Replicate=Replicate)
            return spec["torch"](t, lambda body: mean_seconds(warmup, reps, budget, body))
    finally:
        dist.destroy_process_group()


# Each case below takes `t` (torch and the names it uses, the mode, the world size, the most calls
# of body it may see) and `timed`
# (runs body(i) as mean_seconds does), builds its untimed inputs, times its program and checks the
# last result as tessera_cases.cpp does.


def _add_one_element(scalar):
    def run(t, timed):
        a, b = t.torch.ones(1), t.torch.ones(1)
        out = {}

        def body(_):
            out["c"] = a + 1.0 if scalar else a + b

        seconds, note = timed(body)
        check(out["c"]._local_tensors[t.world - 1].item() == 2.0, "1 + 1 on the last rank")
        return seconds / t.world, note  # per rank per op

    return run


def _distinct_inputs(t, count):
    """Shard r of input i is full(16, r + i): distinct per rank and per input, as in C++. rank_map
    calls its function with the mode disabled: a factory called inside the mode would make a
    local tensor of every rank per shard (a LocalTensor of LocalTensors, W times the work)."""
    return [t.mode.rank_map(lambda r, i=i: t.torch.full((16,), float(r + i))) for i in range(count)]


def _all_reduce16(t, timed):
    inputs = _distinct_inputs(t, t.iterations)
    last = {}

    def body(i):
        t.dist.all_reduce(inputs[i], op=t.dist.ReduceOp.SUM)
        last["i"] = i

    seconds, note = timed(body)
    i = last["i"]
    expected = t.world * (t.world - 1) / 2 + t.world * i
    check(inputs[i]._local_tensors[t.world // 2][15].item() == expected, "all_reduce sum")
    return seconds, note


def _all_gather16(t, timed):
    lt = _distinct_inputs(t, 1)[0]
    outputs = [t.torch.zeros_like(lt) for _ in range(t.world)]
    seconds, note = timed(lambda i: t.dist.all_gather(outputs, lt))
    check(outputs[t.world - 1]._local_tensors[0][15].item() == t.world - 1, "all_gather slot")
    return seconds, note


def _plain_randn(t, *shapes):
    """Plain tensors (mode disabled) from one seeded generator."""
    with t.mode.disable():
        g = t.torch.Generator().manual_seed(0)
        return [t.torch.randn(*shape, generator=g) for shape in shapes]


def _linear(t, timed):
    torch, Shard, Replicate, distribute = t.torch, t.Shard, t.Replicate, t.distribute_tensor
    mesh = t.init_device_mesh("cpu", (t.world,))
    px, pw, pb = _plain_randn(t, (64, 1024), (1024, 1024), (1024,))
    x, w, b = distribute(px, mesh, [Shard(0)]), distribute(pw, mesh, [Replicate()]), distribute(pb, mesh, [Replicate()])
    out = {}

    def body(_):
        out["y"] = (torch.matmul(x, w) + b).full_tensor()

    seconds, note = timed(body)
    check(tuple(out["y"]._local_tensors[0].shape) == (64, 1024), "linear output shape")
    return seconds, note


def _tp_mlp(t, timed):
    torch, Shard, Replicate, distribute = t.torch, t.Shard, t.Replicate, t.distribute_tensor
    mesh = t.init_device_mesh("cpu", (4, 2), mesh_dim_names=("dp", "tp"))
    out = {}

    def body(_):
        torch.manual_seed(0)  # one seed on every rank, as Tessera's mode.manual_seed(0)
        x, w1, w2 = torch.randn(64, 1024), torch.randn(1024, 4096), torch.randn(4096, 1024)
        dx = distribute(x, mesh, [Shard(0), Replicate()])
        dw1 = distribute(w1, mesh, [Replicate(), Shard(1)])
        dw2 = distribute(w2, mesh, [Replicate(), Shard(0)])
        out["y"] = torch.matmul(torch.relu(torch.matmul(dx, dw1)), dw2).full_tensor()

    seconds, note = timed(body)
    check(tuple(out["y"]._local_tensors[7].shape) == (64, 1024), "MLP output shape")
    return seconds, note


def _redistribute_3d(t, timed):
    Shard, Replicate = t.Shard, t.Replicate
    mesh = t.init_device_mesh("cpu", (2, 2, 2))
    (plain,) = _plain_randn(t, (64, 64))
    source = t.distribute_tensor(plain, mesh, [Shard(0), Shard(1), Replicate()])
    out = {}

    def body(_):
        out["d"] = source.redistribute(mesh, [Replicate(), Shard(0), Shard(1)])

    seconds, note = timed(body)
    check(tuple(out["d"].to_local()._local_tensors[0].shape) == (32, 32), "redistributed shard shape")
    return seconds, note


def _replicate(t, timed):
    mesh = t.init_device_mesh("cpu", (t.world,))
    with t.mode.disable():
        plain = t.torch.arange(1024).float()
    out = {}

    def body(_):
        out["d"] = t.distribute_tensor(plain, mesh, [t.Replicate()])

    seconds, note = timed(body)
    check(out["d"].to_local()._local_tensors[t.world - 1].sum().item() == 1023 * 1024 / 2, "replicated sum")
    return seconds, note


def _distribute_full(rows, cols):
    def run(t, timed):
        mesh = t.init_device_mesh("cpu", (rows, cols))
        with t.mode.disable():
            plain = t.torch.arange(64 * 64).float().reshape(64, 64)
        out = {}

        def body(_):
            out["f"] = t.distribute_tensor(plain, mesh, [t.Shard(0), t.Shard(1)]).full_tensor()

        seconds, note = timed(body)
        with t.mode.disable():
            check(t.torch.equal(out["f"]._local_tensors[t.world - 1], plain), "full_tensor of the last rank")
        return seconds, note

    return run


# name -> world size, PyTorch program, timed iterations (full run, --quick). PyTorch is expected
# to be the slower side, so its counts are smaller than Tessera's; --budget caps them further.
CASES = {}
for _ranks in (8, 64):
    CASES[f"add_1elem_r{_ranks}"] = {"ranks": _ranks, "torch": _add_one_element(False), "reps": 2000, "quick": 200}
    CASES[f"add_scalar_r{_ranks}"] = {"ranks": _ranks, "torch": _add_one_element(True), "reps": 2000, "quick": 200}
CASES["all_reduce16_r8"] = {"ranks": 8, "torch": _all_reduce16, "reps": 500, "quick": 50}
CASES["all_gather16_r8"] = {"ranks": 8, "torch": _all_gather16, "reps": 500, "quick": 50}
CASES["linear_r8"] = {"ranks": 8, "torch": _linear, "reps": 10, "quick": 2}
CASES["tp_mlp_r8"] = {"ranks": 8, "torch": _tp_mlp, "reps": 2, "quick": 1}
CASES["redistribute3d_r8"] = {"ranks": 8, "torch": _redistribute_3d, "reps": 100, "quick": 10}
CASES["replicate1024_r1024"] = {"ranks": 1024, "torch": _replicate, "reps": 5, "quick": 1}
for _ranks in (256, 1024, 4096):
    CASES[f"all_reduce16_r{_ranks}"] = {"ranks": _ranks, "torch": _all_reduce16, "reps": 5, "quick": 1}
for _rows, _cols in ((16, 16), (64, 16), (64, 64)):
    CASES[f"dist_full64x64_r{_rows * _cols}"] = {"ranks": _rows * _cols, "torch": _distribute_full(_rows, _cols),
                                                 "reps": 3, "quick": 1}


# ----------------------------------------------------------------------------------------------
# The driver: runs both sides and prints the table.


def chosen(name, filters):
    """The same rule as bench_vs_pytorch's --cases: a name containing any of the words."""
    return not filters or any(word in name for word in filters)


def tessera_descriptions(binary, filters):
    """{case: what one iteration is} of the Tessera program's cases that the filters choose."""
    if not os.access(binary, os.X_OK):
        sys.exit(f"compare.py: no Tessera program at {binary}; build it with "
                 f"`cmake --build build --target bench_vs_pytorch` or pass its path")
    common = ["--cases", ",".join(filters)] if filters else []
    listing = subprocess.run([binary, "--list"] + common, capture_output=True, text=True, check=True).stdout
    return {line.split("\t")[0]: line.split("\t")[1] for line in listing.splitlines() if line}


def run_tessera(binary, name, args, descriptions):
    """Runs one case of bench_vs_pytorch (--case: the exact name); returns (seconds or None, wall).
    A case the program does not have (not in its listing, `descriptions`) is (None, 0)."""
    if name not in descriptions:
        return None, 0.0
    command = [binary, "--case", name] + (["--quick"] if args.quick else []) + \
        (["--cpu-time"] if args.cpu_time else [])
    if args.warmup is not None:
        command += ["--warmup", str(args.warmup)]
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **SINGLE_THREAD_ENV})
    wall = time.perf_counter() - start
    seconds = None
    for line in run.stdout.splitlines():
        if line.startswith("#"):
            if "failed" in line:
                print(line, file=sys.stderr)
            continue
        fields = line.split("\t")
        if len(fields) >= 2 and fields[0] == name:
            seconds = float(fields[1])
    if run.returncode != 0:
        print(f"compare.py: {' '.join(command)} exited with {run.returncode}\n{run.stderr}", file=sys.stderr)
    return seconds, wall


def run_torch(name, args):
    """Runs one PyTorch case in a child process; returns (seconds or None, note, is lower bound)."""
    spec = CASES[name]
    warmup = 1 if args.warmup is None else args.warmup
    reps = spec["quick"] if args.quick else spec["reps"]
    command = [sys.executable, os.path.abspath(__file__), "--torch-case", name, "--warmup", str(warmup),
               "--reps", str(reps), "--budget", str(args.budget)] + (["--cpu-time"] if args.cpu_time else [])
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                             env={**os.environ, **SINGLE_THREAD_ENV})
    except subprocess.TimeoutExpired as stopped:
        return timed_out(stopped, time.time())
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"compare.py: PyTorch case {name} failed: {last}", file=sys.stderr)
        return None, "failed", False
    _, seconds, note = run.stdout.strip().splitlines()[-1].split(" ", 2)
    return float(seconds), note, False


def timed_out(stopped, now):
    """What a child stopped at --timeout still tells: the calls it finished (a cold measurement),
    or else a lower bound, how long its first call had run when it was stopped."""
    output = stopped.stdout or ""
    if isinstance(output, bytes):  # TimeoutExpired keeps bytes whatever text= said
        output = output.decode(errors="replace")
    lines = output.split("\n")
    finished = [float(line.split()[1]) for line in lines if line.startswith(("warm ", "iter "))]
    if finished:
        return sum(finished) / len(finished), f"{len(finished)} it, cold, stopped", False
    begun = [float(line.split()[1]) for line in lines if line.startswith("begin ")]
    if not begun:  # the set-up (imports, mesh, inputs) did not even finish: no bound on a call
        return None, f"set-up >{stopped.timeout:g} s", False
    return now - begun[0], "stopped", True


def human(seconds):
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def times(ratio):
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"


def print_table(rows, markdown):
    header = ("case", "PyTorch LocalTensor", "Tessera", "PyTorch / Tessera")
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join([" --- "] + [" ---: "] * 3) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    for row in [header] + rows:
        print("  ".join([row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:])]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", nargs="?", default=DEFAULT_BINARY, help="bench_vs_pytorch (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="fewer timed iterations on both sides")
    parser.add_argument("--cases", default="", help="comma-separated words; runs the cases whose name contains one")
    parser.add_argument("--warmup", type=int, help="untimed calls per case on both sides (default 1)")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds after which a PyTorch case stops timing")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds after which a PyTorch case is abandoned")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with each process's CPU clock, not the wall clock (for a busy machine)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--torch-case", help=argparse.SUPPRESS)  # internal: the child process
    parser.add_argument("--reps", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.torch_case:
        global clock
        clock = time.process_time if args.cpu_time else time.perf_counter
        for key, value in SINGLE_THREAD_ENV.items():
            os.environ.setdefault(key, value)
        require_torch()
        seconds, note = torch_case(args.torch_case, args.warmup, args.reps, args.budget)
        print(f"result {seconds:.9g} {note}")
        return

    require_torch()
    import torch

    filters = [word for word in args.cases.split(",") if word]
    names = [name for name in CASES if chosen(name, filters)]
    if not names:
        sys.exit(f"compare.py: --cases {args.cases!r} matched no case; the cases are: {' '.join(CASES)}")

    binary = os.path.abspath(args.binary)
    descriptions = tessera_descriptions(binary, filters)
    # Case by case, the two sides one after the other (alternating which goes first), so that a
    # slow phase of a shared machine falls on both sides of a row rather than on one side's run.
    rows = []
    tessera_wall = 0.0
    for index, name in enumerate(names):
        print(f"{name}: Tessera and PyTorch ...", file=sys.stderr, flush=True)
        tessera_first = index % 2 == 0
        if tessera_first:
            ours, wall = run_tessera(binary, name, args, descriptions)
        theirs, note, lower_bound = run_torch(name, args)
        if not tessera_first:
            ours, wall = run_tessera(binary, name, args, descriptions)
        tessera_wall += wall
        if theirs is None:
            cell = note
        else:
            cell = (">" if lower_bound else "") + human(theirs) + (" (cold)" if "cold" in note else "")
        ratio = "-" if theirs is None or not ours else (">" if lower_bound else "") + times(theirs / ours)
        rows.append((name, cell, human(ours) if ours else "failed", ratio))

    print(f"PyTorch {torch.__version__} LocalTensor vs Tessera, one thread each "
          f"({'quick' if args.quick else 'full'} run, {'CPU' if args.cpu_time else 'wall'} time; "
          f"Tessera programs {tessera_wall:.1f} s wall in all)")
    print_table(rows, args.markdown)
    print()
    for name in names:
        print(f"  {name}: {descriptions.get(name, 'not in the Tessera program')}")


if __name__ == "__main__":
    main()

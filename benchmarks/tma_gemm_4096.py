"""The real TMA GEMM (the kernel builder's tma_gemm_cg1, which examples/tma_gemm_cg1.mlir holds:
tests/test_kernels.py) at 4096 x 4096 x 4096 through the machine model
at the tmem level, hazard checks on (the strict policy): 512 output tiles of 128 x 256, K = 4096
(64 blocks of 64, four MMAs each: 131 072 tcgen05.mma), on a persistent grid of 148 CTAs (one
per SM of a B200), each CTA's tiles t = blockIdx.x + i * 148.

Goal (issue 14): <= 10 s on one core.

Prints the wall time of `run_kernel` (and its CPU time: on a shared machine the two differ)
and where the wall time (with `--cpu`, the CPU time) went: the MMAs (`tcgen05.mma`: operand
gather; their products are deferred to the accumulator's next read: a part of their
own), the TMA box loads (the box, its race checks, the transaction
bytes), the epilogue (its `tcgen05.ld` of the accumulator and its stores of C), and the rest
(control flow, address arithmetic, barriers, the scheduler). The parts are timed by wrapping
the model's functions for those ops, so they include their hazard checks. The result is
checked against numpy's f64 product within the f32 summation bound (Higham, section 4.2).
The run keeps no event log (`keep_log=False`: it would grow with the launch); the default
step limit (10^7 warp-instructions) holds it.

One core: run it with OPENBLAS_NUM_THREADS=1 (numpy's BLAS threads would otherwise share the
MMAs' products).

Usage: OPENBLAS_NUM_THREADS=1 python benchmarks/tma_gemm_4096.py [--m 4096 --n 4096 --k 4096 --grid 148] [--cpu]
       (smaller shapes for a quick look: --m 1024 --n 1024 --k 1024 --grid 8)
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.interpreter import bulk_copy, run_kernel
from xdsl_tmem.interpreter import llvm as llvm_impls
from xdsl_tmem.interpreter import nvvm as nvvm_impls
from xdsl_tmem.interpreter.tcgen05 import DeferredProduct
from xdsl_tmem.interpreter.tma import parse_tensor_map_arg
from xdsl_tmem.kernels import EXAMPLE_CONFIGS, build_matmul

GOAL_SECONDS = 10.0
PARTS = {
    "MMAs (tcgen05.mma)": [(nvvm_impls, "tcgen05_mma")],
    "MMA products (deferred, at the ld)": [(DeferredProduct, "apply")],
    "TMA box loads": [(bulk_copy, "tensor_load")],
    "epilogue (tcgen05.ld, C stores)": [(nvvm_impls, "tmem_ld"), (llvm_impls, "store")],
}


def _timed(
    seconds: dict[str, float], part: str, module: Any, name: str, clock: Callable[[], float], active: list[str]
) -> None:
    """Replace `module.name` by a wrapper adding its time (`clock`) to `seconds[part]` (the
    interpreter's impls look these functions up in their module at each call), less the
    time of the parts it calls (`active`: the parts running; a deferred MMA product is
    computed inside the tcgen05.ld that reads it)."""
    inner: Callable[..., Any] = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        active.append(part)
        try:
            return inner(*args, **kwargs)
        finally:
            active.pop()
            spent = clock() - start
            seconds[part] += spent
            if active:
                seconds[active[-1]] -= spent

    setattr(module, name, wrapper)


def _arguments(m: int, n: int, k: int) -> tuple[dict[str, Any], NDArray[np.float16], NDArray[np.float16]]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(np.float16)
    b = rng.standard_normal((n, k), dtype=np.float32).astype(np.float16)
    args: dict[str, Any] = {
        "a": a,
        "b": b,
        "tma_a": parse_tensor_map_arg(f"tensormap:a:f16:{k}x{m}:{2 * k}:64x128:swizzle=128B"),
        "tma_b": parse_tensor_map_arg(f"tensormap:b:f16:{k}x{n}:{2 * k}:64x256:swizzle=128B"),
        "c": np.zeros((m, n), np.float32),
        "m": m,
        "n": n,
        "k": k,
    }
    return args, a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--k", type=int, default=4096)
    parser.add_argument("--grid", type=int, default=148)
    parser.add_argument("--no-check", action="store_true", help="skip the comparison with numpy")
    parser.add_argument(
        "--cpu", action="store_true", help="time the parts in CPU time (a loaded machine: wall time is others' too)"
    )
    opts = parser.parse_args()
    m, n, k = opts.m, opts.n, opts.k
    if m % 128 or n % 256 or k % 64:
        parser.error("the example takes M a multiple of 128, N of 256 and K of 64")
    module = build_matmul(EXAMPLE_CONFIGS["tma_gemm_cg1"])  # verified
    args, a, b = _arguments(m, n, k)
    seconds = dict.fromkeys(PARTS, 0.0)
    active: list[str] = []
    for part, functions in PARTS.items():
        for owner, name in functions:
            _timed(seconds, part, owner, name, time.process_time if opts.cpu else time.perf_counter, active)
    tiles = (m // 128) * (n // 256)
    print(f"tma_gemm_cg1 {m}x{n}x{k}: {tiles} tiles of 128x256, K = {k} ({k // 64} blocks), grid {opts.grid}")
    start, cpu_start = time.perf_counter(), time.process_time()
    result = run_kernel(module, "tma_gemm_cg1", block=(192, 1, 1), grid=(opts.grid, 1, 1), args=args,
                        dynamic_shared_bytes=4 * (16384 + 32768), keep_log=False)  # fmt: skip
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    report = result.report
    verdict = "meets" if wall <= GOAL_SECONDS else "misses"
    print(f"  wall time {wall:.2f} s ({verdict} the {GOAL_SECONDS:.0f} s goal), CPU time {cpu:.2f} s")
    print(f"  {report.instructions} warp-instructions, {report.sync_points} sync points, {report.mma_count} MMAs")
    total = cpu if opts.cpu else wall
    print(f"  the parts in {'CPU' if opts.cpu else 'wall'} time:")
    for part, spent in seconds.items():
        print(f"  {part:34s} {spent:8.2f} s  {100 * spent / total:5.1f} %")
    rest = total - sum(seconds.values())
    print(f"  {'rest (control, barriers, scheduler)':34s} {rest:8.2f} s  {100 * rest / total:5.1f} %")
    print(f"  peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if not opts.no_check:
        exact = a.astype(np.float64) @ b.astype(np.float64).T
        u = 2.0**-24
        bound = (k - 1) * u / (1 - (k - 1) * u) * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T)
        c = result.outputs["c"]
        ok = bool(np.all(np.abs(c.astype(np.float64) - exact) <= bound))
        print(f"  C {'equals' if ok else 'DIFFERS FROM'} numpy's product within the f32 summation bound")


if __name__ == "__main__":
    main()

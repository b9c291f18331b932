"""Schedule exploration: states per second and wall time of `--explore exhaustive`, and
schedules per minute of `--explore random:N`.

Goal: exhaustive exploration of the 2-stage, 4-tile cg1 matmul (examples/matmul_cg1.mlir,
`ntiles=4`) in <= 10 s.

* states: distinct machine states (warps' frames and registers, memories, barriers,
  tensor-core queue) the breadth-first search reached after hashing; transitions: the
  turns it ran from them (one turn = one agent running to its next synchronisation op);
* the same kernel is explored at the tmem level and after `lower-tmem` (NVVM level);
* for scale, the search without the partial-order reduction on a single tile, which
  stops at the memory limit (the default 4 GiB for the frontier) without finishing;
* random exploration: seeded random schedules of the same 4-tile kernel, one full run each,
  in one process and spread over two worker processes (`jobs=2`, `--jobs 2`).

Usage: python benchmarks/exploration.py [random]  (random: that part alone; the jobs-2 figure needs
two idle cores)
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.interpreter import Launch
from xdsl_tmem.interpreter.explore import Exploration, explore_exhaustive, explore_random
from xdsl_tmem.kernels import EXAMPLE_CONFIGS, build_matmul
from xdsl_tmem.tools.run import make_context, parse_pipeline

TIME_GOAL = 10.0
RANDOM_SCHEDULES = 400
PARALLEL_JOBS = 2


def load(name: str, passes: str | None = None) -> ModuleOp:
    """The kernel builder's `examples/<name>` (tests/test_kernels.py checks the file holds it)."""
    ctx = make_context()
    module = build_matmul(EXAMPLE_CONFIGS[name.removesuffix(".mlir")])
    if passes is not None:
        parse_pipeline(passes, SourceMap()).apply(ctx, module)
    return module


def matmul_args(tiles: int, rows: int = 128, a: int = 4096, b: int = 8192) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    return {
        "out": np.zeros(tiles * rows * 256, np.float32),
        "a": rng.standard_normal(a).astype(np.float16),
        "b": rng.standard_normal(b).astype(np.float16),
        "ntiles": tiles,
    }


def line(label: str, result: Exploration) -> str:
    rate = result.explored / result.seconds if result.seconds else 0.0
    return (
        f"  {label:<50} {result.verdict:<10} {result.explored:>6} states {result.transitions:>6} transitions "
        f"{result.seconds:7.2f} s {rate:8,.0f} states/s"
    )


def main() -> None:
    if sys.argv[1:] != ["random"]:
        exhaustive()
    random()


def exhaustive() -> None:
    print("exhaustive exploration (breadth-first, state hashing, partial-order reduction):")
    module, cpu = load("matmul_cg1.mlir"), time.process_time()
    goal = explore_exhaustive(module, Launch.create("matmul_cg1", block=160, args=matmul_args(4)))
    cpu = time.process_time() - cpu
    print(line("cg1 matmul, 2 stages x 4 tiles, tmem level", goal) + f" (CPU {cpu:.3f} s)")
    lowered = explore_exhaustive(
        load("matmul_cg1.mlir", "lower-tmem"), Launch.create("matmul_cg1", block=160, args=matmul_args(4))
    )
    print(line("cg1 matmul, 2 stages x 4 tiles, after lower-tmem", lowered))
    cg2 = explore_exhaustive(
        load("matmul_cg2.mlir"), Launch.create("matmul_cg2", block=160, cluster=2, args=matmul_args(2, 256, 8192, 8192))
    )
    print(line("cg2 matmul (2-CTA cluster), 2 stages x 2 tiles", cg2))
    met = goal.complete and goal.seconds <= TIME_GOAL
    print(f"  goal: 2 stages x 4 tiles in <= {TIME_GOAL:.0f} s: {'met' if met else 'MISSED'} ({goal.seconds:.2f} s)")
    full = explore_exhaustive(
        load("matmul_cg1.mlir"), Launch.create("matmul_cg1", block=160, args=matmul_args(1)), partial_order=False
    )
    print(line("without the reduction: cg1 matmul, 1 tile", full) + f" (stopped: {full.limit} limit)")


def random() -> None:
    print(f"random exploration ({RANDOM_SCHEDULES} seeded schedules, --jobs 1 and {PARALLEL_JOBS}):")
    module = load("matmul_cg1.mlir")
    for jobs in (1, PARALLEL_JOBS):
        cpu = time.process_time()
        result = explore_random(
            module, Launch.create("matmul_cg1", block=160, args=matmul_args(4)), RANDOM_SCHEDULES, jobs=jobs
        )
        cpu = time.process_time() - cpu
        per_minute = result.explored / result.seconds * 60
        start = " (with the workers' start)" if jobs > 1 else ""
        # CPU time: what a shared machine's load does not inflate (of this process: jobs 1 only).
        own = f"; CPU {cpu:.2f} s = {result.explored / cpu * 60:,.0f} /min" if jobs == 1 else ""
        print(f"  cg1 matmul, 2 stages x 4 tiles, jobs {jobs}: {result.explored} schedules in {result.seconds:.2f} s"
              f"{start} = {per_minute:,.0f} schedules/min{own}")  # fmt: skip
    averages = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"  load average while measuring: {averages} on {os.cpu_count()} cores (other work shares the cores)")


if __name__ == "__main__":
    main()

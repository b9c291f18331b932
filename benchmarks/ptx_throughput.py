"""PTX-level throughput: our backend's PTX of the reference pipeline, and of a scalar
loop, on the machine model, next to the NVVM level on the same machine and inputs.

Issue 13's goal: >= 1,000,000 warp-instructions/s on the reference pipeline's PTX.

* warp-instructions: instructions executed, counted once per warp (a predicated-off
  instruction counts: the warp issues it);
* time: the run's `RunReport.wall_seconds` (decoding, once per launch before the run,
  is not in it), median of several runs;
* the reference pipeline (lit_tests/nvvm/ref_pipeline.mlir through `convert-to-ptx`),
  8 tiles, 16 MMAs with real numerics: a third of its instructions are `st.global.v4`
  stores of the epilogue, whose cost is the machine model's (the store and its race
  checks), shared with the NVVM level;
* the scalar loop: one warp, four integer operations per iteration, then the loop's
  compare and branch: the cost of the PTX level itself.

Usage: python benchmarks/ptx_throughput.py
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the MMAs' small matmuls: threads only add contention

import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.interpreter import RunResult, run_kernel
from xdsl_tmem.universe import make_context

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "lit_tests" / "nvvm" / "ref_pipeline.mlir"
TILES = 8
RATE_GOAL = 1_000_000
RUNS = 5

LOOP = """
llvm.func @kernel(%out: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %a = arith.addi %acc, %i : i32
    %b = arith.muli %a, %c3 : i32
    %c = arith.xori %b, %i : i32
    %d = arith.subi %c, %i : i32
    scf.yield %d : i32
  }
  llvm.store %r, %out : i32, !llvm.ptr<1>
  llvm.return
}
"""


def parse(text: str, ptx: bool) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    if ptx:
        ConvertToPtxPass().apply(ctx, module)
    return module


def median_run(module: ModuleOp, kernel: str, block: int, args: dict[str, Any]) -> tuple[RunResult, float]:
    runs = [run_kernel(module, kernel, block=block, args=args, keep_log=False) for _ in range(RUNS)]
    return runs[0], statistics.median(r.report.wall_seconds for r in runs)


def report(what: str, result: RunResult, seconds: float) -> float:
    rate = result.report.instructions / seconds
    print(f"  {what}: {result.report.instructions} warp-instructions in {seconds * 1e3:.1f} ms: {rate:,.0f} /s")
    return rate


def main() -> None:
    rng = np.random.default_rng(0)
    reference = {
        "arg0": np.zeros(TILES * 128 * 256, np.float32),
        "arg1": rng.standard_normal(128 * 32).astype(np.float16),
        "arg2": rng.standard_normal(256 * 32).astype(np.float16),
        "arg3": TILES,
    }
    print(f"reference pipeline, {TILES} tiles (median of {RUNS} runs each):")
    text = REFERENCE.read_text()
    start = time.perf_counter()
    ptx = parse(text, ptx=True)
    print(f"  parse + instruction selection: {(time.perf_counter() - start) * 1e3:.0f} ms")
    rate = report("PTX level ", *median_run(ptx, "ref_pipeline", 160, reference))
    report("NVVM level", *median_run(parse(text, ptx=False), "ref_pipeline", 160, reference))
    print(f"  PTX level {'meets' if rate >= RATE_GOAL else 'MISSES'} the goal of {RATE_GOAL:,} /s")
    iterations = 5000
    loop = {"arg0": np.zeros(1, np.int32), "arg1": iterations}
    print(f"scalar loop, {iterations} iterations, one warp:")
    report("PTX level ", *median_run(parse(LOOP, ptx=True), "kernel", 32, loop))
    report("NVVM level", *median_run(parse(LOOP, ptx=False), "kernel", 32, loop))


if __name__ == "__main__":
    main()

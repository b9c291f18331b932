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

With `--by-instruction`, also where the PTX level's time goes on the reference pipeline:
each instruction's closure timed (`time.perf_counter` around it, which adds ~0.3 us per
instruction to what it reports), summed by mnemonic; what is not in any closure is the
scheduler's and the warp loop's.

Usage: python benchmarks/ptx_throughput.py [--by-instruction]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the MMAs' small matmuls: threads only add contention

import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter import RunResult, run_kernel
from xdsl_tmem.interpreter.ptx import program
from xdsl_tmem.interpreter.ptx.cfg import Flow
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


@contextmanager
def timed_instructions(seconds: dict[str, float], counts: Counter[str]) -> Generator[None]:
    """While active, every PTX instruction decoded times its closure into `seconds` and
    `counts` by mnemonic."""
    decode = program.Decoder.instruction

    def instruction(
        self: program.Decoder, op: Operation, index: int, flow: Flow, labels: dict[str, int], rpc: int
    ) -> program.Decoded:
        decoded = decode(self, op, index, flow, labels, rpc)
        run = decoded.run
        name = op.mnemonic() if isinstance(op, ptx.Instruction) else op.name

        def timed(w: Any) -> int:
            start = time.perf_counter()
            try:
                return run(w)
            finally:
                seconds[name] += time.perf_counter() - start
                counts[name] += 1

        decoded.run = timed
        return decoded

    program.Decoder.instruction = instruction
    try:
        yield
    finally:
        program.Decoder.instruction = decode


def by_instruction(module: ModuleOp, args: dict[str, Any]) -> None:
    seconds: dict[str, float] = defaultdict(float)
    counts: Counter[str] = Counter()
    runs: list[tuple[float, dict[str, float], Counter[str]]] = []
    for _ in range(RUNS):
        seconds.clear()
        counts.clear()
        with timed_instructions(seconds, counts):
            result = run_kernel(module, "ref_pipeline", block=160, args=args, keep_log=False)
        runs.append((result.report.wall_seconds, dict(seconds), Counter(counts)))
    wall, spent, count = sorted(runs, key=lambda r: r[0])[len(runs) // 2]  # the median run
    inside = sum(spent.values())
    print(f"  where the PTX level's time goes (the median timed run, {wall * 1e3:.1f} ms):")
    for name, t in sorted(spent.items(), key=lambda kv: -kv[1])[:12]:
        print(f"    {name:58s} {count[name]:5d} x {t / count[name] * 1e6:6.1f} us = {t * 1e3:5.1f} ms")
    print(f"    {'(everything else: the scheduler, the warp loop)':58s} {(wall - inside) * 1e3:19.1f} ms")


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
    if "--by-instruction" in sys.argv[1:]:
        by_instruction(ptx, reference)
    iterations = 5000
    loop = {"arg0": np.zeros(1, np.int32), "arg1": iterations}
    print(f"scalar loop, {iterations} iterations, one warp:")
    report("PTX level ", *median_run(parse(LOOP, ptx=True), "kernel", 32, loop))
    report("NVVM level", *median_run(parse(LOOP, ptx=False), "kernel", 32, loop))


if __name__ == "__main__":
    main()

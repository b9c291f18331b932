"""Compile latency, tmem → PTX, of the reference pipeline in the tmem dialect
(examples/matmul_cg1.mlir), against the upstream C++ chain on the same kernel.

* in process: parse + lower-tmem + instruction selection + PTX printing (goal ≤ 0.1 s);
* as a CLI process: `xdsl-tmem-opt matmul_cg1.mlir -p lower-tmem -t ptx` (goal ≤ 0.6 s);
* upstream, side by side: `mlir-opt-22 | mlir-translate-22 | llc-22` on our NVVM-level
  output of the same kernel (the C++ chain has no tmem dialect);
* scaling: modules of 1, 10 and 100 copies of the kernel, in process.

Each figure is the median of several runs. Usage: python benchmarks/compile_latency.py
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import emit_ptx
from xdsl_tmem.tools.opt import TmemOptMain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the external oracles live with the tests
from external import UPSTREAM_LOWERING, Upstream

HERE = Path(__file__).resolve().parent
KERNEL = HERE.parent / "examples" / "matmul_cg1.mlir"
IN_PROCESS_GOAL = 0.1
CLI_GOAL = 0.6


def median_time(run: Callable[[], object], repeats: int) -> float:
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compile_in_process(text: str) -> str:
    tool = TmemOptMain(["-p", "lower-tmem"])
    module = Parser(tool.ctx, text).parse_module()
    tool.apply_passes(module)
    assert isinstance(module, ModuleOp)
    return emit_ptx(module)


def replicate(text: str, copies: int) -> str:
    """A module with `copies` renamed copies of the kernel and its globals."""
    body = text[text.index("module {") + len("module {") : text.rindex("}")]
    names = re.findall(r"@(\w+)", body)
    parts: list[str] = []
    for i in range(copies):
        copy = body
        for name in sorted(set(names), key=len, reverse=True):
            copy = re.sub(rf"@{name}\b", f"@{name}_{i}", copy)
        parts.append(copy)
    return "module {\n" + "\n".join(parts) + "\n}\n"


def main() -> int:
    text = KERNEL.read_text()
    compile_in_process(text)  # warm up: lazy imports, dialect loading
    in_process = median_time(lambda: compile_in_process(text), 15)

    opt = shutil.which("xdsl-tmem-opt", path=str(Path(sys.executable).parent)) or "xdsl-tmem-opt"
    cli = median_time(
        lambda: subprocess.run([opt, str(KERNEL), "-p", "lower-tmem", "-t", "ptx"], check=True, capture_output=True), 7
    )
    print("tmem → PTX, examples/matmul_cg1.mlir (the reference pipeline in the tmem dialect)\n")
    print(f"  in process                       {in_process * 1000:8.1f} ms   (goal ≤ {IN_PROCESS_GOAL * 1000:.0f} ms)")
    print(f"  CLI process (xdsl-tmem-opt)      {cli * 1000:8.1f} ms   (goal ≤ {CLI_GOAL * 1000:.0f} ms)")

    upstream = Upstream.find()
    if upstream is not None:
        nvvm = subprocess.run([opt, str(KERNEL), "-p", "lower-tmem"], check=True, capture_output=True, text=True).stdout

        def chain() -> None:
            lowered = subprocess.run(
                [upstream.mlir_opt, *UPSTREAM_LOWERING], input=nvvm, check=True, capture_output=True, text=True
            ).stdout
            ir = subprocess.run(
                [upstream.mlir_translate, "--mlir-to-llvmir"], input=lowered, check=True, capture_output=True, text=True
            ).stdout
            subprocess.run(
                [upstream.llc, "-march=nvptx64", "-mcpu=sm_100a"], input=ir, check=True, capture_output=True, text=True
            )

        upstream_time = median_time(chain, 7)
        print(
            f"  upstream NVVM → PTX (3 processes)  {upstream_time * 1000:8.1f} ms"
            "   (mlir-opt-22 | mlir-translate-22 | llc-22, on our NVVM output)"
        )
    else:
        print("  upstream chain: mlir-opt-22 / mlir-translate-22 / llc-22 not found")

    print("\nscaling, in process:")
    base = None
    for copies in (1, 10, 100):
        module_text = replicate(text, copies)
        seconds = median_time(lambda module_text=module_text: compile_in_process(module_text), 3 if copies < 100 else 1)
        base = base or seconds
        print(f"  {copies:>3} kernels  {seconds * 1000:9.1f} ms   {seconds / copies * 1000:6.1f} ms/kernel")
    met = in_process <= IN_PROCESS_GOAL and cli <= CLI_GOAL
    print(f"\ngoals (in process ≤ {IN_PROCESS_GOAL} s, CLI ≤ {CLI_GOAL} s): {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

"""Compile and start-up latency, side by side with upstream MLIR/LLVM 22 (issue 15's three rows).

1. `xdsl-tmem-opt matmul_cg1.mlir -p lower-tmem -t ptx`, the whole process, against the
   upstream chain `mlir-opt-22 | mlir-translate-22 | llc-22` on our NVVM-level output of
   the same kernel (the C++ chain has no tmem dialect); goal ≤ 1.5x upstream.
2. In process, each extra kernel: (time of a module of 10 renamed copies - time of 1) / 9,
   parse + lower-tmem + instruction selection + PTX printing; upstream: the same difference
   for the 3-process chain; goal ≤ 10 ms.
3. `xdsl-tmem-run` start-up to the first instruction: the whole process of a run stopped
   after one warp-instruction (`--max-steps 1`, exit 4), and of importing the driver alone;
   goal ≤ 0.15 s.

Every figure is the median of runs that alternate between the contenders in one window
(the machine is shared and its load varies). `--base VENV` measures a second installation
(e.g. the main checkout's virtual environment) alternately with this one. Children run with
bytecode caching on (`PYTHONDONTWRITEBYTECODE` removed, caches under the temp directory),
as an installed tool runs.

Usage: python benchmarks/compile_latency.py [--base VENV] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL = HERE.parent / "examples" / "matmul_cg1.mlir"
RUN_ARGS = [
    "--kernel", "matmul_cg1", "--block", "160", "--arg", "out=zeros:f32:4x128x256",
    "--arg", "a=rand:f16:4096:1", "--arg", "b=rand:f16:8192:2", "--arg", "ntiles=4",
]  # fmt: skip
CLI_GOAL_RATIO = 1.5
PER_KERNEL_GOAL = 0.010
RUN_START_GOAL = 0.15
EXTRA = 10  # kernels in the module whose difference to one kernel gives row 2


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


def compile_in_process(text: str) -> str:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser

    from xdsl_tmem.backend.target import emit_ptx
    from xdsl_tmem.tools.opt import TmemOptMain

    tool = TmemOptMain(["-p", "lower-tmem"])
    module = Parser(tool.ctx, text).parse_module()
    tool.apply_passes(module)
    assert isinstance(module, ModuleOp)
    return emit_ptx(module)


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def worker(repeats: int) -> None:
    """Row 2 in this interpreter (ours or --base's): per-repeat (1 kernel, EXTRA kernels) times."""
    text = KERNEL.read_text()
    many = replicate(text, EXTRA)
    compile_in_process(text)  # warm up: lazy imports, dialect loading, first-use formats
    pairs = [(timed(lambda: compile_in_process(text)), timed(lambda: compile_in_process(many))) for _ in range(repeats)]
    print(json.dumps(pairs))


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "xdsl-tmem-bench-pycache")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


class Install:
    """One installation's drivers and interpreter."""

    def __init__(self, label: str, bin_dir: Path):
        self.label, self.bin = label, bin_dir
        self.env = child_env()

    def run(self, argv: list[str], ok: tuple[int, ...] = (0,)) -> float:
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=self.env, check=False)
        seconds = time.perf_counter() - start
        if done.returncode not in ok:
            raise RuntimeError(f"{self.label}: {' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()}")
        return seconds

    def opt(self) -> float:
        return self.run([str(self.bin / "xdsl-tmem-opt"), str(KERNEL), "-p", "lower-tmem", "-t", "ptx"])

    def run_start(self) -> float:
        return self.run([str(self.bin / "xdsl-tmem-run"), str(KERNEL), *RUN_ARGS, "--max-steps", "1"], ok=(4,))

    def run_import(self) -> float:
        return self.run([str(self.bin / "python"), "-P", "-c", "import xdsl_tmem.tools.run"])  # -P: not the cwd's tree

    def per_kernel(self, repeats: int) -> list[tuple[float, float]]:
        out = subprocess.run(
            [str(self.bin / "python"), __file__, "--worker", str(repeats)],
            capture_output=True, text=True, env=self.env, check=True,
        ).stdout  # fmt: skip
        return [(a, b) for a, b in json.loads(out)]


def upstream_chain(nvvm: str) -> Callable[[], float]:
    sys.path.insert(0, str(HERE.parent / "tests"))  # the external oracles live with the tests
    from external import UPSTREAM_LOWERING, Upstream

    upstream = Upstream.find()
    if upstream is None:
        raise SystemExit("mlir-opt-22 / mlir-translate-22 / llc-22 not found")

    def chain() -> float:
        start = time.perf_counter()
        lowered = subprocess.run(
            [upstream.mlir_opt, *UPSTREAM_LOWERING], input=nvvm, check=True, capture_output=True, text=True
        ).stdout
        ir = subprocess.run(
            [upstream.mlir_translate, "--mlir-to-llvmir"], input=lowered, check=True, capture_output=True, text=True
        ).stdout
        subprocess.run(
            [upstream.llc, "-march=nvptx64", "-mcpu=sm_100a"], input=ir, check=True, capture_output=True, text=True
        )
        return time.perf_counter() - start

    return chain


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> int:
    args = argparse.ArgumentParser(description="Compile and start-up latency, side by side with upstream MLIR/LLVM 22")
    args.add_argument("--base", type=Path, help="a second installation's virtual environment, measured alternately")
    args.add_argument("--repeats", type=int, default=7)
    args.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ns = args.parse_args()
    if ns.worker is not None:
        worker(ns.worker)
        return 0

    installs = [Install("this tree", Path(sys.executable).parent)]
    if ns.base is not None:
        installs.append(Install(f"base ({ns.base})", ns.base / "bin"))
    ours = installs[0]
    opt = [str(ours.bin / "xdsl-tmem-opt"), str(KERNEL), "-p", "lower-tmem"]
    nvvm = subprocess.run(opt, check=True, capture_output=True, text=True, env=ours.env).stdout
    nvvm_many = subprocess.run(
        [str(ours.bin / "xdsl-tmem-opt"), "-p", "lower-tmem"],
        input=replicate(KERNEL.read_text(), EXTRA), check=True, capture_output=True, text=True, env=ours.env,
    ).stdout  # fmt: skip
    chain_one, chain_many = upstream_chain(nvvm), upstream_chain(nvvm_many)
    for install in installs:  # warm up: bytecode caches, file system
        install.opt()
        install.run_start()

    cli: dict[str, list[float]] = {i.label: [] for i in installs}
    start: dict[str, list[float]] = {i.label: [] for i in installs}
    imports: dict[str, list[float]] = {i.label: [] for i in installs}
    per_kernel: dict[str, list[float]] = {i.label: [] for i in installs}
    one_kernel: dict[str, list[float]] = {i.label: [] for i in installs}
    up_cli: list[float] = []
    up_kernel: list[float] = []
    for _ in range(ns.repeats):
        up_cli.append(chain_one())
        for install in installs:
            cli[install.label].append(install.opt())
            start[install.label].append(install.run_start())
            imports[install.label].append(install.run_import())
        up_kernel.append((chain_many() - chain_one()) / (EXTRA - 1))
        for install in installs:
            pairs = install.per_kernel(1)
            per_kernel[install.label] += [(many - one) / (EXTRA - 1) for one, many in pairs]
            one_kernel[install.label] += [one for one, _ in pairs]

    med = statistics.median
    upstream_cli = med(up_cli)
    print(f"{KERNEL.relative_to(HERE.parent)}, medians of {ns.repeats} alternated runs\n")
    print(f"1. xdsl-tmem-opt -p lower-tmem -t ptx, whole process (goal ≤ {CLI_GOAL_RATIO}x upstream)")
    print(f"   upstream mlir-opt-22 | mlir-translate-22 | llc-22   {ms(upstream_cli)}")
    for label, times in cli.items():
        print(f"   {label:50s} {ms(med(times))}   {med(times) / upstream_cli:4.1f}x upstream")
    print(f"2. in process, each extra kernel (goal ≤ {PER_KERNEL_GOAL * 1000:.0f} ms)")
    print(f"   upstream chain, (10 kernels - 1) / 9                {ms(med(up_kernel))}")
    for label, times in per_kernel.items():
        print(f"   {label:50s} {ms(med(times))}   (one kernel {ms(med(one_kernel[label])).strip()})")
    print(f"3. xdsl-tmem-run start-up to the first instruction (goal ≤ {RUN_START_GOAL * 1000:.0f} ms)")
    for label in start:
        print(f"   {label:50s} {ms(med(start[label]))}   (imports alone {ms(med(imports[label])).strip()})")
    met = (
        med(cli[ours.label]) <= CLI_GOAL_RATIO * upstream_cli
        and med(per_kernel[ours.label]) <= PER_KERNEL_GOAL
        and med(start[ours.label]) <= RUN_START_GOAL
    )
    print(f"\ngoals: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())

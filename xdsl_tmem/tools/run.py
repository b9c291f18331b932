"""`xdsl-tmem-run`: execute a kernel on the Blackwell machine model.

    xdsl-tmem-run FILE --kernel NAME --block 160 [--grid N] [--cluster N]
        [--arg name=FILE.npy | name=zeros:f32:128x256 | name=rand:f16:128x32:SEED | name=<number>]...
        [-p PASSES] [--out DIR] [--schedule rr|random --seed N] [--max-steps N] [--fence-policy strict|mojo]

Exit codes (stable, documented in docs/interpreter.md):
  0  ran to completion
  1  usage, parse or verification error (or the program needs something the model lacks)
  2  deadlock: every live warp blocked
  3  hazard: the program did something the hardware leaves undefined
  4  step limit reached
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException, ParseError

import xdsl_tmem
from xdsl_tmem.diagnostics import Diagnostic, LocatingParser, SourceMap, diagnose, verify_located
from xdsl_tmem.dialects.llvm_ext import load_llvm_extensions
from xdsl_tmem.interpreter import (
    KernelDeadlock,
    KernelHazard,
    KernelStepLimit,
    LaunchError,
    RunReport,
    run_kernel,
)
from xdsl_tmem.universe import TMEM_UNIVERSE

EXIT_OK, EXIT_ERROR, EXIT_DEADLOCK, EXIT_HAZARD, EXIT_STEP_LIMIT = 0, 1, 2, 3, 4


class UsageError(Exception):
    pass


# --------------------------------------------------------------------------------------
# Context and passes (everything xdsl-tmem-opt knows)
# --------------------------------------------------------------------------------------


def make_context() -> Context:
    ctx = Context()
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    known = set(ctx.registered_dialect_names)
    for name, factory in TMEM_UNIVERSE.all_dialects.items():
        if name not in known:
            ctx.register_dialect(name, factory)
    load_llvm_extensions(ctx)
    return ctx


def parse_pipeline(spec: str, source_map: SourceMap) -> PassPipeline:
    passes = dict(Universe.get_multiverse().all_passes)
    for name, factory in TMEM_UNIVERSE.all_passes.items():
        passes.setdefault(name, factory)

    def verify(_previous: Any, module: ModuleOp, _following: Any) -> None:
        verify_located(module, source_map)

    try:
        return PassPipeline.parse_spec(passes, spec, verify)
    except Exception as e:  # xDSL raises assorted exception types for bad specs
        raise UsageError(f"invalid pass pipeline '{spec}': {e}") from None


# --------------------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------------------

DTYPES: dict[str, Any] = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
}


def parse_dims(text: str, what: str) -> tuple[int, ...]:
    parts = re.split(r"[x,]", text)
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"{what} must be like 160, 160x1x1 or 2,1,1; got '{text}'") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UsageError(f"{what} must be 1 to 3 positive integers; got '{text}'")
    return dims


def parse_arg(spec: str) -> tuple[str, Any]:
    """`name=FILE.npy`, `name=zeros:f32:128x256`, `name=rand:f16:128x32:SEED` or `name=<number>`."""
    name, sep, value = spec.partition("=")
    if not sep or not name:
        raise UsageError(f"--arg expects name=value, got '{spec}'")
    if value.endswith(".npy"):
        try:
            return name, np.load(value, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise UsageError(f"--arg {name}: cannot read '{value}': {e}") from None
    kind, _, rest = value.partition(":")
    if kind in ("zeros", "rand"):
        fields = rest.split(":")
        expected = 2 if kind == "zeros" else 3
        if len(fields) != expected or fields[0] not in DTYPES:
            form = "zeros:DTYPE:SHAPE" if kind == "zeros" else "rand:DTYPE:SHAPE:SEED"
            raise UsageError(f"--arg {name}: expected {form} with DTYPE one of {', '.join(DTYPES)}; got '{value}'")
        dtype = np.dtype(DTYPES[fields[0]])
        shape = parse_dims(fields[1], f"--arg {name} shape") if fields[1] else ()
        if kind == "zeros":
            return name, np.zeros(shape, dtype)
        try:
            rng = np.random.default_rng(int(fields[2]))
        except ValueError:
            raise UsageError(f"--arg {name}: the seed must be an integer, got '{fields[2]}'") from None
        if dtype.kind == "f":
            return name, rng.standard_normal(shape).astype(dtype)
        info = np.iinfo(dtype)
        return name, rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    for convert in (int, float):
        try:
            return name, convert(value, 0) if convert is int else convert(value)  # pyright: ignore[reportCallIssue]
        except ValueError:
            continue
    raise UsageError(f"--arg {name}: '{value}' is not a .npy file, zeros:..., rand:... or a number")


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------


def _where(source_map: SourceMap, op: Any) -> str:
    span = source_map.span_of(op) if op is not None else None
    return f"{span.get_location()}: " if span is not None else ""


def report_deadlock(e: KernelDeadlock, source_map: SourceMap) -> str:
    lines = [f"error: deadlock: {len(e.blocked)} warp(s) blocked and nothing in flight can release them"]
    for warp in e.blocked:
        name = f"'{warp.op.name}'" if warp.op is not None else "?"
        lines.append(f"{_where(source_map, warp.op)}note: {warp.name} blocked at {name}: {warp.reason}")
    if e.cause is not None:
        lines.append(f"note: cause: hazard {e.cause[0]}: {e.cause[1]}")
    lines.append(f"note: after {e.report.instructions} warp-instructions")
    return "\n".join(lines) + "\n"


def report_step_limit(e: KernelStepLimit) -> str:
    return (
        f"error: step limit: stopped after {e.report.instructions} warp-instructions (--max-steps {e.max_steps}); "
        "the kernel may loop forever, or needs a larger limit\n"
    )


def report_hazard(e: KernelHazard, source_map: SourceMap) -> str:
    message = f"hazard {e.kind}: {e.message}"
    diagnostic = source_map.diagnostic(e.op, message) if e.op is not None else Diagnostic(message)
    diagnostic.note = f"in {e.where}, after {e.report.instructions} warp-instructions"
    lines = [diagnostic.render().rstrip("\n")]
    for op, what in e.related:
        lines.append(f"{_where(source_map, op)}note: {what}")
    return "\n".join(lines) + "\n"


def summarize(report: RunReport, outputs: dict[str, NDArray[Any]]) -> str:
    lines = [report.summary()]
    for name, array in outputs.items():
        finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
        lines.append(f"  {name}: {array.dtype} {list(array.shape)}, sum {float(np.sum(finite, dtype=np.float64)):.6g}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="xdsl-tmem-run", description="Run a kernel on the Blackwell machine model.")
    parser.add_argument("file", help="input .mlir file (tmem or NVVM level)")
    parser.add_argument("--kernel", required=True, help="the kernel function to run")
    parser.add_argument("--block", required=True, help="threads per CTA: N or XxYxZ")
    parser.add_argument("--grid", help="CTAs: N or XxYxZ (default: one cluster)")
    parser.add_argument("--cluster", help="CTAs per cluster: N or XxYxZ (default: the kernel's nvvm.cluster_dim)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help="a kernel argument")
    parser.add_argument("-p", "--passes", default="", help="pass pipeline to apply before running")
    parser.add_argument("--out", help="directory to write every buffer argument to, as NAME.npy")
    parser.add_argument("--schedule", choices=("rr", "random"), default="rr", help="warp interleaving")
    parser.add_argument("--seed", type=int, default=0, help="seed of --schedule random")
    parser.add_argument("--max-steps", type=int, default=10_000_000, help="warp-instruction limit")
    parser.add_argument(
        "--fence-policy",
        choices=("strict", "mojo"),
        default="strict",
        help="hazard model: strict (PTX: tcgen05 work crosses a thread sync only with tcgen05.fence) or mojo",
    )
    parser.add_argument("--version", action="version", version=f"xdsl-tmem-run {xdsl_tmem.__version__}")
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    source_map = SourceMap()
    try:
        args = build_parser().parse_args(argv)
        path = Path(args.file)
        try:
            text = path.read_text()
        except OSError as e:
            raise UsageError(f"cannot read '{path}': {e.strerror}") from None
        ctx = make_context()
        module = LocatingParser(ctx, text, str(path), source_map).parse_module()
        verify_located(module, source_map)
        if args.passes:
            parse_pipeline(args.passes, source_map).apply(ctx, module)
        kernel_args = dict(parse_arg(spec) for spec in args.arg)
        result = run_kernel(
            module,
            args.kernel,
            block=parse_dims(args.block, "--block"),
            grid=parse_dims(args.grid, "--grid") if args.grid else None,
            cluster=parse_dims(args.cluster, "--cluster") if args.cluster else 1,
            args=kernel_args,
            schedule=args.schedule,
            seed=args.seed,
            max_steps=args.max_steps,
            fence_policy=args.fence_policy,
        )
    except UsageError as e:
        sys.stderr.write(f"error: {e}\n")
        return EXIT_ERROR
    except LaunchError as e:
        sys.stderr.write((source_map.diagnostic(e.op, e.message) if e.op else Diagnostic(e.message)).render())
        return EXIT_ERROR
    except (ParseError, DiagnosticException) as e:
        sys.stderr.write(diagnose(e, source_map).render())
        return EXIT_ERROR
    except KernelDeadlock as e:
        sys.stderr.write(report_deadlock(e, source_map))
        return EXIT_DEADLOCK
    except KernelHazard as e:
        sys.stderr.write(report_hazard(e, source_map))
        return EXIT_HAZARD
    except KernelStepLimit as e:
        sys.stderr.write(report_step_limit(e))
        return EXIT_STEP_LIMIT
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for name, array in result.outputs.items():
            np.save(out / f"{name}.npy", array)
    sys.stdout.write(summarize(result.report, result.outputs))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(argv)
    except Exception as e:
        if os.environ.get("XDSL_TMEM_TRACEBACK"):
            raise
        sys.stderr.write(
            f"error: internal error in xdsl-tmem-run: {type(e).__name__}: {e}\n"
            "note: this is a bug in xdsl-tmem; set XDSL_TMEM_TRACEBACK=1 to see the traceback\n"
        )
        return EXIT_ERROR


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()

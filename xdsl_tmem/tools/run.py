"""`xdsl-tmem-run`: execute a kernel on the Blackwell machine model.

    xdsl-tmem-run FILE --kernel NAME --block 160 [--grid N] [--cluster N]
        [--arg name=FILE.npy | name=zeros:f32:128x256 | name=rand:f16:128x32:SEED | name=<number>
               | name=tensormap:BUFFER[+OFFSET]:TYPE:DIMS:STRIDES:BOX[:OPTIONS]]...
        [-p PASSES] [-t mlir|ptx] [--out DIR] [--schedule rr|random --seed N] [--max-steps N]
        [--fence-policy strict|mojo] [--race-policy same-value|strict]
        [--explore random:N [--jobs N] | --explore exhaustive [--max-states N]] [--validate-lowering]
        [--trace FILE.json]

Exit codes (stable, documented in docs/interpreter.md):
  0  ran to completion (every schedule explored, every pass validated)
  1  usage, parse or verification error (or the program needs something the model lacks)
  2  deadlock: every live warp blocked
  3  hazard: the program did something the hardware leaves undefined
  4  step limit reached, or exhaustive exploration stopped by --max-states
  5  translation validation: a pass changed what the kernel does
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError

import xdsl_tmem
from xdsl_tmem.diagnostics import Diagnostic, SourceMap, diagnose, load_source, recursion_headroom, verify_located
from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter import (
    KernelDeadlock,
    KernelHazard,
    KernelStepLimit,
    LaunchError,
    RunReport,
)
from xdsl_tmem.interpreter.launch import (
    DTYPES,
    Argument,
    Dim3,
    Launch,
    Limits,
    PointerArgument,
    RacePolicy,
    ScalarField,
    Schedule,
    StructArgument,
    arguments,
    dim3,
)
from xdsl_tmem.interpreter.run import holds_ptx_functions, parameter_names, positional, required_block, run_launch
from xdsl_tmem.interpreter.shadow import SameValueRace
from xdsl_tmem.interpreter.tma import TENSORMAP_ARG_FORM, parse_tensor_map_arg
from xdsl_tmem.interpreter.trace import Tracer
from xdsl_tmem.tools import cli
from xdsl_tmem.tools.progress import progress_bar
from xdsl_tmem.tools.upstream import LLVM_MAJOR, ToolFailed, Upstream, llc_lowering
from xdsl_tmem.universe import available_passes, make_context

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.explore import Exploration
    from xdsl_tmem.interpreter.validate import Lowering

# Start-up: what only some runs need is imported where it is used — exploration (process
# pools), translation validation, and the PTX level, whose value semantics load ml_dtypes
# (alone ~0.6 s, more than the rest of the driver): an MLIR kernel never needs it.

EXIT_OK, EXIT_ERROR, EXIT_DEADLOCK, EXIT_HAZARD, EXIT_LIMIT, EXIT_VALIDATION = 0, 1, 2, 3, 4, 5


class UsageError(Exception):
    pass


# --------------------------------------------------------------------------------------
# Context and passes (everything xdsl-tmem-opt knows)
# --------------------------------------------------------------------------------------


def parse_pipeline(spec: str, source_map: SourceMap) -> PassPipeline:
    def verify(_previous: Any, module: ModuleOp, _following: Any) -> None:
        verify_located(module, source_map)

    try:
        return cli.parse_pass_pipeline(available_passes(), spec, verify)
    except cli.CliError as e:
        raise UsageError(str(e)) from None


# --------------------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------------------


def parse_dims(text: str, what: str) -> tuple[int, ...]:
    parts = re.split(r"[x,]", text)
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"{what} must be like 160, 160x1x1 or 2,1,1; got '{text}'") from None
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise UsageError(f"{what} must be 1 to 3 positive integers; got '{text}'")
    return dims


def _gib(nbytes: int) -> str:
    return f"{nbytes / (1 << 30):,.1f} GiB"


def check_fits(name: str, shape: tuple[int, ...], dtype: np.dtype[Any]) -> None:
    """A buffer must fit in this machine's memory twice (the run works on a copy)."""
    nbytes = dtype.itemsize * int(np.prod(shape, dtype=object))
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):  # not every platform tells
        return
    if 2 * nbytes > memory:
        raise UsageError(
            f"--arg {name}: a {dtype} buffer of shape {'x'.join(map(str, shape))} takes {_gib(nbytes)}; the run "
            f"needs it twice (the kernel works on a copy) and this machine has {_gib(memory)} of memory"
        )


def load_npy(name: str, value: str) -> Any:
    try:
        return np.load(value, allow_pickle=False)
    except OSError as e:
        raise UsageError(f"--arg {name}: cannot read '{value}': {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"--arg {name}: '{value}' is not a .npy array file: {e}") from None
    except MemoryError:
        raise UsageError(f"--arg {name}: '{value}' does not fit in memory") from None


def parse_arg(spec: str) -> tuple[str, Any]:
    """`name=FILE.npy`, `name=zeros:f32:128x256`, `name=rand:f16:128x32:SEED`, `name=<number>`,
    `name=ptr:BUFFER`, `name=null`, `name=struct:OFFSET=FIELD,...` or `name=tensormap:...`
    (`tma.TENSORMAP_ARG_FORM`)."""
    name, sep, value = spec.partition("=")
    if not sep or not name:
        raise UsageError(f"--arg expects name=value, got '{spec}'")
    if value.endswith(".npy"):
        return name, load_npy(name, value)
    kind, _, rest = value.partition(":")
    if value == "null" or kind == "ptr":
        return name, parse_pointer(name, value)
    if kind == "struct":
        return name, parse_struct(name, rest)
    if kind == "tensormap":
        try:
            return name, parse_tensor_map_arg(value)
        except ValueError as e:  # TensorMapError included: cuTensorMapEncodeTiled's rules
            raise UsageError(f"--arg {name}: {e}") from None
    if kind in ("zeros", "rand"):
        fields = rest.split(":")
        expected = 2 if kind == "zeros" else 3
        if len(fields) != expected or fields[0] not in DTYPES:
            form = "zeros:DTYPE:SHAPE" if kind == "zeros" else "rand:DTYPE:SHAPE:SEED"
            raise UsageError(f"--arg {name}: expected {form} with DTYPE one of {', '.join(DTYPES)}; got '{value}'")
        dtype = np.dtype(DTYPES[fields[0]])
        shape = parse_dims(fields[1], f"--arg {name} shape") if fields[1] else ()
        check_fits(name, shape, dtype)
        try:
            if kind == "zeros":
                return name, np.zeros(shape, dtype)
            if not fields[2].isdigit():
                raise UsageError(f"--arg {name}: the seed must be a non-negative integer, got '{fields[2]}'")
            rng = np.random.default_rng(int(fields[2]))
            if dtype.kind == "f":
                return name, rng.standard_normal(shape).astype(dtype)
            info = np.iinfo(dtype)
            return name, rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        except MemoryError:
            raise UsageError(f"--arg {name}: out of memory creating a {dtype} buffer of shape {shape}") from None
    for convert in (int, float):
        try:
            return name, convert(value, 0) if convert is int else convert(value)  # pyright: ignore[reportCallIssue]
        except ValueError:
            continue
    raise UsageError(f"--arg {name}: '{value}' is not a .npy file, zeros:..., rand:... or a number")


def parse_pointer(name: str, value: str) -> PointerArgument:
    """`null` or `ptr:BUFFER`."""
    if value == "null":
        return PointerArgument(None)
    buffer = value.removeprefix("ptr:")
    if not buffer or "=" in buffer or ":" in buffer or "," in buffer:
        raise UsageError(f"--arg {name}: a pointer is ptr:BUFFER (the name of a buffer --arg) or null; got '{value}'")
    return PointerArgument(buffer)


def parse_struct(name: str, text: str) -> StructArgument:
    """`OFFSET=ptr:BUFFER,OFFSET=null,OFFSET=DTYPE:NUMBER,...` (offsets in bytes)."""
    fields: dict[int, PointerArgument | ScalarField] = {}
    form = "struct:OFFSET=FIELD,... with FIELD ptr:BUFFER, null or DTYPE:NUMBER"
    for item in text.split(","):
        offset_text, sep, field = item.partition("=")
        if not sep or not offset_text.isdigit():
            raise UsageError(f"--arg {name}: expected {form}; got field '{item}'")
        offset = int(offset_text)
        if offset in fields:
            raise UsageError(f"--arg {name}: two fields at offset {offset}")
        if field == "null" or field.startswith("ptr:"):
            fields[offset] = parse_pointer(name, field)
            continue
        dtype, _, number = field.partition(":")
        if dtype not in DTYPES:
            raise UsageError(
                f"--arg {name}: field {offset}: '{dtype}' is not ptr, null or a DTYPE ({', '.join(DTYPES)})"
            )
        try:
            fields[offset] = ScalarField(int(number, 0) if DTYPES[dtype].kind in "iu" else float(number), dtype)
        except ValueError:
            what = "an integer" if DTYPES[dtype].kind in "iu" else "a number"
            raise UsageError(f"--arg {name}: field {offset}={dtype}: '{number}' is not {what}") from None
    return StructArgument(fields)


def parse_args(specs: list[str]) -> dict[str, Argument]:
    """Every `--arg`; a name given twice is a mistake, not an override."""
    values: dict[str, Any] = {}
    for spec in specs:
        name = spec.partition("=")[0]
        if name in values:
            raise UsageError(f"--arg {name} is given twice; give each parameter once")
        values[name] = parse_arg(spec)[1]
    return arguments(values)


def parse_launch(args: argparse.Namespace, default_block: Dim3 | None = None) -> Launch:
    """The launch the flags describe (`--explore` ignores the schedule); `default_block`
    (the kernel's `.reqntid`) where `--block` is not given."""
    block = dim3(parse_dims(args.block, "--block"), "--block") if args.block else default_block
    if block is None:
        raise UsageError("--block is required")
    return Launch(
        args.kernel,
        block=block,
        grid=dim3(parse_dims(args.grid, "--grid"), "--grid") if args.grid else None,
        cluster=dim3(parse_dims(args.cluster, "--cluster"), "--cluster") if args.cluster else (1, 1, 1),
        arguments=parse_args(args.arg),
        schedule=Schedule(args.schedule or "rr"),
        seed=args.seed,
        limits=Limits(args.max_steps, args.max_states, args.max_memory << 20),
        fence_policy=FencePolicy(args.fence_policy),
        dynamic_shared_bytes=_dynamic_shared(args.dynamic_shared),
        race_policy=RacePolicy(args.race_policy),
    )


def _dynamic_shared(value: int) -> int:
    if value < 0:
        raise UsageError(f"--dynamic-shared {value}: the dynamic shared memory is a byte count, 0 or more")
    return value


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


def report_step_limit(e: KernelStepLimit, source_map: SourceMap) -> str:
    lines = [
        f"error: step limit: stopped after {e.report.instructions} warp-instructions (--max-steps {e.max_steps}); "
        "the kernel may loop forever, or needs a larger limit"
    ]
    for warp in e.live:
        name = f"'{warp.op.name}'" if warp.op is not None else "its exit"
        lines.append(f"{_where(source_map, warp.op)}note: {warp.name} was at {name} ({warp.reason})")
    return "\n".join(lines) + "\n"


def report_hazard(e: KernelHazard, source_map: SourceMap) -> str:
    message = f"hazard {e.kind}: {e.message}"
    diagnostic = source_map.diagnostic(e.op, message) if e.op is not None else Diagnostic(message)
    diagnostic.note = f"in {e.where}, after {e.report.instructions} warp-instructions"
    lines = [diagnostic.render().rstrip("\n")]
    for op, what in e.related:
        lines.append(f"{_where(source_map, op)}note: {what}")
    return "\n".join(lines) + "\n" + same_value_note(e.report.same_value_races, e.report.first_same_value, source_map)


def same_value_note(count: int, first: SameValueRace | None, source_map: SourceMap, where: str = "") -> str:
    """The note on the same-value write-write races a run (or an exploration: `where`) met,
    at the first one; nothing if none."""
    if not count or first is None:
        return ""
    races = "race" if count == 1 else "races"
    return (
        f"{_where(source_map, first.op)}note: {count} same-value write-write {races}{where} (benign: every order "
        f"leaves the same bytes; --race-policy strict reports them), the first: {first.message}\n"
    )


def summarize(report: RunReport, outputs: dict[str, NDArray[Any]], source_map: SourceMap | None = None) -> str:
    lines = [report.summary()]
    for name, array in outputs.items():
        finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array
        lines.append(f"  {name}: {array.dtype} {list(array.shape)}, sum {float(np.sum(finite, dtype=np.float64)):.6g}")
    note = same_value_note(report.same_value_races, report.first_same_value, source_map or SourceMap())
    return "\n".join(lines) + "\n" + note


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


EPILOG = f"""\
--arg NAME=VALUE forms (each parameter once; buffers are copied, the copies are the outputs):
  FILE.npy                  a buffer from a .npy file
  zeros:DTYPE:SHAPE         a zero buffer: DTYPE f16 bf16 f32 f64 i8 ... u64, SHAPE 128x256 (1-3 dims)
  rand:DTYPE:SHAPE:SEED     standard normal (floats) or uniform (integers), numpy default_rng(SEED)
  NUMBER                    a scalar parameter
  ptr:BUF | null            a pointer parameter: the address of buffer argument BUF, or 0 (PTX kernels)
  struct:OFF=FIELD,...      a byval struct parameter (PTX): fields ptr:BUF, null or DTYPE:NUMBER at byte offsets
  {TENSORMAP_ARG_FORM.replace("%", "%%")}
                            a CUtensorMap parameter over buffer BUF (docs/tma.md)

Exit codes: 0 ran to completion, 1 usage/parse/verification error, 2 deadlock, 3 hazard,
4 step or exploration limit, 5 translation validation failed, 130 interrupted.
Docs: docs/interpreter.md (running), docs/verification.md (hazards, exploration, timelines).
"""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)

    def format_help(self) -> str:
        return super().format_help() + "\n" + cli.ours_help()  # the passes' classes load for --help only


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="xdsl-tmem-run",
        description="Run a kernel on the Blackwell machine model.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="input .mlir file (tmem, NVVM or ptx level), or .ptx")
    parser.add_argument("--kernel", required=True, help="the kernel function to run")
    parser.add_argument("--block", help="threads per CTA: N or XxYxZ (default: the kernel's .reqntid / nvvm.reqntid)")
    parser.add_argument("--grid", help="CTAs: N or XxYxZ (default: one cluster)")
    parser.add_argument("--cluster", help="CTAs per cluster: N or XxYxZ (default: the kernel's nvvm.cluster_dim)")
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a kernel argument, by SSA name (%%out -> out) or position (arg0, ...); the VALUE forms are below",
    )
    parser.add_argument(
        "-p",
        "--passes",
        default="",
        help="pass pipeline to apply before running, as xdsl-tmem-opt's -p (ours are below), e.g. -p lower-tmem",
    )
    parser.add_argument(
        "-t",
        "--target",
        choices=("mlir", "ptx"),
        default="mlir",
        help="the level to run: mlir (the module after -p) or ptx (after -p, select PTX with our backend and run "
        "the ptx dialect: -p ...,convert-to-ptx)",
    )
    parser.add_argument("--out", help="directory to write every buffer argument to, as NAME.npy")
    parser.add_argument("--schedule", choices=("rr", "random"), help="warp interleaving (default rr)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of --schedule random (first seed of --explore random)"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=Limits.max_steps,
        help="warp-instruction limit of the launch (default %(default)s)",
    )
    parser.add_argument(
        "--dynamic-shared",
        type=int,
        default=0,
        metavar="BYTES",
        help="dynamic shared memory of the launch: the size of a .ptx kernel's .extern .shared arrays, or of an "
        "NVVM kernel's zero-length external addr_space 3 globals (default 0)",
    )
    parser.add_argument(
        "--fence-policy",
        choices=tuple(policy.value for policy in FencePolicy),
        default=FencePolicy.STRICT.value,
        help="hazard model: strict (PTX: tcgen05 work crosses a thread sync only with tcgen05.fence) or mojo",
    )
    parser.add_argument(
        "--race-policy",
        choices=tuple(policy.value for policy in RacePolicy),
        default=RacePolicy.SAME_VALUE.value,
        help="shared/global memory races: same-value (default: an unordered write of the bytes the write it races "
        "with left is no race, as every order leaves the same bytes; they are counted in a note) or strict "
        "(every unordered write and conflicting access is a data race)",
    )
    parser.add_argument(
        "--explore",
        metavar="random:N|exhaustive",
        help="run N seeded random schedules, or every interleaving of the cluster at synchronisation points",
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        help="worker processes of --explore random:N (default 1); the verdict and failing seed do not depend on it",
    )
    parser.add_argument(
        "--max-states",
        type=int,
        default=Limits.max_states,
        help="state limit of --explore exhaustive (default %(default)s)",
    )
    parser.add_argument(
        "--max-memory",
        type=int,
        default=Limits.max_memory >> 20,
        metavar="MiB",
        help="memory limit of --explore exhaustive's states (default %(default)s MiB)",
    )
    parser.add_argument(
        "--validate-lowering",
        nargs="?",
        const=LOWERINGS_DEFAULT,
        type=_lowerings,
        metavar="ours|llc|both",
        help="run the kernel before and after each pass of -p and fail if a pass changes its outputs or verdict; "
        "with -t ptx, also our PTX (ours), llc-22's PTX of the same NVVM (llc), or both: the default, where "
        "mlir-opt-22, mlir-translate-22 and llc-22 are found (give the value with '=')",
    )
    parser.add_argument("--trace", metavar="FILE.json", help="write a Chrome trace-event timeline (opens in Perfetto)")
    parser.add_argument(
        "--timeline",
        metavar="FILE.png|svg",
        help="draw the run's timeline with matplotlib: a lane per warp, tensor core and TMA engine, MMAs and loads "
        "in flight, stage ownership, barrier phases, the hazard or deadlock where it happened (with --explore: "
        "the failing schedule's)",
    )
    parser.add_argument("--version", action="version", version=f"xdsl-tmem-run {xdsl_tmem.__version__}")
    return parser


LOWERINGS = ("ours", "llc", "both")
LOWERINGS_DEFAULT = "default"
"""`--validate-lowering` without a value: ours, and llc-22's where its tools are found."""


def _lowerings(value: str) -> str:
    if value not in (*LOWERINGS, LOWERINGS_DEFAULT):
        raise argparse.ArgumentTypeError(f"expects ours, llc or both (as --validate-lowering=VALUE), got '{value}'")
    return value


def _check_jobs(args: argparse.Namespace) -> None:
    """`--jobs N`: a positive integer, for `--explore random:N` only; stored back as an int."""
    if args.jobs is None:
        args.jobs = 1
        return
    if not re.fullmatch(r"\+?[0-9]+", args.jobs.strip()) or int(args.jobs) < 1:
        raise UsageError(f"--jobs expects a positive integer (worker processes), got '{args.jobs}'")
    if args.explore is None or args.explore == "exhaustive":
        given = "--explore exhaustive" if args.explore else "no --explore"
        raise UsageError(f"--jobs applies to --explore random:N (it splits the seeds over processes), got {given}")
    args.jobs = int(args.jobs)


def _check_explore(args: argparse.Namespace) -> None:
    if args.explore != "exhaustive" and not re.fullmatch(r"random:[1-9][0-9]*", args.explore):
        raise UsageError(f"--explore expects random:N (N > 0) or exhaustive, got '{args.explore}'")
    for flag, given in (("--schedule", args.schedule), ("--out", args.out)):
        if given is not None:
            raise UsageError(f"{flag} cannot be combined with --explore (it runs many schedules)")
    if args.explore == "exhaustive" and args.seed:
        raise UsageError("--seed has no effect on --explore exhaustive (it runs every schedule)")


def check_modes(args: argparse.Namespace) -> None:
    """Reject flag combinations that would silently ignore one of them."""
    if args.explore is not None:
        _check_explore(args)
    _check_jobs(args)
    if args.validate_lowering:
        if not args.passes and args.target != "ptx":
            raise UsageError("--validate-lowering needs the passes to check: -p PIPELINE (or -t ptx)")
        if args.validate_lowering != LOWERINGS_DEFAULT and args.target != "ptx":
            raise UsageError(
                f"--validate-lowering={args.validate_lowering} names the PTX lowerings to check: it needs -t ptx"
            )
        for flag, given in (
            ("--explore", args.explore), ("--trace", args.trace), ("--timeline", args.timeline), ("--out", args.out)
        ):  # fmt: skip
            if given is not None:
                raise UsageError(f"{flag} cannot be combined with --validate-lowering")
    for flag, value in (
        ("--max-states", args.max_states), ("--max-memory", args.max_memory), ("--max-steps", args.max_steps)
    ):  # fmt: skip
        if value < 1:
            raise UsageError(f"{flag} must be positive, got {value}")
    if args.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {args.seed}")
    try:
        if args.trace is not None:
            cli.check_output_file("--trace", Path(args.trace))
        if args.timeline is not None:
            _check_timeline(Path(args.timeline))
        if args.out is not None:
            cli.check_output_dir("--out", Path(args.out))
    except cli.CliError as e:
        raise UsageError(str(e)) from None


def check_kernel(module: ModuleOp, name: str) -> None:
    """`--kernel` must name a function marked `nvvm.kernel` (an entry point, as for a GPU
    launch), or a PTX kernel (`.entry`)."""
    if holds_ptx_functions(module):
        from xdsl_tmem.interpreter.ptx.kernel import find_entry

        if find_entry(module, name) is not None:
            return
    functions = {op.sym_name.data: op for op in module.walk() if isinstance(op, llvm.FuncOp | func.FuncOp)}
    kernels = [symbol for symbol, op in functions.items() if "nvvm.kernel" in op.attributes]
    listed = f"its kernels: {', '.join(kernels)}" if kernels else "it has no function marked nvvm.kernel"
    function = functions.get(name)
    if function is None:
        raise UsageError(f"no function @{name} in the module; {listed}")
    if name not in kernels:
        raise LaunchError(
            f"@{name} is not a kernel: it has no nvvm.kernel attribute (mark it `attributes {{nvvm.kernel}}`); "
            f"{listed}",
            function,
        )


class Failed(Exception):
    """A verdict to report: its text (stderr) and exit code."""

    def __init__(self, text: str, code: int):
        super().__init__(text)
        self.text = text
        self.code = code


def report_failure(e: Exception, source_map: SourceMap) -> Failed:
    match e:
        case KernelDeadlock():
            return Failed(report_deadlock(e, source_map), EXIT_DEADLOCK)
        case KernelHazard():
            return Failed(report_hazard(e, source_map), EXIT_HAZARD)
        case KernelStepLimit():
            return Failed(report_step_limit(e, source_map), EXIT_LIMIT)
        case _:
            raise e


def describe_counterexample(result: Exploration, source_map: SourceMap) -> str:
    which = (
        "a shortest counterexample"
        if result.shortest
        else "a counterexample (shortest under the partial-order reduction; no shorter one found within the budget)"
    )
    lines = [
        f"note: {which}, {len(result.schedule)} steps; each runs an agent from the synchronising op named up to "
        "its next one:"
    ]
    for n, move in enumerate(result.schedule, 1):
        op = f"'{move.op.name}'" if move.op is not None else "its exit"
        lines.append(f"{_where(source_map, move.op)}note: step {n}: {move.agent} runs {op}")
    return "\n".join(lines) + "\n"


def explore(module: ModuleOp, args: argparse.Namespace, launch: Launch, source_map: SourceMap) -> str:
    """`--explore`: the summary line, or `Failed` with the first failure."""
    from xdsl_tmem.interpreter.explore import explore_exhaustive, explore_random

    tracer = Tracer() if args.trace or args.timeline else None
    if args.explore == "exhaustive":
        with progress_bar("explore exhaustive", "state") as progress:
            result = explore_exhaustive(module, launch, tracer, progress=progress)
        rate = result.explored / result.seconds if result.seconds else 0.0
        details = (
            f"{result.explored} states, {result.transitions} transitions, {result.seconds:.2f} s ({rate:.0f} states/s)"
        )
    else:
        count = int(args.explore.partition(":")[2])
        with progress_bar("explore random", "schedule") as progress:
            result = explore_random(module, launch, count, tracer, jobs=args.jobs, progress=progress)
        last = args.seed + result.explored - 1
        seeds = (
            f"1 schedule (seed {last})"
            if last == args.seed
            else f"{result.explored} schedules (seeds {args.seed}-{last})"
        )
        details = f"{seeds}, {result.seconds:.2f} s"
    summary = f"explore {result.mode}: {result.verdict}: {details}\n"
    over = " over the schedules" if result.mode == "random" else " over the explored states"
    summary += same_value_note(result.same_value_races, result.first_same_value, source_map, over)
    if result.failure is not None:
        summary += write_views(tracer, args, failure_label(result.failure))
    for path in (p for p in (args.trace, args.timeline) if p is not None):
        summary += (
            f"timeline of the failing schedule written to {path}\n"
            if result.failure is not None
            else f"no failing schedule: no timeline written to {path}\n"
        )
    if result.failure is not None:
        failed = report_failure(result.failure, source_map)
        if result.seed is not None:
            failed.text += (
                f"note: found by random schedule seed {result.seed}; replay it with --schedule random "
                f"--seed {result.seed}\n"
            )
        else:
            failed.text += describe_counterexample(result, source_map)
        sys.stdout.write(summary)
        raise failed
    if not result.complete:
        sys.stdout.write(summary)
        limit = (
            f"explored {args.max_states} states (--max-states {args.max_states})"
            if result.limit == "states"
            else f"the states to explore outgrew {args.max_memory} MiB (--max-memory {args.max_memory})"
        )
        raise Failed(
            f"error: exploration limit: {limit} before finishing, and no failure so far; raise the limit or explore "
            "a smaller launch (fewer tiles)\n",
            EXIT_LIMIT,
        )
    return summary


def llc_reference(mode: str, source_map: SourceMap) -> tuple[str, Lowering] | None:
    """llc-22's lowering for `--validate-lowering=llc|both` (and by default where its tools
    are found: a note says when they are not); `UsageError` when asked for and missing."""
    if mode == "ours":
        return None
    upstream = Upstream.find()
    if upstream is None:
        missing = ", ".join(Upstream.missing())
        where = f"not found on PATH nor in /usr/lib/llvm-{LLVM_MAJOR}/bin"
        if mode != LOWERINGS_DEFAULT:
            raise UsageError(f"--validate-lowering={mode}: {missing} {where}")
        _report(
            f"warning: --validate-lowering: llc-22's PTX is not checked: {missing} {where}; "
            "--validate-lowering=ours checks our PTX alone without this warning\n"
        )
        return None
    sys.stdout.write(f"validate-lowering: llc-22's PTX by {upstream.route()}\n")
    return "llc-22", llc_lowering(upstream, source_map)


def validate(
    module: ModuleOp,
    pipeline: PassPipeline | None,
    ctx: Context,
    launch: Launch,
    source_map: SourceMap,
    reference: tuple[str, Lowering] | None = None,
) -> str:
    """`--validate-lowering`: one line per run, or `Failed` naming the pass (or lowering)."""
    from xdsl_tmem.interpreter.validate import validate_lowering

    passes = pipeline.passes if pipeline is not None else ()
    result = validate_lowering(module, passes, ctx, launch, lambda m: verify_located(m, source_map), reference)
    lines = [f"validate-lowering: input: {result.stages[0].outcome.verdict}"]
    for stage in result.stages[1:]:
        if stage.reference is not None:
            same = "" if stage.difference is not None else f", outputs and verdict as {_stage_name(stage.reference)}"
            lines.append(f"validate-lowering: {stage.pass_spec}'s PTX: {stage.outcome.verdict}{same}")
        else:
            same = "" if stage.difference is not None else ", outputs and verdict unchanged"
            lines.append(f"validate-lowering: after {stage.pass_spec}: {stage.outcome.verdict}{same}")
    sys.stdout.write("\n".join(lines) + "\n")
    failed = result.failed
    if failed is None:
        checked = len([s for s in result.stages[1:] if s.reference is None])
        also = f" and {reference[0]}'s PTX" if reference is not None else ""
        return f"validate-lowering: {checked} pass(es){also} preserve the kernel's behaviour\n"
    if failed.reference is not None:
        text = (
            f"error: translation validation: {failed.pass_spec}'s PTX of the NVVM level does not do what "
            f"{_stage_name(failed.reference)} does: {failed.difference}\n"
        )
    else:
        text = f"error: translation validation: pass '{failed.pass_spec}' changes the kernel: {failed.difference}\n"
    if failed.outcome.failure is not None:
        text += "note: after it:\n" + report_failure(failed.outcome.failure, source_map).text
    raise Failed(text, EXIT_VALIDATION)


def _stage_name(spec: str) -> str:
    return "the input" if spec == "input" else f"the module after {spec}"


def named_like_input(
    outputs: dict[str, NDArray[Any]], module: ModuleOp, kernel: str, names: list[str] | None
) -> dict[str, NDArray[Any]]:
    """The outputs under the input kernel's parameter names (a pass may have renamed the
    parameters: `k_param_0`, ...), by position."""
    now = parameter_names(module, kernel)
    if names is None or now is None or now == names:
        return outputs
    return {names[now.index(name)] if name in now else name: array for name, array in outputs.items()}


def _check_timeline(path: Path) -> None:
    from xdsl_tmem.interpreter.timeline import FORMATS

    if path.suffix.lower() not in FORMATS:
        raise UsageError(f"--timeline: '{path}' must end in .png or .svg (the picture's format)")
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--timeline needs matplotlib: pip install 'xdsl-tmem[timeline]' (or --trace FILE.json)")
    cli.check_output_file("--timeline", path)


def failure_label(e: BaseException) -> str:
    """What ended a run, as the timeline marks it."""
    if isinstance(e, KernelHazard):
        return f"hazard {e.kind}"
    if isinstance(e, KernelDeadlock):
        return "deadlock" + (f" ({e.cause[0]})" if e.cause else "")
    return "step limit" if isinstance(e, KernelStepLimit) else type(e).__name__


def write_views(tracer: Tracer | None, args: argparse.Namespace, failure: str | None) -> str:
    """Write `--trace` and `--timeline`; a note when the picture leaves lanes out."""
    note = ""
    if tracer is None:
        return note
    if args.trace is not None:
        try:
            tracer.write(Path(args.trace))
        except OSError as e:
            raise UsageError(f"--trace: cannot write '{args.trace}': {e.strerror or e}") from None
    if args.timeline is not None:
        from xdsl_tmem.interpreter.timeline import render  # matplotlib only when asked for

        title = f"{args.file} @{args.kernel}" + (f": {failure}" if failure else ": ran to completion")
        try:
            left_out = render(tracer.events, Path(args.timeline), title, failure)
        except OSError as e:
            raise UsageError(f"--timeline: cannot write '{args.timeline}': {e.strerror or e}") from None
        note = f"note: {left_out}\n" if left_out else ""
    return note


def write_outputs(out: Path, outputs: dict[str, NDArray[Any]]) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, array in outputs.items():
            np.save(out / f"{name}.npy", array)
    except OSError as e:
        raise UsageError(f"--out: cannot write into '{out}': {e.strerror or e}") from None


def _report(text: str) -> None:
    """Write a diagnostic after what stdout already holds (a pipe would reorder them)."""
    sys.stdout.flush()
    sys.stderr.write(text)


def load_kernel_module(
    ctx: Context, path: Path, data: bytes, args: argparse.Namespace, source_map: SourceMap
) -> ModuleOp:
    """The input module, checked to hold the kernel to launch. PTX (a `.ptx` file, or the
    ptx dialect in MLIR form) runs as it is: an instruction without a typed op is refused
    when a lane executes it (docs/ptx-level.md)."""
    if path.suffix == ".ptx":
        from xdsl_tmem.frontend import load_ptx  # only for PTX input: keeps start-up short

        module = load_ptx(data, str(path), source_map)
    else:
        module = load_source(ctx, data, str(path), source_map)
    if path.suffix == ".ptx" or holds_ptx_functions(module):
        from xdsl_tmem.interpreter.ptx.kernel import ptx_kernel

        ptx_kernel(module, args.kernel)
        if args.passes or args.target == "ptx" or args.validate_lowering:
            raise UsageError("-p, -t ptx and --validate-lowering apply to MLIR input; a PTX kernel runs as it is")
    else:
        check_kernel(module, args.kernel)
    return module


def run(argv: Sequence[str] | None = None) -> int:
    source_map = SourceMap()
    try:
        args = build_parser().parse_args(argv)
        check_modes(args)
        path = Path(args.file)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise UsageError(f"cannot read '{path}': {e.strerror}") from None
        ctx = make_context()
        module = load_kernel_module(ctx, path, data, args, source_map)
        ours = args.target == "ptx" and args.validate_lowering != "llc"
        passes = ",".join(p for p in (args.passes, "convert-to-ptx" if ours else "") if p)
        pipeline = parse_pipeline(passes, source_map) if passes else None
        launch = parse_launch(args, None if args.block else required_block(module, args.kernel))
        if args.validate_lowering:
            reference = llc_reference(args.validate_lowering, source_map) if args.target == "ptx" else None
            sys.stdout.write(validate(module, pipeline, ctx, launch, source_map, reference))
            return EXIT_OK
        names = parameter_names(module, args.kernel)
        if pipeline is not None:
            # Arguments name the input's parameters; the passes may rename them.
            launch = positional(module, launch)
            pipeline.apply(ctx, module)
        if args.explore:
            sys.stdout.write(explore(module, args, launch, source_map))
            return EXIT_OK
        tracer = Tracer() if args.trace or args.timeline else None
        try:
            with progress_bar("run", "cluster") as progress:
                result = run_launch(module, launch, tracer=tracer, keep_log=False, progress=progress)
        except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
            _report(write_views(tracer, args, failure_label(e)))
            raise
        sys.stdout.write(write_views(tracer, args, None))
        result.outputs = named_like_input(result.outputs, module, args.kernel, names)
        if args.out:
            write_outputs(Path(args.out), result.outputs)
    except UsageError as e:
        _report(f"error: {e}\n")
        return EXIT_ERROR
    except LaunchError as e:
        _report((source_map.diagnostic(e.op, e.message) if e.op else Diagnostic(e.message)).render())
        return EXIT_ERROR
    except (ParseError, DiagnosticException) as e:
        _report(diagnose(e, source_map).render())
        return EXIT_ERROR
    except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
        failed = report_failure(e, source_map)
        _report(failed.text)
        return failed.code
    except Failed as e:
        _report(e.text)
        return e.code
    except ToolFailed as e:
        _report(f"error: --validate-lowering: llc-22's lowering of the kernel failed: {e}\n")
        return EXIT_ERROR
    except MemoryError:
        _report("error: out of memory: the launch's buffers and state do not fit in this machine's memory\n")
        return EXIT_ERROR
    sys.stdout.write(summarize(result.report, result.outputs, source_map))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with recursion_headroom():
            return run(argv)
    except KeyboardInterrupt:
        sys.stdout.flush()
        sys.stderr.write("xdsl-tmem-run: interrupted\n")
        return cli.EXIT_INTERRUPTED
    except Exception as e:
        if os.environ.get("XDSL_TMEM_TRACEBACK"):
            raise
        sys.stderr.write(
            f"error: internal error in xdsl-tmem-run: {type(e).__name__}: {e}\n"
            "note: this is a bug in xdsl-tmem; set XDSL_TMEM_TRACEBACK=1 to see the traceback\n"
        )
        return EXIT_ERROR


def entry() -> None:
    cli.exit_now(main())


if __name__ == "__main__":
    entry()

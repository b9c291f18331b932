"""The Python API: one call per step of a pipeline, typed results, one error type.

    module = parse("examples/matmul_cg1.mlir")      # verified; every dialect registered
    nvvm = lower(module)                            # a new module: the input is untouched
    text = emit_ptx(nvvm)                           # PTX for sm_100a
    stats = ptxas(text)                             # registers, spills, shared memory per kernel
    result = run(module, "matmul_cg1", block=160, args={...})

Every function reports bad input (unreadable file, parse or verification error, unknown
pass or option, failing pass, bad launch, ptxas rejection) as a `CompileError` whose
message is the located diagnostic `xdsl-tmem-opt` / `xdsl-tmem-run` print for the same
mistake; a kernel that deadlocks, meets a hazard or runs out of steps raises
`KernelFailure` with the drivers' report. Nothing else escapes for bad input.

The source location of every parsed op is kept with the module (`parse`) and carried to
the modules `lower` and `apply_passes` return, so that later errors (a pass failure, a
hazard at run time) point into the user's file. docs/api.md documents this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Unpack, cast
from weakref import WeakKeyDictionary

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError

from xdsl_tmem.diagnostics import (
    PARSED_SOURCES,
    Diagnostic,
    SourceMap,
    diagnose,
    load_source,
    recursion_headroom,
    verify_located,
)

if TYPE_CHECKING:
    from xdsl.passes import PassPipeline

    from xdsl_tmem.backend.ptxas import KernelStats
    from xdsl_tmem.interpreter.explore import Exploration
    from xdsl_tmem.interpreter.launch import Launch, LaunchOptions
    from xdsl_tmem.interpreter.run import KernelDeadlock, KernelHazard, KernelStepLimit, RunResult
    from xdsl_tmem.interpreter.validate import Validation

__all__ = [
    "CompileError",
    "KernelFailure",
    "apply_passes",
    "describe_failure",
    "emit_ptx",
    "explore",
    "lower",
    "parse",
    "ptxas",
    "run",
    "validate",
]

Language = Literal["mlir", "ptx"]
FencePolicyName = Literal["strict", "mojo"]


class CompileError(Exception):
    """Bad input to an API call. `str(error)` is the diagnostic the drivers print
    (`file:line:col: error: message`, the source line and a caret, where it has a place
    in a source file; `error: message` otherwise)."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.render().rstrip("\n"))
        self.diagnostic = diagnostic
        self.message = diagnostic.message
        """The message alone, without location or excerpt."""

    @property
    def location(self) -> str | None:
        """`file:line:col` of the error, None where it has no place in a source."""
        span = self.diagnostic.span
        return str(span.get_location()) if span is not None else None


class KernelFailure(Exception):
    """A run ended without completing: a deadlock, a hazard or the step limit.
    `str(error)` is `xdsl-tmem-run`'s report (located notes included)."""

    def __init__(self, text: str, failure: KernelDeadlock | KernelHazard | KernelStepLimit, exit_code: int):
        super().__init__(text.rstrip("\n"))
        self.failure = failure
        """The machine model's exception (its `report`: what ran before the failure)."""
        self.exit_code = exit_code
        """The exit code `xdsl-tmem-run` gives it: 2 deadlock, 3 hazard, 4 step limit."""

    @property
    def verdict(self) -> str:
        """`deadlock`, `hazard <class>` or `step limit`."""
        from xdsl_tmem.interpreter.validate import Outcome

        return Outcome(failure=self.failure).verdict


_SOURCES: WeakKeyDictionary[ModuleOp, SourceMap] = WeakKeyDictionary()
"""Where the ops of each module `parse` read (and of the copies `lower` made) came from."""


def _source_map(module: ModuleOp) -> SourceMap:
    return _SOURCES.get(module) or SourceMap()


def _error(message: str) -> CompileError:
    return CompileError(Diagnostic(message))


class _Diagnosed:
    """Within it: `RECURSION_LIMIT` frames (diagnostics.py), and every error the tools
    report for bad input turned into a `CompileError`, located with `source_map` as the
    drivers locate it. Its `__exit__` never swallows an exception."""

    def __init__(self, source_map: SourceMap):
        self.source_map = source_map
        self.headroom = recursion_headroom()

    def __enter__(self) -> None:
        self.headroom.__enter__()

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.headroom.__exit__(kind, e, tb)
        if e is not None and (error := self.converted(e)) is not None:
            raise error from None

    def converted(self, e: BaseException) -> CompileError | None:
        from xdsl_tmem.interpreter.launch import LaunchError
        from xdsl_tmem.tools.cli import CliError

        if isinstance(e, ParseError | DiagnosticException | OSError):
            return CompileError(diagnose(e, self.source_map))
        if isinstance(e, LaunchError):
            return CompileError(
                self.source_map.diagnostic(e.op, e.message) if e.op is not None else Diagnostic(e.message)
            )
        if isinstance(e, CliError):
            return _error(str(e))
        return None


def _clone(module: ModuleOp) -> tuple[ModuleOp, SourceMap]:
    """A copy of `module` whose ops keep the source spans of the originals."""
    copy = module.clone()
    original = _source_map(module)
    spans = SourceMap(line_offset=original.line_offset)
    for old, new in zip(module.walk(), copy.walk(), strict=True):
        if (span := original.spans.get(old)) is not None:
            spans.spans[new] = span
    for old, new in zip(module.body.block.ops, copy.body.block.ops, strict=True):
        if old in PARSED_SOURCES:  # a parsed PTX module: reports name the user's file
            PARSED_SOURCES[new] = spans
    _SOURCES[copy] = spans
    return copy, spans


# --------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------


def _is_file_name(source: str) -> bool:
    return "\n" not in source and source.strip().endswith((".mlir", ".ptx"))


def parse(source: str | Path, *, language: Language | None = None, name: str = "<string>") -> ModuleOp:
    """Read a program into a verified module, every dialect of xdsl-tmem registered.

    `source` is a file (a `Path`, or a string naming a `.mlir` or `.ptx` file) or the
    program's text. `language` is `"mlir"` or `"ptx"` (the PTX front end,
    docs/ptx-frontend.md); by default a file's extension decides (`.ptx`: PTX) and text is
    MLIR. `name` is the file name diagnostics give text. A parse or verification error is
    a `CompileError` located in the source, as `xdsl-tmem-opt` reports it."""
    if not isinstance(source, str | Path):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise _error(f"parse: expected a file path or program text (str or Path), got {type(source).__name__}")
    if language not in (None, "mlir", "ptx"):
        raise _error(f"parse: language must be 'mlir' or 'ptx', got {language!r}")
    source_map = SourceMap()
    with _Diagnosed(source_map):
        if isinstance(source, Path) or _is_file_name(source):
            path = Path(source)
            try:
                data: bytes | str = path.read_bytes()
            except OSError as e:
                raise _error(f"cannot read '{path}': {e.strerror}") from None
            name = str(path)
            language = language or ("ptx" if path.suffix == ".ptx" else "mlir")
        else:
            data = source
            language = language or "mlir"
        if language == "ptx":
            from xdsl_tmem.frontend import load_ptx  # the PTX grammar loads only for PTX

            module = load_ptx(data, name, source_map)
        else:
            from xdsl_tmem.universe import make_context

            module = load_source(make_context(), data, name, source_map)
    _SOURCES[module] = source_map
    return module


# --------------------------------------------------------------------------------------
# Passes
# --------------------------------------------------------------------------------------


def _pipeline(text: str, source_map: SourceMap) -> PassPipeline:
    """`-p TEXT` as the drivers check it: every pass known, every option valid."""
    from xdsl_tmem.tools.cli import CliError, parse_pass_pipeline
    from xdsl_tmem.universe import available_passes

    if not isinstance(text, str) or not text.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
        raise _error(f"pass pipeline must be a non-empty string like 'lower-tmem', got {text!r}")

    def verify(_previous: object, module: ModuleOp, _following: object) -> None:
        verify_located(module, source_map)

    try:
        return parse_pass_pipeline(available_passes(), text, verify)
    except CliError as e:
        raise _error(str(e)) from None


def apply_passes(module: ModuleOp, pipeline: str) -> ModuleOp:
    """A copy of `module` after the passes of `pipeline`, written as `-p` takes them
    (`"lower-tmem{fence-policy=mojo},convert-to-ptx"`, xDSL's passes too), each result
    verified. `module` itself is not changed. An unknown pass or option is the drivers'
    error message; a pass failure is located at the op it names."""
    _check_module(module, "apply_passes")
    copy, source_map = _clone(module)
    passes = _pipeline(pipeline, source_map)
    from xdsl_tmem.universe import make_context

    _INPUT_PARAMETERS[copy] = _input_parameters(module)
    with _Diagnosed(source_map):
        passes.apply(make_context(), copy)
    return copy


_INPUT_PARAMETERS: WeakKeyDictionary[ModuleOp, dict[str, list[str]]] = WeakKeyDictionary()
"""For a module `apply_passes` made: each kernel's parameter names in the module it
started from. Passes may rename them (instruction selection names them `k_param_0`, ...);
`run`, `explore` and `validate` take the arguments under these names, by position."""


def _input_parameters(module: ModuleOp) -> dict[str, list[str]]:
    if (known := _INPUT_PARAMETERS.get(module)) is not None:
        return known
    from xdsl.dialects import func, llvm

    from xdsl_tmem.dialects import ptx
    from xdsl_tmem.interpreter.run import parameter_names

    names: dict[str, list[str]] = {}
    for op in module.walk():
        if isinstance(op, llvm.FuncOp | func.FuncOp | ptx.FunctionOp):
            found = parameter_names(module, op.sym_name.data)
            if found is not None:
                names[op.sym_name.data] = found
    return names


def lower(module: ModuleOp, *, fence_policy: FencePolicyName = "strict") -> ModuleOp:
    """A copy of a tmem-level `module` lowered to the NVVM level (`lower-tmem`):
    `fence_policy` `"strict"` emits the `tcgen05.fence`s the PTX memory model asks for,
    `"mojo"` leaves them out as Mojo's kernels do (docs/verification.md)."""
    if fence_policy not in ("strict", "mojo"):
        raise _error(f"lower: fence_policy must be 'strict' or 'mojo', got {fence_policy!r}")
    return apply_passes(module, f"lower-tmem{{fence-policy={fence_policy}}}")


def _check_module(module: object, what: str) -> None:
    if not isinstance(module, ModuleOp):
        raise _error(f"{what}: expected a builtin.module (from parse), got {type(module).__name__}")


# --------------------------------------------------------------------------------------
# PTX
# --------------------------------------------------------------------------------------


def emit_ptx(module: ModuleOp, arch: str = "sm_100a") -> str:
    """PTX text for an NVVM-level (or `ptx`-dialect) module, for `arch`: sm_100a,
    sm_100f, sm_103a or sm_110a (docs/ptx_backend.md). `module` is not changed."""
    from xdsl_tmem.backend.target import ARCHS
    from xdsl_tmem.backend.target import emit_ptx as emit

    _check_module(module, "emit_ptx")
    if arch not in ARCHS:
        raise _error(f"unsupported PTX target '{arch}'; supported: {', '.join(ARCHS)}")
    with _Diagnosed(_source_map(module)):
        return emit(module, arch)


def ptxas(ptx: str, arch: str = "sm_100a", *, cubin: Path | None = None) -> list[KernelStats]:
    """Assemble `ptx` with ptxas for `arch` (`-v`) and return each kernel's statistics:
    registers, spill stores and loads, stack frame, shared memory, barriers. `cubin`
    keeps the assembled binary. ptxas is `$PTXAS`, else on `PATH`, else the
    `nvidia-cuda-nvcc` wheel's; none, or ptxas rejecting the PTX, is a `CompileError`."""
    from xdsl_tmem.backend.ptxas import PtxasError, PtxasNotFound, assemble

    if not isinstance(ptx, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise _error(f"ptxas: expected PTX text (a str), got {type(ptx).__name__}")
    try:
        return assemble(ptx, arch, cubin=cubin)
    except PtxasNotFound as e:
        raise _error(str(e)) from None
    except PtxasError as e:
        raise _error(f"ptxas rejected the PTX for {arch}:\n{e}") from None


# --------------------------------------------------------------------------------------
# The machine model
# --------------------------------------------------------------------------------------


def _launch(module: ModuleOp, kernel: str, options: LaunchOptions) -> Launch:
    """The checked launch of `kernel` (an `nvvm.kernel` function or a PTX `.entry`)."""
    from xdsl_tmem.dialects import ptx
    from xdsl_tmem.interpreter.launch import Launch
    from xdsl_tmem.interpreter.ptx.kernel import ptx_kernel
    from xdsl_tmem.interpreter.run import required_block
    from xdsl_tmem.tools.run import UsageError, check_kernel

    _check_module(module, "run")
    if not isinstance(kernel, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise _error(f"the kernel is named by a str, got {kernel!r}")
    with _Diagnosed(_source_map(module)):
        try:
            if any(isinstance(op, ptx.FunctionOp) for op in module.walk()):
                ptx_kernel(module, kernel)
            else:
                check_kernel(module, kernel)
        except UsageError as e:
            raise _error(str(e)) from None
        _check_options(options)
        if "block" not in options:
            options["block"] = required_block(module, kernel)
        launch = Launch.create(kernel, **options)
    return _by_input_names(module, launch)


_DIMENSIONS = ("block", "grid", "cluster")


def _check_options(options: LaunchOptions) -> None:
    """What `Launch.create` takes on trust: known keywords, and the types of the numbers."""
    from xdsl_tmem.interpreter.launch import LaunchOptions

    known = LaunchOptions.__annotations__
    if unknown := sorted(set(options) - set(known)):
        raise _error(f"unknown launch keyword '{unknown[0]}'; the keywords: {', '.join(known)}")
    for what in _DIMENSIONS:
        value: object = options.get(what)
        dims: list[object] = list(cast(Sequence[object], value)) if isinstance(value, list | tuple) else [value]
        if value is not None and not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            raise _error(f"{what} must be 1 to 3 positive integers, got {value!r}")
    seed = options.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise _error(f"seed must be a non-negative integer, got {seed!r}")
    if not _positive(steps := options.get("max_steps", 1)):
        raise _error(f"max_steps must be a positive integer, got {steps!r}")


def _by_input_names(module: ModuleOp, launch: Launch) -> Launch:
    """`launch` with arguments given under the parameter names of the module `module`
    was made from (`_INPUT_PARAMETERS`) passed by position (`arg0`, ...)."""
    names = _INPUT_PARAMETERS.get(module, {}).get(launch.kernel)
    if names is None:
        return launch
    arguments = {(f"arg{names.index(k)}" if k in names else k): v for k, v in launch.arguments.items()}
    return dataclasses.replace(launch, arguments=arguments)


def _failure(module: ModuleOp, e: KernelDeadlock | KernelHazard | KernelStepLimit) -> KernelFailure:
    from xdsl_tmem.tools.run import report_failure

    failed = report_failure(e, _source_map(module))
    return KernelFailure(failed.text, e, failed.code)


def describe_failure(module: ModuleOp, failure: KernelDeadlock | KernelHazard | KernelStepLimit) -> str:
    """`xdsl-tmem-run`'s report of a failure of `module`'s kernel (e.g. an
    `Exploration.failure`), located in the module's source."""
    return str(_failure(module, failure))


def run(module: ModuleOp, kernel: str, **launch: Unpack[LaunchOptions]) -> RunResult:
    """Run `@kernel` of `module` (any level: tmem, NVVM, PTX) on the machine model.

    The launch keywords are `run_kernel`'s (docs/interpreter.md, "From Python"): `block`
    (required unless the kernel declares `nvvm.reqntid` / `.reqntid`), `grid`, `cluster`,
    `args` (parameter name or `arg0`, ... → numpy array, number or `Argument`), `schedule`
    ("rr" or "random"), `seed`, `max_steps`, `fence_policy` ("strict" or "mojo"),
    `dynamic_shared_bytes`, `race_policy` ("same-value" or "strict"). The result holds
    every buffer after the run (`outputs`, copies: the arrays given are not written) and
    a `RunReport`. For a module `apply_passes` or `lower` made, arguments and outputs keep
    the parameter names of the module it started from (passes may rename parameters). A
    bad launch is a `CompileError`; a deadlock, hazard or step limit a `KernelFailure`."""
    from xdsl_tmem.interpreter.run import KernelDeadlock, KernelHazard, KernelStepLimit, run_launch
    from xdsl_tmem.tools.run import named_like_input

    checked = _launch(module, kernel, launch)
    with _Diagnosed(_source_map(module)):
        try:
            result = run_launch(module, checked)
        except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
            raise _failure(module, e) from None
    names = _INPUT_PARAMETERS.get(module, {}).get(kernel)
    result.outputs = named_like_input(result.outputs, module, kernel, names)
    return result


def explore(
    module: ModuleOp,
    kernel: str,
    mode: Literal["exhaustive"] | int,
    *,
    jobs: int = 1,
    max_states: int = 1_000_000,
    **launch: Unpack[LaunchOptions],
) -> Exploration:
    """Explore the schedules of a launch (docs/verification.md): `mode="exhaustive"`
    visits every interleaving of one cluster at synchronisation points (at most
    `max_states` states); an integer N runs N random schedules, seeds `seed`, `seed`+1, ...
    over `jobs` processes. The launch keywords are `run`'s (its `schedule` is not used).

    The `Exploration` says what was found: `verdict` (SAFE, UNSAFE or INCOMPLETE), the
    `failure`, the failing `seed` (random) or a counterexample `schedule` (exhaustive);
    `describe_failure` reports the failure as `xdsl-tmem-run` does."""
    from xdsl_tmem.interpreter.explore import explore_exhaustive, explore_random

    if mode != "exhaustive" and not _positive(mode):
        raise _error(f"explore: mode must be 'exhaustive' or a positive number of random schedules, got {mode!r}")
    for what, value in (("jobs", jobs), ("max_states", max_states)):
        if not _positive(value):
            raise _error(f"explore: {what} must be a positive integer, got {value!r}")
    checked = _launch(module, kernel, launch)
    checked = dataclasses.replace(checked, limits=dataclasses.replace(checked.limits, max_states=max_states))
    with _Diagnosed(_source_map(module)):
        if mode == "exhaustive":
            return explore_exhaustive(module, checked)
        return explore_random(module, checked, mode, jobs=jobs)


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def validate(
    module: ModuleOp, pipeline: str, kernel: str, *, llc: bool = False, **launch: Unpack[LaunchOptions]
) -> Validation:
    """Translation validation (`--validate-lowering`): run the launch on `module`, then
    after each pass of `pipeline` (the `-p` syntax), and compare each run with the one
    before: the verdict, and every buffer bit for bit. `llc=True` also runs llc-22's PTX
    of the NVVM level (needs mlir-opt-22, mlir-translate-22 and llc-22). `module` is not
    changed. The `Validation` lists the `stages`; `failed` is the first that differs
    (None: every pass preserves the kernel's behaviour)."""
    from xdsl_tmem.dialects import ptx
    from xdsl_tmem.interpreter.validate import Lowering, validate_lowering
    from xdsl_tmem.tools.upstream import LLVM_MAJOR, ToolFailed, Upstream, llc_lowering
    from xdsl_tmem.universe import make_context

    checked = _launch(module, kernel, launch)
    if any(isinstance(op, ptx.FunctionOp) for op in module.walk()):
        raise _error("validate: the module is PTX already; translation validation applies passes to MLIR input")
    copy, source_map = _clone(module)
    passes = _pipeline(pipeline, source_map)
    reference: tuple[str, Lowering] | None = None
    if llc:
        upstream = Upstream.find()
        if upstream is None:
            missing = ", ".join(Upstream.missing())
            raise _error(f"validate: llc=True needs {missing}, not found on PATH nor in /usr/lib/llvm-{LLVM_MAJOR}/bin")
        reference = ("llc-22", llc_lowering(upstream, source_map))
    with _Diagnosed(source_map):
        try:
            return validate_lowering(
                copy, passes.passes, make_context(), checked, lambda m: verify_located(m, source_map), reference
            )
        except ToolFailed as e:
            raise _error(f"validate: llc-22's lowering of the kernel failed: {e}") from None

"""Launching a kernel on the machine model: `run_launch` (a `Launch`) and `run_kernel` (keywords)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import TYPE_CHECKING, Any, Unpack, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import AnyFloat, ArrayAttr, DenseArrayBase, IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation

from xdsl_tmem.dialects.llvm_ext import is_dynamic_shared
from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter import races
from xdsl_tmem.interpreter.arith import ArithFunctions
from xdsl_tmem.interpreter.blas import single_threaded_blas
from xdsl_tmem.interpreter.executor import (
    Deadlock,
    OpError,
    Program,
    Scheduler,
    Status,
    StepLimit,
    TensorCore,
    Unsupported,
    Warp,
    WarpFunctions,
)
from xdsl_tmem.interpreter.func import CfFunctions, FuncFunctions
from xdsl_tmem.interpreter.hazards import WarpClock
from xdsl_tmem.interpreter.heap import older_objects_frozen
from xdsl_tmem.interpreter.launch import (
    Argument,
    BufferArgument,
    Dim3,
    Geometry,
    Launch,
    LaunchError,
    LaunchOptions,
    RacePolicy,
    ScalarArgument,
    dim3,
)
from xdsl_tmem.interpreter.llvm import LlvmFunctions
from xdsl_tmem.interpreter.machine import (
    MAX_SHARED_BYTES,
    PARAM_BASE,
    Cluster,
    Cta,
    GlobalMemory,
    Hazard,
    MBarrier,
    Memo,
    SharedLayout,
)
from xdsl_tmem.interpreter.memory import alignment_of, size_of
from xdsl_tmem.interpreter.nvvm import NvvmFunctions, mbarrier_wait_reason
from xdsl_tmem.interpreter.nvvm_tma import (
    TENSOR_MAP_SPELLING,
    NvvmTmaFunctions,
    byval_type,
    parameter_offsets,
    tensor_map_problem,
)
from xdsl_tmem.interpreter.scf import ScfFunctions
from xdsl_tmem.interpreter.shadow import SameValueRace
from xdsl_tmem.interpreter.tma import TensorMap, TensorMapArgument, TensorMapError
from xdsl_tmem.interpreter.tmem import TmemFunctions
from xdsl_tmem.interpreter.trace import Tracer
from xdsl_tmem.interpreter.values import Value, canonical, width_of

if TYPE_CHECKING:
    from xdsl_tmem.dialects import ptx
    from xdsl_tmem.interpreter.ptx.program import Program as PtxProgram


PTX_FUNCTION = "ptx.function"
"""`ptx.FunctionOp`'s name: a module holds PTX functions only if its ops carry it."""


def holds_ptx_functions(module: ModuleOp) -> bool:
    """Whether the module has ptx-level functions (the PTX level runs them). By op name, so
    that an MLIR kernel's run imports neither the ptx dialect nor the PTX level."""
    return any(op.name == PTX_FUNCTION for op in module.walk())


def find_entry(module: ModuleOp, name: str) -> ptx.FunctionOp | None:
    """The PTX kernel (`.entry`) `name` with a body, if the module has one (`ptx/kernel.py`).
    The PTX level is imported only for a module with ptx functions: its value semantics load
    ml_dtypes (~0.6 s, more than the rest of the interpreter), which MLIR kernels never need."""
    if not holds_ptx_functions(module):
        return None
    from xdsl_tmem.interpreter.ptx.kernel import find_entry as find_ptx_entry

    return find_ptx_entry(module, name)


def default_functions() -> list[WarpFunctions]:
    """Implementations of every dialect a shipped program uses."""
    return [
        ArithFunctions(),
        ScfFunctions(),
        FuncFunctions(),
        CfFunctions(),
        LlvmFunctions(),
        NvvmFunctions(),
        NvvmTmaFunctions(),
        TmemFunctions(),
    ]


# --------------------------------------------------------------------------------------
# Errors (the driver maps them to exit codes)
# --------------------------------------------------------------------------------------


@dataclass
class BlockedWarp:
    name: str
    op: Operation | None
    reason: str


class KernelDeadlock(Exception):
    """Every live warp is blocked (exit code 2). `cause` is the hazard class that
    explains it, when one does (missing-commit, missing-epilogue-arrive)."""

    def __init__(self, blocked: list[BlockedWarp], report: RunReport, cause: tuple[str, str] | None = None):
        super().__init__("deadlock")
        self.blocked = blocked
        self.report = report
        self.cause = cause


class KernelStepLimit(Exception):
    """More warp-instructions than `max_steps` (exit code 4). `live` names every warp
    still running and the op it stood at (`reason`: running, blocked or spinning)."""

    def __init__(self, max_steps: int, report: RunReport, live: list[BlockedWarp] | None = None):
        super().__init__(f"step limit of {max_steps} warp-instructions reached")
        self.max_steps = max_steps
        self.report = report
        self.live = live or []


class KernelHazard(Exception):
    """The program did something the hardware leaves undefined (exit code 3)."""

    def __init__(
        self,
        kind: str,
        message: str,
        op: Operation | None,
        where: str,
        report: RunReport,
        related: list[tuple[Any, str]] | None = None,
    ):
        super().__init__(f"hazard {kind}: {message}")
        self.kind = kind
        self.message = message
        self.op = op
        self.where = where
        self.report = report
        self.related = related or []


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass
class RunReport:
    """What a run did."""

    kernel: str
    launch: Geometry
    """The dimensions as run (the grid and cluster defaulted from the kernel)."""
    schedule: str
    seed: int
    instructions: int = 0
    """Warp-instructions executed (one op executed by one warp)."""
    sync_points: int = 0
    mma_count: int = 0
    wall_seconds: float = 0.0
    tmem_events: list[tuple[str, int, int, int, int]] = field(default_factory=list[tuple[str, int, int, int, int]])
    schedule_trace: list[int] = field(default_factory=list[int])
    same_value_races: int = 0
    """Unordered writes of the bytes the write they race with left, not reported as data
    races (`RacePolicy.SAME_VALUE`); a warp's instruction counts once."""
    first_same_value: SameValueRace | None = None
    """The first of them (its op and what it raced with)."""

    @property
    def instructions_per_second(self) -> float:
        return self.instructions / self.wall_seconds if self.wall_seconds else 0.0

    def summary(self) -> str:
        launch = self.launch
        return (
            f"ran @{self.kernel}: grid {launch.grid}, cluster {launch.cluster}, block {launch.block}; "
            f"{self.instructions} warp-instructions, {self.sync_points} sync points, {self.mma_count} MMAs, "
            f"schedule {self.schedule}"
            + (f" (seed {self.seed})" if self.schedule == "random" else "")
            + f", {self.wall_seconds:.3f} s"
        )


@dataclass
class RunResult:
    """What a completed run left: its buffers and its report."""

    outputs: dict[str, NDArray[Any]]
    """Every buffer argument after the run (copies of the inputs)."""
    report: RunReport


# --------------------------------------------------------------------------------------
# Launching
# --------------------------------------------------------------------------------------


def find_kernel(module: ModuleOp, name: str) -> Operation:
    kernels: list[str] = []
    for op in module.walk():
        if isinstance(op, llvm.FuncOp | func.FuncOp):
            symbol = op.sym_name.data
            if symbol == name:
                if not op.body.blocks:
                    raise LaunchError(f"@{name} is a declaration without a body", op)
                return op
            kernels.append(symbol)
    raise LaunchError(f"no function @{name} in the module (functions: {', '.join(kernels) or 'none'})")


def parameter_names(module: ModuleOp, kernel: str) -> list[str] | None:
    """The parameter names of kernel `kernel` in order (SSA names, `.param` names of a
    PTX kernel (`.entry`); `argN` where unnamed), or None if the module has no such kernel."""
    if (entry := find_entry(module, kernel)) is not None:
        from xdsl_tmem.interpreter.ptx.kernel import parameters

        return [p.name for p in parameters(entry)]
    try:
        function = find_kernel(module, kernel)
    except LaunchError:
        return None
    block = function.regions[0].blocks.first
    assert block is not None
    return [arg.name_hint or f"arg{i}" for i, arg in enumerate(block.args)]


def positional(module: ModuleOp, launch: Launch) -> Launch:
    """`launch` with its arguments named by position (`arg0`, ...) instead of by the
    parameter names of `module`'s kernel: a pass may rename parameters (instruction
    selection names them `k_param_0`, ...), positions stay."""
    names = parameter_names(module, launch.kernel)
    if names is None:
        return launch
    arguments = {(f"arg{names.index(k)}" if k in names else k): v for k, v in launch.arguments.items()}
    return dataclasses.replace(launch, arguments=arguments)


def _int_array(attr: Any) -> tuple[int, ...] | None:
    if isinstance(attr, DenseArrayBase):
        return tuple(int(v) for v in cast(DenseArrayBase[Any], attr).get_values())
    if isinstance(attr, ArrayAttr):
        items = cast(ArrayAttr[Attribute], attr).data
        return tuple(cast(IntegerAttr, a).value.data for a in items if isinstance(a, IntegerAttr))
    return None


def check_launch(kernel: Operation, launch: Launch) -> Geometry:
    """Check the launch against the kernel's nvvm attributes; default the cluster shape
    to the kernel's `nvvm.cluster_dim` and the grid to one cluster."""
    attrs = kernel.attributes
    return check_geometry(
        kernel,
        launch,
        {
            "nvvm.maxntid": _int_array(attrs.get("nvvm.maxntid")),
            "nvvm.reqntid": _int_array(attrs.get("nvvm.reqntid")),
            "nvvm.cluster_dim": _int_array(attrs.get("nvvm.cluster_dim")),
        },
    )


def check_geometry(kernel: Operation, launch: Launch, declared: Mapping[str, tuple[int, ...] | None]) -> Geometry:
    """Check the launch against the dimensions the kernel declares, in the order maximum
    threads, required threads, cluster shape (`declared` maps each one's name, as the
    kernel spells it, to its value or None)."""
    (maxntid_name, maxntid), (reqntid_name, reqntid), (cluster_name, cluster_dim) = declared.items()
    threads = Geometry(launch.block).threads
    if threads > 1024:
        raise LaunchError(f"a block of {threads} threads exceeds the 1024-thread limit", kernel)
    if maxntid is not None:
        limit = int(np.prod(maxntid))
        if threads > limit:
            raise LaunchError(
                f"the block has {threads} threads but the kernel declares {maxntid_name} = {list(maxntid)} ({limit})",
                kernel,
            )
    if reqntid is not None:
        if tuple(list(reqntid) + [1] * (3 - len(reqntid))) != launch.block:
            raise LaunchError(
                f"the block is {launch.block} but the kernel requires {reqntid_name} = {list(reqntid)}", kernel
            )
    cluster = launch.cluster
    if cluster_dim is not None:
        want = tuple(list(cluster_dim) + [1] * (3 - len(cluster_dim)))
        if cluster == (1, 1, 1):
            cluster = (want[0], want[1], want[2])
        elif cluster != want:
            raise LaunchError(
                f"the cluster is {cluster} but the kernel declares {cluster_name} = {list(cluster_dim)}", kernel
            )
    grid = launch.grid if launch.grid is not None else cluster
    if any(g % c for g, c in zip(grid, cluster, strict=False)):
        raise LaunchError(f"the grid {grid} is not a multiple of the cluster shape {cluster}", kernel)
    if int(np.prod(cluster)) > 16:
        raise LaunchError(f"a cluster of {int(np.prod(cluster))} CTAs exceeds the limit of 16", kernel)
    return Geometry(launch.block, grid, cluster)


def shared_layout(module: ModuleOp, dynamic_bytes: int = 0) -> SharedLayout:
    """The shared-memory globals in declaration order, aligned; the zero-length `external`
    arrays (`is_dynamic_shared`) are the launch's dynamic shared memory of `dynamic_bytes`,
    as the PTX level places `.extern .shared` arrays."""
    layout = SharedLayout()
    dynamic: list[tuple[str, int]] = []
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp) and op.addr_space.value.data == 3:
            if op.value is not None:
                raise LaunchError(
                    f"shared-memory global @{op.sym_name.data} has an initializer, which PTX does not allow", op
                )
            alignment = op.alignment.value.data if op.alignment is not None else alignment_of(op.global_type)
            if is_dynamic_shared(op):
                dynamic.append((op.sym_name.data, alignment))
                continue
            layout.add(op.sym_name.data, size_of(op.global_type), alignment)
    layout.add_dynamic(dynamic, dynamic_bytes)
    if layout.size > MAX_SHARED_BYTES:
        raise LaunchError(
            f"the shared-memory globals need {layout.size} bytes, more than the {MAX_SHARED_BYTES} of a CTA"
        )
    return layout


def bind_arguments(
    kernel: Operation, args: Mapping[str, Argument], memory: GlobalMemory
) -> tuple[list[Value], dict[str, NDArray[Any]]]:
    """Values of the kernel's parameters: buffers become global addresses (of copies); a
    tensor-map parameter (nvvm_tma.py) its parameter address, its map (over the launch's
    one copy of the buffer it names) in `memory.tensor_maps`."""
    block = kernel.regions[0].blocks.first
    assert block is not None
    names = [arg.name_hint or f"arg{i}" for i, arg in enumerate(block.args)]
    referenced = {a.buffer for a in args.values() if isinstance(a, TensorMapArgument)}
    unknown = sorted(set(args) - set(names) - {f"arg{i}" for i in range(len(names))} - referenced)
    if unknown:
        raise LaunchError(
            f"no parameter named {', '.join(unknown)}, and no tensor map refers to "
            f"{'them' if len(unknown) > 1 else 'it'} (parameters: {', '.join(names)})",
            kernel,
        )
    values: list[Value] = []
    outputs: dict[str, NDArray[Any]] = {}
    addresses: dict[str, int] = {}  # the launch's one copy of each buffer, in parameter order (as the PTX level)
    offsets = parameter_offsets(kernel, [arg.type for arg in block.args])
    for i, (arg, name) in enumerate(zip(block.args, names, strict=True)):
        argument = args.get(name, args.get(f"arg{i}"))
        if argument is None:
            raise LaunchError(f"missing argument '{name}' of type {arg.type}", kernel)
        if isinstance(argument, TensorMapArgument):
            if (problem := tensor_map_problem(kernel, i, arg.type)) is not None:
                raise LaunchError(f"argument '{name}' is a tensor map, but {problem} (spell it "
                                  f"%{name}: {TENSOR_MAP_SPELLING})", kernel)  # fmt: skip
            memory.tensor_maps[offsets[i]] = _bind_tensor_map(kernel, name, argument, args, memory, outputs, addresses)
            values.append(PARAM_BASE + offsets[i])
        elif byval_type(kernel, i) is not None:
            raise LaunchError(f"parameter '{name}' is byval: the NVVM level takes only tensor maps there "
                              "(tensormap:...)", kernel)  # fmt: skip
        elif name in addresses and isinstance(arg.type, llvm.LLVMPointerType):
            values.append(addresses[name])  # the buffer a tensor map before it copied
        else:
            values.append(_bind_value(kernel, name, arg.type, argument, memory, outputs))
            if isinstance(arg.type, llvm.LLVMPointerType):
                addresses[name] = cast(int, values[-1])
    return values, outputs


def _bind_value(
    kernel: Operation, name: str, t: Attribute, argument: Argument, memory: GlobalMemory,
    outputs: dict[str, NDArray[Any]],
) -> Value:  # fmt: skip
    """A pointer's (its buffer copied into global memory) or a scalar's value."""
    if not isinstance(argument, BufferArgument | ScalarArgument):
        raise LaunchError(f"argument '{name}' is a {type(argument).__name__}, which only a PTX kernel (.entry) "
                          "takes; pass a numpy array or a number", kernel)  # fmt: skip
    given = argument.value
    if isinstance(t, llvm.LLVMPointerType):
        if not isinstance(argument, BufferArgument):
            raise LaunchError(f"argument '{name}' is a pointer ({t}); pass a numpy array", kernel)
        buffer: NDArray[Any] = np.array(argument.value, copy=True, order="C")
        outputs[name] = buffer
        return memory.add(name, buffer)
    if isinstance(t, IntegerType | IndexType) and isinstance(given, int | np.integer):
        return canonical(int(cast(int, given)), width_of(cast(Attribute, t)))
    if isinstance(t, AnyFloat) and isinstance(given, int | float | np.integer | np.floating):
        return float(cast(float, given))
    raise LaunchError(f"argument '{name}' has type {t}; pass a matching scalar, got {given!r}", kernel)


def _bind_tensor_map(
    kernel: Operation, name: str, argument: TensorMapArgument, args: Mapping[str, Argument],
    memory: GlobalMemory, outputs: dict[str, NDArray[Any]], addresses: dict[str, int],
) -> TensorMap:  # fmt: skip
    """The map over the buffer it names: the copy a pointer parameter of that name has,
    else one of its own (an output under its name)."""
    base = addresses.get(argument.buffer)
    if base is None:
        target = args.get(argument.buffer)
        if not isinstance(target, BufferArgument):
            buffers = sorted(n for n, a in args.items() if isinstance(a, BufferArgument))
            raise LaunchError(f"argument '{name}' is a tensor map over '{argument.buffer}', which is no buffer "
                              f"argument (buffers: {', '.join(buffers) or 'none'})", kernel)  # fmt: skip
        outputs[argument.buffer] = np.array(target.value, copy=True, order="C")
        base = addresses[argument.buffer] = memory.add(argument.buffer, outputs[argument.buffer])
    try:
        return argument.bind(base)
    except TensorMapError as e:
        raise LaunchError(f"argument '{name}': {e}", kernel) from None


def clusters_of(launch: Geometry) -> Iterator[list[tuple[int, int, int]]]:
    """The CTA ids of each cluster, rank order x-fastest."""
    gx, gy, gz = launch.grid
    cx, cy, cz = launch.cluster
    for oz, oy, ox in product(range(0, gz, cz), range(0, gy, cy), range(0, gx, cx)):
        yield [(ox + x, oy + y, oz + z) for z, y, x in product(range(cz), range(cy), range(cx))]


@dataclass
class Prepared:
    """A checked launch: the program, the kernel's entry block, its dimensions as run,
    shared layout, arguments."""

    launch: Launch
    program: Program | PtxProgram
    function: Operation
    entry: Block
    geometry: Geometry
    layout: SharedLayout
    memory: GlobalMemory
    arguments: list[Value]
    outputs: dict[str, NDArray[Any]]
    make_warp: Callable[[Cluster, Cta, int, Geometry], Warp] | None = None
    """How to create a warp (None: an NVVM-level `Warp` of `program`); the PTX level's
    warps run a decoded PTX kernel (`.entry`) (interpreter/ptx/)."""
    points: str = "visible"
    """Where warps interleave (`prepare`)."""

    def rerun(self, module: ModuleOp, launch: Launch) -> Prepared:
        """This preparation for another run of the same launch (`launch` differs in its
        schedule or seed only), as `prepare` would give it: a run writes global memory,
        so it and the arguments' copies are bound afresh; the checks, the layout and the
        program, with the plans and static facts its first runs derived, are kept (random
        exploration runs hundreds of schedules of one launch). The PTX level prepares
        anew: its decoded program holds the parameter bytes."""
        if self.make_warp is not None:
            return prepare(module, launch, points=self.points)  # (the default implementations)
        memory = GlobalMemory()
        memory.sites.strict = launch.race_policy is RacePolicy.STRICT
        arguments, outputs = bind_arguments(self.function, launch.arguments, memory)
        return dataclasses.replace(self, launch=launch, memory=memory, arguments=arguments, outputs=outputs)


def prepare(
    module: ModuleOp, launch: Launch, functions: Sequence[WarpFunctions] | None = None, points: str = "visible"
) -> Prepared:
    """Check a launch and bind its arguments (every error is a `LaunchError`). `points`:
    where warps interleave (`Program`). A kernel that is a PTX kernel (`.entry`) runs at the PTX
    level (interpreter/ptx/)."""
    if (entry := find_entry(module, launch.kernel)) is not None:
        from xdsl_tmem.interpreter.ptx.kernel import decode_launch, directives

        geometry = check_geometry(entry, launch, directives(entry))
        decoded = decode_launch(module, launch, entry, points)
        decoded.memory.sites.strict = launch.race_policy is RacePolicy.STRICT
        return Prepared(
            launch, decoded.program, entry, entry.body.block, geometry, decoded.layout, decoded.memory, [],
            decoded.outputs, decoded.make_warp, points,
        )  # fmt: skip
    function = find_kernel(module, launch.kernel)
    geometry = check_launch(function, launch)
    program = Program(module, default_functions() if functions is None else functions, points)
    try:
        program.check_supported(function)
    except Unsupported as e:
        raise LaunchError(str(e), e.op) from None
    layout = shared_layout(module, launch.dynamic_shared_bytes)
    memory = GlobalMemory()
    memory.sites.strict = launch.race_policy is RacePolicy.STRICT
    arguments, outputs = bind_arguments(function, launch.arguments, memory)
    entry = function.regions[0].blocks.first
    assert entry is not None
    return Prepared(launch, program, function, entry, geometry, layout, memory, arguments, outputs, points=points)


def connect(state: Cluster, warps: Sequence[Warp], policy: FencePolicy) -> None:
    """Give the warps of a cluster their peers and happens-before clocks: components
    2i and 2i + 1 for warp i, then one per CTA's tensor core."""
    by_cta = {cta.rank: [w for w in warps if w.cta is cta] for cta in state.ctas}
    size = 2 * len(warps) + len(state.ctas)
    state.clock_size, state.tc_base = size, 2 * len(warps)
    for i, warp in enumerate(warps):
        warp.cluster_warps = by_cta
        warp.clock = WarpClock(size, 2 * i, 2 * i + 1, policy)


class ClusterRun:
    """One cluster of a launch on the machine model: its CTAs, warps and tensor cores."""

    def __init__(self, prepared: Prepared, ctaids: Sequence[tuple[int, int, int]]):
        launch = prepared.geometry
        races.new_cluster(prepared.memory)
        ctas = [Cta(rank, ctaid, prepared.layout) for rank, ctaid in enumerate(ctaids)]
        self.state = state = Cluster(ctas, prepared.memory, total_threads=launch.threads * len(ctas))
        program = prepared.program

        def nvvm_warp(cluster: Cluster, cta: Cta, index: int, geometry: Geometry) -> Warp:
            assert isinstance(program, Program)
            return Warp(program, cluster, cta, index, geometry)

        make_warp = prepared.make_warp or nvvm_warp
        self.warps = [make_warp(state, cta, w, launch) for cta in ctas for w in range(launch.warps)]
        connect(state, self.warps, prepared.launch.fence_policy)
        for warp in self.warps:
            warp.start(prepared.entry, prepared.arguments)
        self.cores = [TensorCore(state, cta, f"tensor core of CTA {cta.rank}") for cta in ctas]
        self.agents: list[Warp | TensorCore] = [*self.warps, *self.cores]

    def copy(self) -> ClusterRun:
        """An independent copy of this machine state (`Cluster.copy`)."""
        memo = Memo()
        clone = ClusterRun.__new__(ClusterRun)
        clone.state = self.state.copy(memo)
        clone.warps = [w.copy(clone.state, memo) for w in self.warps]
        by_cta = {cta.rank: [w for w in clone.warps if w.cta is cta] for cta in clone.state.ctas}
        for warp in clone.warps:
            warp.cluster_warps = by_cta
        clone.cores = [TensorCore(clone.state, clone.state.ctas[core.cta.rank], core.name) for core in self.cores]
        clone.agents = [*clone.warps, *clone.cores]
        return clone

    def release(self) -> None:
        """Free a copy nothing will run or read again, now (`Cluster.release`), and break
        the cycles that would keep the rest until a full garbage collection: each warp's
        generators hold it, and every warp holds the cluster's warps by CTA."""
        self.state.release()
        for warp in self.warps:
            warp.stack, warp.cluster_warps = [], {}

    def runnable(self) -> list[int]:
        return [i for i, agent in enumerate(self.agents) if agent.runnable()]

    def data_bytes(self) -> int:
        """The memory a copy takes, about: TMEM, shared and global memory."""
        state = self.state
        ctas = sum(
            cta.tmem_nbytes + cta.tmem_written.nbytes + cta.smem.nbytes + cta.shadow.nbytes for cta in state.ctas
        )
        return ctas + sum(buffer.data.nbytes + buffer.shadow.nbytes for buffer in state.memory.buffers)

    def live_warps(self) -> list[Warp]:
        return [w for w in self.warps if w.status is not Status.DONE]

    def end_checks(self) -> None:
        """What must hold when every warp has exited (docs/semantics.md §9.8, §9.14)."""
        for cta in self.state.ctas:
            for records in cta.inflight.values():
                if records:
                    record = records[0]
                    raise Hazard(
                        "missing-commit",
                        f"{record.op.name} by warp {record.warp} lane {record.lane} is tracked by no tcgen05.commit: "
                        "nothing waits for it to complete before the kernel exits",
                        [(record.op, "the MMA")],
                    )
            for start_col, n in sorted(cta.allocator.allocations.items()):
                op = cta.alloc_sites.get(start_col)
                raise Hazard(
                    "missing-dealloc",
                    f"CTA {cta.rank} exits with TMEM columns {start_col}-{start_col + n - 1} still allocated "
                    "(all TMEM must be deallocated before the kernel exits)",
                    [(op, "the allocation")] if op is not None else [],
                )

    def diagnose_deadlock(self, blocked: list[Warp]) -> tuple[str, str] | None:
        """The hazard class that explains a deadlock: MMAs no commit tracks, or the oldest
        unmet barrier phase waits for thread arrivals nobody will make."""
        for cta in self.state.ctas:
            for records in cta.inflight.values():
                if records:
                    record = records[0]
                    return (
                        "missing-commit",
                        f"{record.op.name} by warp {record.warp} lane {record.lane} was never committed, so the "
                        "barrier its commit should complete never completes",
                    )
        if any(w.wake is not None and w.wake.kind in ("columns", "pair") for w in blocked):
            return None  # a warp stuck in tcgen05.alloc may be the one whose arrivals are missing
        waits: list[tuple[int, MBarrier, str]] = []
        for warp in blocked:
            if isinstance(warp.blocked_wait, tuple):
                address, parity = warp.blocked_wait
                cta, offset = self.state.cta_of(address)
                bar = cta.mbarriers.get(offset)
                if bar is not None:
                    seen = warp.seen_phases.get((cta.rank, offset), 0)
                    target = seen if (seen & 1) != (parity & 1) else seen + 1
                    waits.append((target, bar, self.state.describe_barrier(address)))
        if not waits:
            return None
        _, bar, where = min(waits, key=lambda w: w[0])
        if bar.commit_arrivals:
            return (
                "missing-commit",
                f"mbarrier {where} is completed by tcgen05.commit, and no commit for its phase {bar.completed} "
                "was issued",
            )
        return (
            "missing-epilogue-arrive",
            f"mbarrier {where} needs {bar.pending} more thread arrivals for its phase {bar.completed}, and no "
            "live warp will make them",
        )


def run_kernel(
    module: ModuleOp,
    kernel: str,
    *,
    functions: Sequence[WarpFunctions] | None = None,
    tracer: Tracer | None = None,
    keep_log: bool = True,
    **launch: Unpack[LaunchOptions],
) -> RunResult:
    """Run `@kernel` of `module` on the machine model and return its buffers.

    The launch keywords (`LaunchOptions`): `block` (required), `grid`, `cluster`, `args`,
    `schedule`, `seed`, `max_steps`, `fence_policy`, `race_policy`. `args` maps parameter names (or
    `arg0`, `arg1`, ...) to numpy arrays (pointer parameters; copied, and returned in
    `RunResult.outputs`) or scalars. The grid defaults to one cluster, the cluster to the
    kernel's `nvvm.cluster_dim`. Clusters run one after another; within a cluster, warps
    interleave at synchronisation points under `schedule` ("rr" round-robin, or "random"
    with `seed`). `fence_policy` is the happens-before model of the hazard checks
    (hazards.py): "strict" (PTX) or "mojo". `race_policy` says whether an unordered write
    of the bytes the write it races with left is a data race: "same-value" (the default:
    no, it is counted in `report.same_value_races`) or "strict" (yes). The rest as
    `run_launch`.
    """
    if "block" not in launch:
        launch["block"] = required_block(module, kernel)
    return run_launch(module, Launch.create(kernel, **launch), functions=functions, tracer=tracer, keep_log=keep_log)


def required_block(module: ModuleOp, kernel: str) -> Dim3:
    """The block a kernel fixes: a PTX kernel's `.reqntid`, an NVVM kernel's `nvvm.reqntid`.
    A `.maxntid` alone only bounds the block (PTX ISA, "Performance-Tuning Directives"), so
    then, as without either, the block must be given."""
    if (entry := find_entry(module, kernel)) is not None:
        from xdsl_tmem.interpreter.ptx.kernel import directives

        declared = directives(entry)
        reqntid, maxntid, where = declared[".reqntid"], declared[".maxntid"], (".reqntid", ".maxntid")
        op: Operation = entry
    else:
        op = find_kernel(module, kernel)
        reqntid, maxntid = _int_array(op.attributes.get("nvvm.reqntid")), _int_array(op.attributes.get("nvvm.maxntid"))
        where = ("nvvm.reqntid", "nvvm.maxntid")
    if reqntid is not None:
        return dim3(list(reqntid), where[0])
    bound = f" ({where[1]} = {list(maxntid)} only bounds it)" if maxntid is not None else ""
    raise LaunchError(f"kernel {kernel} declares no {where[0]}, so the block must be given{bound}", op)


Progress = Callable[[int, int | None], None]
"""Told the work done so far and its total (None: not known beforehand) as a run or an
exploration goes on: the drivers draw a progress bar with it (tools/progress.py)."""


@single_threaded_blas()
@older_objects_frozen()
def run_launch(
    module: ModuleOp,
    launch: Launch,
    *,
    functions: Sequence[WarpFunctions] | None = None,
    tracer: Tracer | None = None,
    keep_log: bool = True,
    progress: Progress | None = None,
    prepared: Prepared | None = None,
) -> RunResult:
    """Run `launch` on the machine model (`run_kernel`). A `tracer` records the timeline of
    the run, also of a failing one (trace.py). Without `keep_log` (and without a tracer),
    `report.tmem_events` and `schedule_trace` stay empty, so that a long run takes bounded
    memory. `progress` is told the clusters run so far, of the grid's. `prepared`: the
    launch already prepared (`Prepared.rerun`; `functions` is then not used)."""
    prepared = prepare(module, launch, functions) if prepared is None else prepared
    report = RunReport(launch.kernel, prepared.geometry, launch.schedule, launch.seed)
    keep_log = keep_log or tracer is not None
    scheduler = Scheduler(launch.schedule, launch.seed, observer=tracer, keep_trace=keep_log)
    max_steps = launch.limits.max_steps
    start = time.perf_counter()
    runs: list[ClusterRun] = []
    steps = 0  # the limit is for the whole launch: clusters run one after another
    clusters = list(clusters_of(prepared.geometry))
    for done, ctaids in enumerate(clusters):
        if progress is not None:
            progress(done, len(clusters))
        run = ClusterRun(prepared, ctaids)
        run.state.keep_log = keep_log
        run.state.replayable = False  # never copied: keep no replay log
        runs.append(run)
        if tracer is not None:
            tracer.start_cluster(run.state, run.warps, run.cores)
        try:
            scheduler.run(run.agents, run.warps, max_steps - steps)
            steps += run.state.step
            run.end_checks()
            for cta in run.state.ctas:  # its CTAs have exited: no later access can race with theirs
                cta.shadow.drop()
        except (Deadlock, StepLimit, OpError, Hazard) as e:
            if tracer is not None:
                tracer.end_cluster(run.warps, failed=True)
            _finish(report, runs, scheduler, start)
            failure = failure_of(run, e, report, prepared)
            _drop_shadows(prepared, runs)
            if isinstance(failure, KernelStepLimit):
                failure.max_steps = max_steps  # the scheduler saw what earlier clusters left
            raise failure from None
        if tracer is not None:
            tracer.end_cluster(run.warps, failed=False)
    _finish(report, runs, scheduler, start)
    _drop_shadows(prepared, runs)
    return RunResult(prepared.outputs, report)


def _drop_shadows(prepared: Prepared, runs: list[ClusterRun]) -> None:
    """Free the race-check shadows of a finished launch now. Its machine state lies in
    reference cycles (warps and their cluster, the program's closures), which only the
    cyclic garbage collector frees, at some later allocation count; the shadows (16 bytes
    per byte of memory) are most of that state, and a caller running many launches would
    otherwise hold several of them at once."""
    for buffer in prepared.memory.buffers:
        buffer.shadow.drop()
    for run in runs:
        for cta in run.state.ctas:
            cta.shadow.drop()


def failure_of(
    run: ClusterRun, error: Exception, report: RunReport, prepared: Prepared
) -> KernelDeadlock | KernelHazard | KernelStepLimit:
    """The verdict an exception raised while running `run` stands for. An op the model
    cannot run is not a verdict: it raises `LaunchError` (exit code 1)."""
    match error:
        case Deadlock():
            blocked = [BlockedWarp(w.name, w.blocked_op, _deadlock_reason(w)) for w in error.warps]
            return KernelDeadlock(blocked, report, run.diagnose_deadlock(error.warps))
        case StepLimit():
            live = [BlockedWarp(w.name, w.next_op(), _activity(w)) for w in run.live_warps()]
            return KernelStepLimit(error.limit, report, live)
        case OpError() if isinstance(error.error, Hazard):
            hazard = error.error
            return KernelHazard(hazard.kind, hazard.message, error.op, error.where, report, hazard.related)
        case OpError():
            raise LaunchError(f"xdsl-tmem-run: {error.op.name}: {error.error}", error.op) from None
        case Hazard():
            op, _ = error.related[0] if error.related else (prepared.function, "")
            return KernelHazard(error.kind, error.message, op, "the kernel's exit", report, error.related[1:])
        case _:
            raise error


def _deadlock_reason(warp: Warp) -> str:
    """Why a warp is blocked at the deadlock. An mbarrier wait is described with the barrier's
    state now, not when the warp blocked: TMA bytes may have landed since (lowering its
    tx-count) without completing the phase, which does not wake the warp."""
    if warp.blocked_wait is None:
        return warp.blocked_reason
    address, parity = warp.blocked_wait
    return mbarrier_wait_reason(warp.cluster, address, parity) + warp.blocked_where


def _activity(warp: Warp) -> str:
    """What a live warp was doing when the run stopped."""
    if warp.status is Status.BLOCKED:
        return f"blocked: {warp.blocked_reason}"
    if warp.poll_version == warp.cluster.version and warp.blocked_reason:  # a failed test, nothing changed since
        return f"spinning: {warp.blocked_reason}"
    return "running"


def _finish(report: RunReport, runs: list[ClusterRun], scheduler: Scheduler, start: float) -> None:
    report.wall_seconds = time.perf_counter() - start
    for run in runs:
        report.instructions += run.state.step
        report.mma_count += run.state.mma_count
        report.tmem_events += run.state.tmem_events
        report.sync_points += sum(w.sync_points for w in run.warps)
    report.schedule_trace = scheduler.trace
    if runs:  # (the clusters share the launch's global memory and its sites)
        sites = runs[0].state.memory.sites
        report.same_value_races, report.first_same_value = sites.same_value, sites.first_same_value

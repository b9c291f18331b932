"""Warps that can stop between any two operations, and the scheduler that interleaves them.

xDSL's `Interpreter.run_ssacfg_region` runs a region to completion by recursion, so a
warp waiting on an mbarrier would block the Python thread (one OS thread per warp works
around it, slowly: docs/interpreter.md, "Performance"). Here each warp keeps its own
explicit stack of frames instead:

* a `BlockFrame` walks the ops of one block under an active-lane mask;
* a `GenFrame` is an op with regions (`scf.for`, `scf.if`, `func.call`, tmem region
  ops) whose implementation is a generator: it yields `RunBlock(block, args, mask)` to
  run a region and receives the values its terminator returns, or `Perform(fn, args)`
  to run a step that may block; its return value is the op's results.

Operation implementations stay xDSL's: `InterpreterFunctions` classes with `@impl` /
`@impl_terminator` methods that receive the `Warp` (an `Interpreter`) and the operand
values, registered per dialect. `@impl_structured` marks the generator implementations.
An op that cannot proceed raises `Blocked` and is retried when the warp runs again.

Ops that touch state other warps can see (memory, barriers, TMEM, the tensor core)
are *sync points*, declared on the op class (`SyncPoint`, dialects/traits.py): a warp runs until it reaches the
second sync point of its turn, so the scheduler interleaves warps exactly at the
points where their order can matter.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeAlias, TypeVar, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    PythonValues,
    ReturnedValues,
    Successor,
    TerminatorValue,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation, OptOperandDef, OptResultDef
from xdsl.traits import IsTerminator

from xdsl_tmem.dialects.traits import PtxLevelOnly, is_sync_point
from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter.hazards import WarpClock
from xdsl_tmem.interpreter.launch import Geometry
from xdsl_tmem.interpreter.machine import (
    RANK_SHIFT,
    AsyncOp,
    Blocked,
    Cluster,
    Cta,
    Hazard,
    MBarrier,
    Memo,
    StageHold,
    Wake,
    shallow_copy,
)
from xdsl_tmem.interpreter.values import WARP, Mask, Value, format_lanes

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.bulk_copy import BulkReads

# --------------------------------------------------------------------------------------
# Structured (region-holding) implementations
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class RunBlock:
    """Run `block` with `args` bound to its arguments, under `mask` (None: the current one);
    `fresh_env` starts a new SSA environment (a function call)."""

    block: Block
    args: Sequence[Value]
    mask: Mask | None = None
    fresh_env: bool = False


@dataclass(frozen=True)
class Step:
    """What a step does to mbarriers, as the implementation that runs it declares it
    (`WarpFunctions.effect`, `Perform.effect`), for the explorer's partial-order
    reduction: `wait` on `barrier` for `parity`, `arrive` on each of `barriers` (`count`
    arrivals each), `local` (commutes with every other agent's steps), or `other`."""

    kind: str
    barriers: tuple[int, ...] = ()
    count: int = 0
    parity: int = 0


OTHER = Step("other")
LOCAL = Step("local")


@dataclass(slots=True)
class Perform:
    """Run `fn(*args)` as a sync point that may raise `Blocked` (then it is retried).
    `effect(*args)`, when given, is what that step does to mbarriers (`Step`)."""

    fn: Callable[..., Value]
    args: tuple[Value, ...] = ()
    effect: Callable[..., Step] | None = None


Request: TypeAlias = RunBlock | Perform
Env: TypeAlias = dict[int, Value]
"""A function activation's values by `Program.slot`."""
StructuredGen: TypeAlias = Generator[Request, Any, PythonValues]
_FT = TypeVar("_FT", bound=InterpreterFunctions)
_T = TypeVar("_T")
_OpT = TypeVar("_OpT", bound=Operation)
StructuredImpl: TypeAlias = Callable[[_FT, "Warp", _OpT, PythonValues], StructuredGen]

_STRUCTURED_KEY = "__structured_op_type"


def impl_structured(
    op_type: type[_OpT],
) -> Callable[[StructuredImpl[_FT, _OpT]], StructuredImpl[_FT, _OpT]]:
    """Marks the generator implementation of an op with regions (see module docstring)."""

    def annotate(func: StructuredImpl[_FT, _OpT]) -> StructuredImpl[_FT, _OpT]:
        setattr(func, _STRUCTURED_KEY, op_type)
        return func

    return annotate


class WarpFunctions(InterpreterFunctions):
    """Base of our per-dialect implementation classes."""

    def __init__(self) -> None:
        super().__init__()
        self._static: dict[int, tuple[Operation, Any]] = {}
        """id(op) → (op, its static facts): keyed by the id, since an op hashes in Python."""

    def effect(self, warp: Warp, op: Operation, values: Sequence[Value]) -> Step:
        """What running `op` (one of ours) on `values` next does to mbarriers; next to the
        implementations so the explorer never re-derives the barrier arithmetic."""
        return OTHER

    def refusal(self, op: Operation) -> str | None:
        """Why `op` (one of ours) cannot run, for an option of it the model does not
        execute (reported at the op before running), or None."""
        return None

    def static(self, op: _OpT, compute: Callable[[_OpT], _T]) -> _T:
        """`compute(op)`, once per op: what an implementation derives from the op's
        types and properties (widths, layouts), off the hot path."""
        entry = self._static.get(id(op))
        if entry is None or entry[0] is not op:
            entry = self._static[id(op)] = (op, compute(op))
        return entry[1]

    @classmethod
    def structured_impls(cls) -> Iterable[tuple[type[Operation], Callable[..., StructuredGen]]]:
        seen: set[type[Operation]] = set()
        for klass in cls.mro():
            for value in klass.__dict__.values():
                op_type = getattr(value, _STRUCTURED_KEY, None)
                if op_type is not None and op_type not in seen:
                    seen.add(op_type)
                    yield op_type, value


def present(op: IRDLOperation) -> frozenset[str]:
    """The names of the optional operands and results `op` has: for `WarpFunctions.static`
    (`name in self.static(op, present)`), as their accessors decode the operand segment
    sizes at each read."""
    definition = type(op).get_irdl_definition()
    return frozenset(
        name
        for name, field in (*definition.operands, *definition.results)
        if isinstance(field, OptOperandDef | OptResultDef) and getattr(op, name) is not None
    )


# --------------------------------------------------------------------------------------
# The program: dispatch table and per-block plans
# --------------------------------------------------------------------------------------


class Kind(Enum):
    SIMPLE = auto()
    STRUCTURED = auto()
    TERMINATOR = auto()


SIMPLE = Kind.SIMPLE


class Planned(NamedTuple):
    """One op with everything the hot loop needs precomputed."""

    op: Operation
    operands: tuple[int, ...]
    """Environment slots of the operands (see `Program.slot`)."""
    results: tuple[int, ...]
    kind: Kind
    ft: InterpreterFunctions
    fn: Callable[..., Any]
    sync: bool
    fetch: Callable[[Env], tuple[Value, ...]] | None
    """The operand values from an environment, for two operands or more (one C call
    instead of a comprehension); the hot loop reads zero or one operand itself."""
    single: bool
    """The op has exactly one result (stored without zipping)."""


def _unwrapped(fn: Callable[..., OpImplResult], kind: Kind) -> Callable[..., Any]:
    """The function an xDSL `@impl` (`@impl_terminator`) wraps, which returns the op's
    results (the terminator value and results) themselves: the wrapper adds a call and an
    `OpImplResult` per executed op (a tenth of a register op's time). An implementation
    that is not such a wrapper is adapted instead."""
    code = fn.__code__
    if code.co_name == "impl" and code.co_freevars == ("func",) and fn.__closure__ is not None:
        return cast(Callable[..., Any], fn.__closure__[0].cell_contents)

    def results(ft: InterpreterFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> Any:
        result = fn(ft, interp, op, args)
        return result.values if kind is Kind.SIMPLE else (result.terminator_value, result.values)

    return results


class Unsupported(Exception):
    """An op the interpreter has no implementation for (reported before running)."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


class Program:
    """A module plus the implementations that run it; shared by all warps."""

    def __init__(self, module: ModuleOp, functions: Sequence[WarpFunctions], points: str = "visible"):
        """`points`: where warps interleave — before every op that touches shared state
        ("visible", ops declaring `SyncPoint`) or only before synchronisation ("barriers",
        `Synchronizes`: what exhaustive exploration branches on; dialects/traits.py)."""
        self.module = module
        self.functions = functions
        self.table: dict[type[Operation], tuple[Kind, WarpFunctions, Callable[..., Any], bool]] = {}
        for ft in functions:
            for op_type, fn in type(ft)._impls():  # pyright: ignore[reportPrivateUsage]
                kind = Kind.TERMINATOR if op_type.has_trait(IsTerminator) else Kind.SIMPLE
                self.table[op_type] = (kind, ft, _unwrapped(fn, kind), is_sync_point(op_type, points))
            for op_type, fn in type(ft).structured_impls():
                self.table[op_type] = (Kind.STRUCTURED, ft, fn, is_sync_point(op_type, points))
        self._plans: dict[int, tuple[Block, tuple[Planned, ...]]] = {}
        self._slots: dict[SSAValue, int] = {}
        self._block_slots: dict[int, tuple[Block, tuple[int, ...]]] = {}
        """id(block) → (block, ...): keyed by the id, since a block hashes in Python."""

    def slot(self, value: SSAValue) -> int:
        """The integer key of an SSA value in a warp's environment (SSA values hash in
        Python, ints in C: environment lookups are the interpreter's hottest path)."""
        slot = self._slots.get(value)
        if slot is None:
            slot = self._slots[value] = len(self._slots)
        return slot

    def block_slots(self, block: Block) -> tuple[int, ...]:
        entry = self._block_slots.get(id(block))
        if entry is None or entry[0] is not block:
            entry = self._block_slots[id(block)] = (block, tuple(self.slot(arg) for arg in block.args))
        return entry[1]

    def check_supported(self, root: Operation) -> None:
        """Raise `Unsupported` for the first op under `root` without an implementation."""
        for op in root.walk():
            if op is not root and (entry := self.table.get(type(op))) is not None:
                if (why := entry[1].refusal(op)) is not None:
                    raise Unsupported(op, f"xdsl-tmem-run: {why}")
            elif op is not root:
                if op.has_trait(PtxLevelOnly):
                    raise Unsupported(op, f"xdsl-tmem-run: {op.name} is not executed at the NVVM level yet")
                raise Unsupported(op, f"xdsl-tmem-run: no interpreter implementation for '{op.name}'")

    def plan(self, block: Block) -> tuple[Planned, ...]:
        entry = self._plans.get(id(block))
        if entry is None or entry[0] is not block:
            planned: list[Planned] = []
            for op in block.ops:
                kind, ft, fn, sync = self.table[type(op)]
                operands = tuple(self.slot(v) for v in op.operands)
                results = tuple(self.slot(v) for v in op.results)
                fetch = itemgetter(*operands) if len(operands) > 1 else None
                planned.append(Planned(op, operands, results, kind, ft, fn, sync, fetch, len(results) == 1))
            entry = self._plans[id(block)] = (block, tuple(planned))
        return entry[1]


# --------------------------------------------------------------------------------------
# Warps
# --------------------------------------------------------------------------------------


class BlockFrame:
    __slots__ = ("block", "env", "mask", "pc", "plan", "slots")

    def __init__(self, block: Block, plan: tuple[Planned, ...], env: Env, mask: Mask, slots: tuple[int, ...]):
        self.block = block
        self.plan = plan
        self.pc = 0
        self.env = env
        self.mask = mask
        self.slots = slots
        """`Program.block_slots(block)`: where its arguments go in `env`."""


class GenFrame:
    """An op with regions in progress: its generator, and what it was created with and
    sent so far (a copy of the warp re-creates the generator by replaying them). `sent`
    grows by one entry per loop iteration, so it is kept only where the state may be
    copied (`Cluster.replayable`); a plain run keeps just the count."""

    __slots__ = ("args", "env", "gen", "mask", "pending", "planned", "sends", "sent")

    def __init__(
        self, planned: Planned, gen: StructuredGen, env: Env, mask: Mask, args: PythonValues, replayable: bool = True
    ):
        self.planned = planned
        self.gen = gen
        self.pending: Perform | None = None
        self.env = env
        self.mask = mask
        self.args = args
        self.sent: list[Any] | None = [] if replayable else None
        self.sends = 0


class Status(Enum):
    READY = auto()
    BLOCKED = auto()
    DONE = auto()


class StepLimit(Exception):
    """The run executed more warp-instructions than allowed (exit code 4)."""

    def __init__(self, limit: int):
        super().__init__(f"step limit {limit}")
        self.limit = limit


class OpError(Exception):
    """A hazard or unsupported value met while running `op` in agent `where` (a warp or
    a tensor core)."""

    def __init__(self, op: Operation, where: str, error: Exception):
        super().__init__(str(error))
        self.op = op
        self.where = where
        self.error = error


class Warp(Interpreter):
    """One warp of one CTA: 32 lanes executing in lock step under an active mask.

    It is an xDSL `Interpreter` so that `@impl` methods receive it, but it runs ops
    from its own frame stack (`run`) rather than by recursion."""

    def __init__(self, program: Program, cluster: Cluster, cta: Cta, index: int, launch: Geometry):
        super().__init__(program.module, index_bitwidth=64)
        self.program = program
        self.cluster = cluster
        self.cta = cta
        self.index = index
        self.launch = launch
        linear = index * WARP + np.arange(WARP, dtype=np.uint32)
        self.live: Mask = linear < launch.threads
        self.live_lanes = [int(i) for i in np.flatnonzero(self.live)]
        self._lanes_mask: Mask = self.live
        self._lanes = self.live_lanes
        """`active_lanes` of the last mask it was asked about other than `live`."""
        self.full = len(self.live_lanes) == WARP
        self.arrivers: tuple[list[int], str] | None = None
        """(`live_lanes`, how an arrival by them names them): nvvm.py's, made on first use."""
        bx, by, _ = launch.block
        self.thread_coords = (linear % bx, (linear // bx) % by, linear // (bx * by))
        self.name = f"warp {index}" if len(cluster.ctas) == 1 else f"CTA {cta.rank} warp {index}"
        self.cluster_warps: dict[int, list[Warp]] = {}
        """Every warp of the cluster by CTA rank (filled in by the launcher)."""
        self.stack: list[BlockFrame | GenFrame] = []
        self.mask: Mask = self.live
        self.status = Status.READY
        self.blocked_reason = ""
        self.blocked_op: Operation | None = None
        self.blocked_version = -1
        self.wake: Wake | None = None
        self.blocked_wait: tuple[int, int] | None = None
        self.blocked_where = ""
        """Where the warp blocked, appended to its reason (a PTX line); empty at the NVVM level."""
        """(barrier address, parity) of the mbarrier wait the warp is blocked at."""
        self.op_state: Any = None
        """Scratch state of a blocking op that has partly happened (e.g. bar.sync arrived)."""
        self.pending_tmem: list[AsyncOp] = []
        """This warp's tcgen05.ld / st not yet waited for."""
        self.bulk_reads: BulkReads | None = None
        """Its lanes' bulk stores whose source reads no wait completed yet (bulk_copy.py;
        never changed in place, so copies share it)."""
        self.cluster_arrival: int | None = None
        self.clock = WarpClock(0, 0, 0, FencePolicy.MOJO)
        """Happens-before knowledge (hazards.py); sized by the launcher."""
        self.seen_phases: dict[tuple[int, int], int] = {}
        """(CTA, barrier offset) → phases this warp's waits on it have consumed."""
        self.last_sync = ""
        """This warp's last successful synchronisation, for hazard reports."""
        self.site_bits: dict[int, int] = {}
        """id(op) → its access site's number shifted into place (`races._stamp`'s cache;
        the sites of a launch are shared by every copy of its state, so copies share it)."""
        self.acquires = 0
        """Successful mbarrier waits so far (the stale-accumulator check, hazards.py)."""
        self.mma_stages: dict[tuple[int, int], StageHold] = {}
        """(ring barriers, stage index) → the accumulator stage this warp holds for MMA (tmem level)."""
        self.unpublished_inits: list[MBarrier] = []
        """mbarriers this warp initialised since its last fence.mbarrier_init."""
        self.poll_failed: str | None = None
        """Set by a non-blocking barrier test that failed (the warp is spinning): why."""
        self.poll_version = -1
        self.spin_woken: Operation | None = None
        """The failed test this warp was last woken from with nothing changed (`wake_spinning`)."""
        self.sync_points = 0

    def copy(self, cluster: Cluster, memo: Memo) -> Warp:
        """This warp in a copy of the machine state. Generators of ops in progress are
        re-created and replayed with what they were sent (they have no side effects of
        their own: those are `Perform` steps the executor runs)."""
        clone = shallow_copy(self)
        clone.cluster = cluster
        clone.cta = cluster.ctas[self.cta.rank]
        clone.clock = self.clock.copy()
        clone.seen_phases = dict(self.seen_phases)
        clone.mma_stages = dict(self.mma_stages)
        clone.unpublished_inits = [memo.copy(b, MBarrier.copy) for b in self.unpublished_inits]
        clone.pending_tmem = [memo.record(r) for r in self.pending_tmem]
        if self.op_state is not None and not isinstance(self.op_state, int):
            clone.op_state = memo.copy(self.op_state)
        envs: dict[int, Env] = {}

        def env_of(env: Env) -> Env:
            copied = envs.get(id(env))
            if copied is None:
                copied = envs[id(env)] = dict(env)
            return copied

        stack: list[BlockFrame | GenFrame] = []
        for frame in self.stack:
            if isinstance(frame, BlockFrame):
                block_frame = BlockFrame(frame.block, frame.plan, env_of(frame.env), frame.mask, frame.slots)
                block_frame.pc = frame.pc
                stack.append(block_frame)
                continue
            planned = frame.planned
            clone.mask = frame.mask
            gen = cast(StructuredGen, planned.fn(planned.ft, clone, planned.op, frame.args))
            if frame.sent is None:
                raise RuntimeError("Warp.copy: the run was started with Cluster.replayable off")
            gen_frame = GenFrame(planned, gen, env_of(frame.env), frame.mask, frame.args)
            request: Any = None
            for value in frame.sent:
                request = gen.send(value)
            gen_frame.sent = list(frame.sent)
            gen_frame.sends = frame.sends
            gen_frame.pending = request if frame.pending is not None else None
            stack.append(gen_frame)
        clone.stack = stack
        clone.mask = self.mask
        return clone

    # -- helpers for implementations ----------------------------------------------------

    def converged(self) -> bool:
        return self.mask is self.live or bool((self.mask == self.live).all())

    def require_converged(self, what: str) -> None:
        """`.sync.aligned` ops must be executed by every live lane of the warp."""
        if not self.converged():
            raise Hazard(
                "divergent-sync-aligned",
                f"{what} is .sync.aligned but {self.name} executes it with lanes {format_lanes(self.mask)} "
                f"of {format_lanes(self.live)} active",
            )

    def lane_index(self) -> NDArray[np.intp] | None:
        """The active lanes as an index array, or None when all 32 lanes are active."""
        if self.mask is self.live and self.full:
            return None
        return np.flatnonzero(self.mask)

    def active_lanes(self) -> list[int]:
        """The active lanes (callers do not change the list)."""
        mask = self.mask
        if mask is self.live:
            return self.live_lanes
        if mask is not self._lanes_mask:
            # Masks are never written in place: the lanes of the last one are kept (a
            # divergent region runs many ops under one mask).
            self._lanes_mask, self._lanes = mask, [int(i) for i in np.flatnonzero(mask)]
        return self._lanes

    # -- execution --------------------------------------------------------------------

    def start(self, entry: Block, args: Sequence[Value]) -> None:
        slots = self.program.block_slots(entry)
        env: Env = dict(zip(slots, args, strict=True))
        self.stack = [BlockFrame(entry, self.program.plan(entry), env, self.live, slots)]
        self.mask = self.live

    def runnable(self) -> bool:
        version = self.cluster.version
        if self.status is Status.READY:
            return self.poll_version != version
        if self.status is not Status.BLOCKED:
            return False
        return self.cluster.ready(self.wake) if self.wake is not None else self.blocked_version != version

    def next_op(self) -> Operation | None:
        """The op this warp's next turn starts with (a sync point, but at the start)."""
        if self.status is Status.BLOCKED:
            return self.blocked_op
        if not self.stack:
            return None
        frame = self.stack[-1]
        return frame.planned.op if isinstance(frame, GenFrame) else frame.plan[frame.pc].op

    fp_results = False
    """Whether the warp's ops define IEEE overflow, division by zero and invalid operations
    by their results (inf, NaN: the PTX level's value semantics), so that numpy's warnings
    about them are off while it runs: `run` turns them off, and a `Scheduler` once for a
    whole run, which then runs the warp's turns with `turn`."""

    def turn(self, limit: int) -> Status:
        """One turn for a `Scheduler` (`run`; numpy's floating-point warnings off if
        `fp_results`)."""
        return self.run(limit)

    def run(self, limit: int, to_first: bool = False) -> Status:
        """Execute until the second sync point of this turn (with `to_first`, until the
        first, without running it), a block, or the end."""
        cluster = self.cluster
        stack = self.stack
        did_sync = to_first
        while stack:
            frame = stack[-1]
            if isinstance(frame, GenFrame):
                if did_sync:
                    self.status = Status.READY  # (`_yield`, inline: once per turn)
                    return Status.READY
                self._perform(frame)
                if self.status is Status.BLOCKED:
                    return Status.BLOCKED
                did_sync = True
                continue
            plan, env, pc = frame.plan, frame.env, frame.pc
            # The hot loop: straight-line ops of one block.
            while True:
                planned = plan[pc]
                op, operands, results, kind, ft, fn, sync, fetch, single = planned
                if sync and did_sync:
                    frame.pc = pc
                    self.status = Status.READY
                    return Status.READY
                if cluster.step >= limit:
                    frame.pc = pc
                    raise StepLimit(limit)
                args = fetch(env) if fetch is not None else (env[operands[0]],) if operands else ()
                cluster.step += 1
                try:
                    if kind is SIMPLE:
                        if single:
                            env[results[0]] = fn(ft, self, op, args)[0]
                        else:
                            env.update(zip(results, fn(ft, self, op, args), strict=True))
                        pc += 1
                        if sync:
                            did_sync = True
                            self._synced(op)
                        continue
                    frame.pc = pc
                    self._control(frame, planned, args)
                except Blocked as b:
                    cluster.step -= 1
                    frame.pc = pc
                    return self._block(op, b)
                except (Hazard, Unsupported, ValueError, OverflowError) as e:
                    frame.pc = pc
                    raise OpError(op, self.name, e) from e
                if sync:
                    did_sync = True
                    self._synced(op)
                break
            if self.status is Status.DONE:
                return Status.DONE
        self.status = Status.DONE
        return Status.DONE

    def _synced(self, op: Operation) -> None:
        """Bookkeeping after a sync point completed."""
        self.sync_points += 1
        self.op_state = None
        cluster = self.cluster
        cluster.version += 1
        if self.poll_failed is not None:
            # A failed barrier test: do not run again until something changes.
            self.blocked_reason, self.blocked_op = self.poll_failed, op
            self.poll_failed = None
            self.poll_version = cluster.version
        else:
            self.spin_woken = None

    def _perform(self, frame: GenFrame) -> None:
        """Run a structured op's pending `Perform` step (a sync point that may block)."""
        request = frame.pending
        assert request is not None
        try:
            value = request.fn(*request.args)
        except Blocked as b:
            self._block(frame.planned.op, b)
            return
        except (Hazard, Unsupported, ValueError) as e:
            raise OpError(frame.planned.op, self.name, e) from e
        self.status = Status.READY
        self._synced(frame.planned.op)
        frame.pending = None
        self._advance(frame, value)

    def _control(self, frame: BlockFrame, planned: Planned, args: PythonValues) -> None:
        """A structured op or a terminator: push, jump or return. (No `typing.cast` here
        and in `_advance`: a call each, on the path of every loop iteration.)"""
        stack = self.stack
        if planned.kind is Kind.STRUCTURED:
            gen: StructuredGen = planned.fn(planned.ft, self, planned.op, args)
            gen_frame = GenFrame(planned, gen, frame.env, self.mask, args, self.cluster.replayable)
            stack.append(gen_frame)
            self._advance(gen_frame, None)
            return
        terminator: TerminatorValue = planned.fn(planned.ft, self, planned.op, args)[0]
        if isinstance(terminator, ReturnedValues):
            stack.pop()
            if not stack:
                self._exit()
                return
            parent = stack[-1]
            assert isinstance(parent, GenFrame)
            self.mask = parent.mask
            self._advance(parent, terminator.values, frame)
            return
        assert isinstance(terminator, Successor)
        block, block_args = terminator
        frame.slots = self.program.block_slots(block)
        frame.env.update(zip(frame.slots, block_args, strict=True))
        frame.block = block
        frame.plan = self.program.plan(block)
        frame.pc = 0

    def _advance(self, frame: GenFrame, value: Any, finished: BlockFrame | None = None) -> None:
        """Resume a structured op's generator with `value`. `finished` is the block frame
        that just returned it, reused when the generator runs the same block again (the
        next loop iteration)."""
        frame.sends += 1
        if frame.sent is not None:
            frame.sent.append(value)
        try:
            request = frame.gen.send(value)
        except StopIteration as stop:
            results: PythonValues = stop.value
            stack = self.stack
            stack.pop()
            parent = stack[-1]
            assert isinstance(parent, BlockFrame)
            self.mask = parent.mask
            env = parent.env
            for ssa, result in zip(frame.planned.results, results, strict=True):
                env[ssa] = result
            parent.pc += 1
            return
        if isinstance(request, Perform):
            frame.pending = request
            return
        mask = frame.mask if request.mask is None else request.mask
        env: Env = {} if request.fresh_env else frame.env
        block = request.block
        if finished is not None and finished.block is block and finished.env is env:
            # The next iteration of the block that just finished: its plan's arguments.
            for slot, arg in zip(finished.slots, request.args, strict=True):
                env[slot] = arg
            finished.pc = 0
            finished.mask = mask
            self.stack.append(finished)
        else:
            program = self.program
            env.update(zip(program.block_slots(block), request.args, strict=True))
            self.stack.append(BlockFrame(block, program.plan(block), env, mask, program.block_slots(block)))
        self.mask = mask

    def _exit(self) -> Status:
        """The kernel function returned: the warp is done; the CTA exits with its last warp.
        Its bulk stores have read their sources by now."""
        if self.bulk_reads is not None:
            self.bulk_reads.finish(self)
        self.status = Status.DONE
        if all(w.status is Status.DONE for w in self.cluster_warps[self.cta.rank]):
            self.cta.exited_at = self.cluster.step
        return Status.DONE

    def _yield(self) -> Status:
        self.status = Status.READY
        return Status.READY

    def _block(self, op: Operation, blocked: Blocked) -> Status:
        self.status = Status.BLOCKED
        self.blocked_reason = blocked.reason
        self.blocked_wait = blocked.wait
        self.blocked_where = ""
        self.wake = blocked.wake
        self.blocked_op = op
        self.blocked_version = self.cluster.version
        return Status.BLOCKED


def as_warp(interp: Interpreter) -> Warp:
    """The warp an `@impl` method runs on (every impl of ours runs under a `Warp`)."""
    assert isinstance(interp, Warp)
    return interp


# --------------------------------------------------------------------------------------
# The tensor core as a scheduled agent
# --------------------------------------------------------------------------------------


@dataclass
class TensorCore:
    """Completes one CTA's pending commits, one per turn, in issue order."""

    cluster: Cluster
    cta: Cta
    name: str = ""

    def runnable(self) -> bool:
        return bool(self.cta.commits)

    def effect(self) -> Step:
        """Completing the oldest commit: one arrival on each of its barriers."""
        commit = self.cta.commits[0]
        return Step("arrive", tuple((rank << RANK_SHIFT) | offset for rank, offset in commit.barriers), 1)

    def next_op(self) -> Operation | None:
        """The commit whose tracked operations the next turn completes."""
        return self.cta.commits[0].op if self.cta.commits else None

    def turn(self, limit: int) -> Status:
        return self.run(limit)

    def run(self, limit: int) -> Status:
        commit = self.cta.commits[0]
        try:
            self.cluster.complete_commit(self.cta)
        except Hazard as e:
            raise OpError(commit.op, f"the tensor core of CTA {self.cta.rank}", e) from e
        return Status.READY


# --------------------------------------------------------------------------------------
# Scheduling
# --------------------------------------------------------------------------------------


def wake_spinning(warps: Sequence[Warp]) -> bool:
    """When nothing can run: wake the warps whose barrier test failed. A failed test does
    not block (on an H100 a thread goes on with the false result: docs/silicon.md,
    mbarrier_phases); the model parks such a warp only so a retry loop does not spin
    while others can run. A warp that fails the same test again after being woken with
    nothing changed is spinning for good (a deadlock). True if any warp was woken."""
    woken = False
    for warp in warps:
        spinning = warp.status is Status.READY and warp.poll_version == warp.cluster.version
        if spinning and warp.blocked_op is not None and warp.spin_woken is not warp.blocked_op:
            warp.spin_woken, warp.poll_version = warp.blocked_op, -1
            woken = True
    return woken


def _turn_of(agent: Agent) -> Callable[[int], Status]:
    """`agent.turn`, or the `run` it calls where that is all it does (a call less per turn)."""
    turn = type(agent).turn
    return agent.run if turn is Warp.turn or turn is TensorCore.turn else agent.turn


class Deadlock(Exception):
    """Every live warp is blocked and nothing in flight can unblock one (exit code 2)."""

    def __init__(self, warps: list[Warp]):
        super().__init__("deadlock")
        self.warps = warps


Agent: TypeAlias = Warp | TensorCore


class TurnObserver(Protocol):
    """Told about every turn a `Scheduler` runs (the timeline trace is one)."""

    def turn_started(self, agent: Agent) -> None: ...

    def turn_ended(self, agent: Agent) -> None: ...


@dataclass
class Scheduler:
    """Round-robin (`rr`, deterministic) or seeded random choice among runnable agents."""

    policy: str = "rr"
    seed: int = 0
    trace: list[int] = field(default_factory=list[int])
    """Index of the agent chosen at each step (a replayable schedule), if `keep_trace`."""
    observer: TurnObserver | None = None
    keep_trace: bool = True

    def run(self, agents: Sequence[Agent], warps: Sequence[Warp], max_steps: int) -> None:
        if any(w.fp_results for w in warps):
            # Once for the whole run rather than once per turn (`Warp.turn`).
            with np.errstate(all="ignore"):
                self._run(agents, warps, max_steps)
        else:
            self._run(agents, warps, max_steps)

    def _run(self, agents: Sequence[Agent], warps: Sequence[Warp], max_steps: int) -> None:
        count = len(agents)
        rng = random.Random(self.seed)
        trace = self.trace
        turn = 0
        randomly = self.policy == "random"
        # The bound methods, once: a turn is a few microseconds, lookups are a tenth each.
        runnables = [a.runnable for a in agents]
        turns = [_turn_of(a) for a in agents]
        order = [list(range(start, count)) + list(range(start)) for start in range(count + 1)]
        while True:
            if randomly:
                runnable = [i for i, ready in enumerate(runnables) if ready()]
                choice = rng.choice(runnable) if runnable else -1
            else:
                # Round robin: the next runnable agent after the last one that ran.
                choice = -1
                for i in order[turn]:
                    if runnables[i]():
                        choice = i
                        break
                turn = choice + 1
            if choice < 0:
                live = [w for w in warps if w.status is not Status.DONE]
                if not live:
                    return
                if wake_spinning(live):
                    continue
                raise Deadlock(live)
            if self.keep_trace:
                trace.append(choice)
            if self.observer is None:
                turns[choice](max_steps)
            else:
                self.observer.turn_started(agents[choice])
                agents[choice].turn(max_steps)
                self.observer.turn_ended(agents[choice])

"""Pre-decoding a PTX kernel (`.entry`) into a flat program of closures over a warp's register file.

Each instruction is decoded once per launch into a `Decoded`: a closure `run(warp) ->
next pc` that reads and writes the warp's register file (`PtxWarp.regs`, one numpy array
of 32 lanes per register, in the dtype of its `.reg` class), plus whether it is a
scheduling point and how it passes control on. Labels are resolved to instruction
indices; each branch knows its reconvergence point (cfg.py). Values are computed by the
PTX value semantics (`decode` in semantics.py); synchronisation, memory and tcgen05
instructions call the machine model's actions (interpreter/nvvm.py, memory.py), the same
functions the NVVM-level implementations call. An instruction the model does not execute
is decoded to a closure that refuses it when (and only if) it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.ptx.qualifiers import (
    MatchMode,
    MbarrierTxKind,
    MbarrierWaitKind,
    ReduxKind,
    ShflMode,
    StateSpace,
    VoteMode,
)
from xdsl_tmem.dialects.traits import ThreadBarrier, is_sync_point
from xdsl_tmem.interpreter import nvvm as machine
from xdsl_tmem.interpreter.executor import LOCAL, OTHER, Step
from xdsl_tmem.interpreter.llvm import check_window
from xdsl_tmem.interpreter.machine import PARAM_BASE, Hazard, SharedLayout
from xdsl_tmem.interpreter.memory import (
    Access,
    Progression,
    load,
    load_progression,
    progression,
    store,
    store_progression,
)
from xdsl_tmem.interpreter.ptx import pending
from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE, UnsupportedInstruction
from xdsl_tmem.interpreter.ptx.cfg import EXIT, Flow, reconvergence_points
from xdsl_tmem.interpreter.ptx.integer import by_immediate
from xdsl_tmem.interpreter.ptx.semantics import decode
from xdsl_tmem.interpreter.tcgen05 import ldst_plan
from xdsl_tmem.interpreter.tma import TensorMap
from xdsl_tmem.interpreter.values import WARP, UnsupportedValue, Value, format_lanes

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp

Lanes = NDArray[Any]
Run = Callable[["PtxWarp"], int]

CLASS_DTYPE: dict[str, np.dtype[Any]] = {
    "pred": np.dtype(np.bool_),
    "b16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64),
}
"""The lane dtype of each `.reg` class: a register holds bits; an instruction views them
as its type (`.s32` reads a `.b32` register as int32)."""


def class_dtype(kind: str) -> np.dtype[Any]:
    """A `.reg`'s lane dtype: a typed register (`.reg .f32 %f<4>`, `.reg .u64`) holds the
    bits of its width, as the `.b` class of that width does."""
    if kind in CLASS_DTYPE:
        return CLASS_DTYPE[kind]
    if kind not in LANE_DTYPE:
        raise Refused(f".reg .{kind}: this register type is not modelled")
    return _UNSIGNED[LANE_DTYPE[kind].itemsize]


_SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
_UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}

_SPACE_WINDOW = {
    StateSpace.GLOBAL: 1,
    StateSpace.SHARED: 3,
    StateSpace.SHARED_CTA: 3,
    StateSpace.SHARED_CLUSTER: 7,
}
"""cvta: the machine model's address window of each state space it has (llvm address spaces)."""


class Refused(Exception):
    """An instruction (or operand form) the PTX level does not execute, and why."""


@dataclass(slots=True)
class Decoded:
    """One instruction of the flat program."""

    op: Operation
    run: Run
    sync: bool
    """A scheduling point (the op class's `SyncPoint` / `Synchronizes` trait)."""
    flow: Flow
    effect: Callable[[PtxWarp], Step] | None = None
    """What the next run does to mbarriers, for exhaustive exploration (executor.Step)."""
    line: int = 0
    """The instruction's line (0: unknown): in `source`, else in the printed PTX."""
    source: str = ""
    """The PTX file the instruction was read from (`k.ptx`), or "" for PTX generated in
    process, whose lines are those of the text our printer writes."""
    guard: tuple[int, bool] | None = None
    """The guard predicate's register slot, and whether it is negated (`@!%p`)."""

    def location(self) -> str:
        """`k.ptx:57` for a parsed file, `PTX line 57` for generated PTX, "" if unknown."""
        if not self.line:
            return ""
        return f"{self.source}:{self.line}" if self.source else f"PTX line {self.line}"

    def executes(self, w: PtxWarp) -> bool:
        """Whether some active lane executes it (its guard holds there): a scheduling
        point that no lane executes is none (as an op in an `scf.if` not taken)."""
        return self.guard is None or bool(exec_mask(w, w.regs, self.guard).any())


@dataclass
class Parameter:
    """A kernel `.param`: its name, PTX type, byte size and offset in the parameter space."""

    name: str
    type: str
    size: int
    offset: int
    pointer: bool
    array: int | None = None
    """`.b8 name[K]`: a byval array of K elements."""


def parse_parameter(decl: ptx.DeclAttr, offset: int) -> Parameter:
    """A `.param` declaration (`.u64 .ptr .global .align 1 k_param_0`, `.u32 n`,
    `.align 8 .b8 s[24]`) placed after `offset` at its alignment (a `.ptr` parameter's
    `.align` is its pointee's)."""
    t = decl.type.data
    if t not in LANE_DTYPE:
        raise Refused(f".param {decl.ptx_text()}: type .{t} is not modelled")
    dims = [d.data for d in decl.dims]
    if any(d < 0 for d in dims):
        raise Refused(f".param {decl.ptx_text()}: an unsized array")
    count = int(np.prod(dims)) if dims else 1
    lanes = max(decl.vector.data, 1)
    element = LANE_DTYPE[t].itemsize * lanes
    align = max(decl.align.data, element)
    start = (offset + align - 1) // align * align
    return Parameter(decl.sym_name.data, t, element * count, start, bool(decl.ptr.data), count if dims else None)


@dataclass
class Program:
    """A decoded PTX kernel (`.entry`), shared by every warp of a launch."""

    module: Operation
    entry: ptx.FunctionOp
    code: list[Decoded]
    initial: list[Lanes]
    """Each register-file slot's value at warp start: zeros for registers, immediates."""
    params: list[Parameter]
    param_bytes: bytearray = field(default_factory=bytearray)
    table: dict[type[Operation], Any] = field(default_factory=dict[type[Operation], Any])
    """Empty: the NVVM-level dispatch table, which explore.py consults for NVVM warps only."""


# --------------------------------------------------------------------------------------
# The decoder
# --------------------------------------------------------------------------------------


class Decoder:
    """Decodes one entry: register slots, immediates, labels, per-instruction closures."""

    def __init__(self, entry: ptx.FunctionOp, layout: SharedLayout, params: Sequence[Parameter], points: str):
        self.entry = entry
        self.layout = layout
        self.params = {p.name: p for p in params}
        self.points = points
        self.slots: dict[tuple[int, ptx.RegisterType], int] = {}
        """Register slots by (frame, register): each inlined call (calls.py) has its own registers."""
        self.frame = 0
        """The function instance whose instructions are being read (0: the kernel's body)."""
        self.frames: list[int] = []
        """Each flat instruction's frame."""
        self.symbols: list[dict[str, Any]] = []
        """The `.param` variables of the scopes being read, innermost last (calls.py)."""
        self.scope_symbols: list[list[dict[str, Any]]] = []
        """Each flat instruction's view of `symbols`."""
        self.flows: dict[int, Flow] = {}
        """Instructions whose control flow an expander decided (a call, a callee's `ret`)."""
        self.extra: dict[str, Any] = {}
        """Per-launch state of the expanders (calls.py)."""
        self.initial: list[Lanes] = []
        self.constants: dict[tuple[Any, str], int] = {}
        self.param_bytes = bytearray()
        self.tensor_maps: dict[int, TensorMap] = {}
        """The launch's tensor-map parameters by their offset in the parameter space (tma_copy.py)."""
        self.instructions: list[Operation] = []
        self.labels: list[dict[str, int]] = []
        """The labels each instruction's branch may name (only branches have any)."""
        self.caches: dict[int, list[Any]] = {}
        self.integer_caches: dict[int, list[Any]] = {}
        """What `integer` last read from a register: [array, mask, value]."""

    # -- register file -----------------------------------------------------------------

    def register(self, value: SSAValue) -> int:
        t = value.type
        assert isinstance(t, ptx.RegisterType)
        slot = self.slots.get((self.frame, t))
        if slot is None:
            slot = self.slots[self.frame, t] = len(self.initial)
            zeros = np.zeros(WARP, dtype=class_dtype(t.kind.data))
            zeros.flags.writeable = False
            self.initial.append(zeros)
        return slot

    def constant(self, value: float, dtype: np.dtype[Any]) -> int:
        key = (value, dtype.str)
        slot = self.constants.get(key)
        if slot is None:
            if dtype.kind in "ui":
                lanes = np.full(WARP, int(value) & ((1 << (8 * dtype.itemsize)) - 1), dtype=_UNSIGNED[dtype.itemsize])
                lanes = lanes.view(dtype)
            elif dtype.kind == "b":
                lanes = np.full(WARP, bool(int(value) & 1), dtype=dtype)
            else:
                lanes = np.full(WARP, value, dtype=dtype)
            lanes.flags.writeable = False
            slot = self.constants[key] = len(self.initial)
            self.initial.append(lanes)
        return slot

    def reader(self, value: SSAValue, ptype: str) -> Callable[[list[Lanes]], Lanes]:
        """How an instruction of operand type `ptype` reads `value` (a register or an
        immediate) from the register file."""
        dtype = LANE_DTYPE[ptype]
        owner = value.owner
        if isinstance(owner, ptx.ImmOp):
            literal = owner.value
            number: int | float = literal.value.data if isinstance(literal, IntegerAttr) else float(literal.value.data)
            if isinstance(literal, FloatAttr) and dtype.kind != "f":
                # A float literal read as bits (`mov.b32 %r, 0f3F800000`).
                width = 4 if literal.type.bitwidth == 32 else 8
                number = int(np.array([number], dtype=f"<f{width}").view(_UNSIGNED[width])[0])
            slot = self.constant(number, dtype)
            return lambda R: R[slot]
        if not isinstance(value.type, ptx.RegisterType):
            raise Refused(f"operand {value.type} cannot be read as a .{ptype} value here")
        slot = self.register(value)
        have = class_dtype(value.type.kind.data)
        if have == dtype:
            return lambda R: R[slot]
        if have.itemsize == dtype.itemsize:
            return lambda R: R[slot].view(dtype)
        if have.itemsize > dtype.itemsize:  # a wider register read as a narrower type: its low bits
            narrow = _UNSIGNED[dtype.itemsize]
            return lambda R: R[slot].astype(narrow).view(dtype)
        raise Refused(f"a .{value.type.kind.data} register read as .{ptype}")

    def writer(self, value: SSAValue, ptype: str) -> tuple[int, Callable[[Lanes], Lanes]]:
        """(slot, conversion of a result of type `ptype` into the register's class):
        a narrower result is sign-extended for signed types, zero-extended otherwise."""
        if not isinstance(value.type, ptx.RegisterType):
            raise Refused(f"destination {value.type} is not a register")
        slot = self.register(value)
        have = class_dtype(value.type.kind.data)
        dtype = LANE_DTYPE[ptype]
        if have == dtype:
            return slot, _same
        if have.itemsize == dtype.itemsize:
            return slot, lambda x: x.view(have)
        if have.itemsize > dtype.itemsize:
            if dtype.kind == "i":
                wide = _SIGNED[have.itemsize]
                return slot, lambda x: x.astype(wide).view(have)
            bits = _UNSIGNED[dtype.itemsize]
            return slot, lambda x: x.view(bits).astype(have)
        raise Refused(f"a .{ptype} result written to a .{value.type.kind.data} register")

    def guard(self, op: ptx.Instruction) -> tuple[int, bool] | None:
        guard = op.guard_value()
        if guard is None:
            return None
        return self.register(guard), op.negated is not None

    def address(self, value: SSAValue, offset: int) -> Callable[[PtxWarp, list[Lanes]], Value]:
        """An address operand `[a+offset]`: a symbol (a `.shared` variable of this CTA)
        or a register. Uniform addresses are passed on as Python ints, as the NVVM level
        passes its uniform values."""
        owner = value.owner
        if isinstance(owner, ptx.SymbolOp):
            name = owner.symbol.data
            placed = self.layout.symbols.get(name)
            if placed is None:
                raise Refused(f"symbol '{name}' is not a .shared variable of the module")
            constant = placed[0] + offset
            return lambda w, R: w.rank_bits | constant
        slot = self.register(value)
        return _register_address(slot, offset, self.address_cache(slot))

    def progression(self, value: SSAValue, offset: int) -> Callable[[PtxWarp, list[Lanes]], Progression | None] | None:
        """An address operand `[%r+offset]` as a `Progression` over all 32 lanes where
        the register's lanes are one (memory.py; for the caller to use when every lane
        is active), else None; None instead of the function for a symbol. Cached per
        warp and lane array (`PtxWarp.progressions`): the stores of an epilogue address
        through one register, `[%rd+16]`, `[%rd+32]`, ..."""
        if isinstance(value.owner, ptx.SymbolOp):
            return None
        slot = self.register(value)
        if class_dtype(cast(ptx.RegisterType, value.type).kind.data).kind not in "ui":
            return None

        def get(w: PtxWarp, R: list[Lanes]) -> Progression | None:
            lanes = R[slot]
            cached = w.progressions.get(slot)
            if cached is None or cached[0] is not lanes:
                cached = w.progressions[slot] = (lanes, progression(lanes))
            found = cached[1]
            return found if found is None or not offset else Progression(found.first + offset, found.stride)

        return get

    def address_cache(self, slot: int) -> list[Any]:
        """What the address operands of one register last computed from a lane array:
        [array, mask, base] (`_register_address`), shared by every instruction addressing
        through the register (`st [%rd+16]`, `st [%rd+32]`, ...)."""
        return self.caches.setdefault(slot, [None, None, None])

    def integer(self, value: SSAValue | None, default: int | None = None) -> Callable[[PtxWarp, list[Lanes]], Value]:
        """A `.b32` count/id/mask operand: an immediate as a Python int, a register as its
        common value over the active lanes when there is one, else the lane array."""
        if value is None:
            return lambda w, R: default if default is not None else 0
        owner = value.owner
        if isinstance(owner, ptx.ImmOp) and isinstance(owner.value, IntegerAttr):
            number = owner.value.value.data
            return lambda w, R: number
        slot = self.register(value)
        cache = self.integer_caches.setdefault(slot, [None, None, None])

        def read(w: PtxWarp, R: list[Lanes]) -> Value:
            # (cached per lane array and mask, as `_register_address`: the six `cp.async`
            # of a loop's stage read one src-size register)
            lanes, mask = R[slot], w.mask
            if cache[0] is not lanes or cache[1] is not mask:
                active = lanes if w.all_active else lanes[mask]
                uniform = active.size and active[0] == active[-1] and _min(active) == _max(active)
                cache[0], cache[1], cache[2] = lanes, mask, int(active[0]) if uniform else lanes
            return cache[2]

        return read

    # -- the program -------------------------------------------------------------------

    def decode(self, module: Operation) -> Program:
        instructions: list[Operation] = []
        chains: list[list[dict[str, int]]] = []
        self.flatten(self.entry.body.block, instructions, chains, [])
        self.instructions = instructions
        labels = [
            _visible(chain) if isinstance(op, ptx.BraOp | ptx.BrxIdxOp) else {}
            for op, chain in zip(instructions, chains, strict=True)
        ]
        self.labels = labels
        flows = [self.flows.get(i) or FLOWS.get(type(op), _flow)(op, i, labels[i]) for i, op in enumerate(instructions)]
        points = reconvergence_points(flows)
        code: list[Decoded] = []
        for i, op in enumerate(instructions):
            self.frame = self.frames[i]
            code.append(self.instruction(op, i, flows[i], labels[i], points.get(i, EXIT)))
        self.frame = 0
        code.append(Decoded(self.entry, _exit_kernel, False, Flow(falls_through=False, exits=True)))
        return Program(module, self.entry, code, self.initial, list(self.params.values()))

    def flatten(
        self,
        block: Block,
        instructions: list[Operation],
        chains: list[list[dict[str, int]]],
        outer: list[dict[str, int]],
    ) -> None:
        """The instructions of a body in program order, `{ }` scopes inlined. A label is
        visible in its scope and the scopes inside it, and may be declared again in
        another scope (PTX ISA, "Scope"): each instruction keeps the labels of its scope
        and those around it (`chains`), filled in as the scopes are read."""
        local: dict[str, int] = {}
        chain = [*outer, local]
        self.symbols.append({})
        for op in block.ops:
            if isinstance(op, ptx.LabelOp):
                if op.label.data in local:
                    raise Refused(f"label {op.label.data} is defined twice in one scope")
                local[op.label.data] = len(instructions)
            elif isinstance(op, ptx.ScopeOp):
                self.flatten(op.body.block, instructions, chains, chain)
            elif (expand := EXPANDERS.get(type(op))) is not None:
                expand(self, op, instructions, chains, chain)  # calls, `.param` variables (calls.py)
            elif isinstance(op, ptx.Instruction) or op.dialect_name() != "ptx":
                self.place(op, instructions, chains, chain)  # an op of another dialect is refused when it runs
            # Other ptx statements execute nothing: operand sources (ptx.imm, ...) and
            # declarations (a function's `.shared` variables are laid out with the
            # module's, kernel.py).
        self.symbols.pop()

    def place(
        self,
        op: Operation,
        instructions: list[Operation],
        chains: list[list[dict[str, int]]],
        chain: list[dict[str, int]],
    ) -> None:
        """Append one instruction of the current frame and scope to the flat program."""
        instructions.append(op)
        chains.append(chain)
        self.frames.append(self.frame)
        self.scope_symbols.append(list(self.symbols))

    def instruction(self, op: Operation, index: int, flow: Flow, labels: dict[str, int], rpc: int) -> Decoded:
        sync = is_sync_point(type(op), self.points)
        decoder = DECODERS.get(type(op))
        try:
            if isinstance(op, ptx.InstOp):
                raise Refused(
                    f"opcode {op.opcode.data} is a generic instruction (ptx.inst) as the PTX parser reads it; "
                    "it executes once the front end maps it to a typed ptx op"
                )
            if decoder is None:
                raise Refused(f"'{op.name}' has no PTX-level implementation")
            run, effect = decoder(self, op, index, labels, rpc)
        except (Refused, UnsupportedInstruction) as e:
            run, effect = _refuse(op, str(e)), None
        guard = self.guard(op) if isinstance(op, ptx.Instruction) and op.guard_value() is not None else None
        return Decoded(op, run, sync, flow, effect, guard=guard)


def _register_address(slot: int, offset: int, cache: list[Any]) -> Callable[[PtxWarp, list[Lanes]], Value]:
    """`[%r+offset]`: an int when the active lanes agree (as the NVVM level passes its
    uniform values), else the lanes' int64 addresses. The base is cached per lane array:
    lane arrays are never written in place, so an array object is one value (the cache
    holds a reference, so its id is not reused)."""

    def address(w: PtxWarp, R: list[Lanes]) -> Value:
        lanes, mask = R[slot], w.mask
        if cache[0] is not lanes or cache[1] is not mask:
            active = lanes if w.all_active else lanes[mask]
            # (the ends compared first: per-lane addresses usually differ there)
            if active.size and active[0] == active[-1] and _min(active) == _max(active):
                base: Value = int(active[0])
            else:
                base = lanes.astype(np.int64)
            cache[0], cache[1], cache[2] = lanes, mask, base
        base = cache[2]
        return base + offset if offset else base

    return address


_min, _max = np.minimum.reduce, np.maximum.reduce
"""(The ufuncs' reductions called directly: `ndarray.min()` adds Python-level wrappers.)"""


def _visible(chain: list[dict[str, int]]) -> dict[str, int]:
    """The labels a branch in the innermost scope of `chain` sees (inner ones win)."""
    labels: dict[str, int] = {}
    for scope in chain:
        labels.update(scope)
    return labels


def _same(x: Lanes) -> Lanes:
    return x


def _exit_kernel(w: PtxWarp) -> int:
    """Past the last instruction: the remaining lanes leave the kernel."""
    return w.exit_lanes(w.mask)


def _refuse(op: Operation, why: str) -> Run:
    def run(w: PtxWarp) -> int:
        raise _refusal(w, op, why)

    return run


def _refusal(w: PtxWarp, op: Operation, why: str) -> UnsupportedValue:
    """What the model does not execute, at the instruction and its PTX line."""
    where = w.code[w.pc].location()
    return UnsupportedValue(f"{_text(op)}{f' at {where}' if where else ''}: {why}")


def _text(op: Operation) -> str:
    if isinstance(op, ptx.Instruction):
        return op.mnemonic()
    return op.name


def _flow(op: Operation, index: int, labels: dict[str, int]) -> Flow:
    guarded = isinstance(op, ptx.Instruction) and op.guard_value() is not None
    if isinstance(op, ptx.BraOp):
        if op.target.data not in labels:
            raise Refused(f"bra to undefined label {op.target.data}")
        return Flow((labels[op.target.data],), falls_through=guarded)
    if isinstance(op, ptx.RetOp):
        return Flow(falls_through=guarded, exits=True)
    return Flow()


# --------------------------------------------------------------------------------------
# Per-op decoders (one per op class, as the NVVM level has one @impl per op)
# --------------------------------------------------------------------------------------

Effect = Callable[["PtxWarp"], Step]
Decoding = tuple[Run, Effect | None]
"""An instruction's closure and its exploration effect (None: `OTHER`, unless a `ThreadBarrier`)."""
OpDecoder = Callable[[Decoder, Any, int, dict[str, int], int], Decoding]
DECODERS: dict[type[Operation], OpDecoder] = {}
Expander = Callable[[Decoder, Any, list[Operation], list[list[dict[str, int]]], list[dict[str, int]]], None]
EXPANDERS: dict[type[Operation], Expander] = {}
"""Statements that `Decoder.flatten` hands on instead of placing them as they are (calls.py:
a `call` is inlined, a `.param` variable gets per-thread storage)."""
FLOWS: dict[type[Operation], Callable[[Any, int, dict[str, int]], Flow]] = {}
"""How an op class passes control on, where `_flow` does not know (calls.py: brx.idx)."""


def decodes(*op_types: type[Operation]) -> Callable[[OpDecoder], OpDecoder]:
    def register(fn: OpDecoder) -> OpDecoder:
        for t in op_types:
            DECODERS[t] = fn
        return fn

    return register


def exec_mask(w: PtxWarp, R: list[Lanes], guard: tuple[int, bool] | None) -> Lanes:
    """The lanes that execute: the active ones, less those whose guard is false."""
    if guard is None:
        return w.mask
    g = R[guard[0]]
    return w.mask & ~g if guard[1] else w.mask & g


def with_mask(w: PtxWarp, mask: Lanes, action: Callable[[], Any]) -> Any:
    """Run a machine action with the warp's active mask narrowed to `mask`."""
    if mask is w.mask:
        return action()
    saved, saved_all = w.mask, w.all_active
    w.mask = w.live if not np.count_nonzero(mask != w.live) else mask  # (`.all()` adds numpy's Python wrappers)
    w.all_active = w.mask is w.live and w.full
    try:
        return action()
    finally:
        w.mask, w.all_active = saved, saved_all


def _jump(target: int) -> Run:
    def run(w: PtxWarp) -> int:
        return target

    return run


def _local(w: PtxWarp) -> Step:
    """Named and cluster barrier steps commute with every other agent's (explore.py)."""
    return LOCAL


def _store_result(w: PtxWarp, R: list[Lanes], slot: int, value: Lanes, mask: Lanes, full: bool) -> None:
    R[slot] = value if full else np.where(mask, value, R[slot])


# ---- values: the PTX value semantics ------------------------------------------------------


@decodes(
    ptx.AddOp, ptx.SubOp, ptx.MulOp, ptx.DivOp, ptx.RemOp, ptx.AndOp, ptx.OrOp, ptx.XorOp, ptx.ShlOp, ptx.ShrOp,
    ptx.MinOp, ptx.MaxOp, ptx.NotOp, ptx.NegOp, ptx.MadOp, ptx.FmaOp, ptx.SelpOp, ptx.SetpOp, ptx.CvtOp, ptx.MovOp,
)  # fmt: skip
def _value(d: Decoder, op: ptx.Instruction, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    opcode, *modifiers = op.mnemonic().split(".")
    sources = list(op.operands[:-1] if op.guard_value() is not None else op.operands)
    if isinstance(op, ptx.MovOp) and isinstance(op.src.owner, ptx.SymbolOp | ptx.SpecialOp):
        return _mov_special(d, op, index), None
    sem = decode(opcode, tuple(modifiers))
    if len(sem.operands) != len(sources) or len(sem.results) != len(op.results):
        raise Refused(f"{op.mnemonic()}: {len(sources)} operands and {len(op.results)} results, the semantics take "
                      f"{len(sem.operands)} and {len(sem.results)}")  # fmt: skip
    fn: Callable[..., Any] = sem.fn
    types = sem.operands
    amounts = [_u32_immediate(v) for v in sources[1:]] if opcode in ("shl", "shr", "bfe") else []
    if amounts and None not in amounts:  # (shifted by immediates: the clamping decided here, once)
        by = by_immediate(opcode, types[0], cast(list[int], amounts))
        if by is not None:
            fn, sources, types = by, sources[:1], types[:1]
    readers = [d.reader(v, t) for v, t in zip(sources, types, strict=True)]
    writers = [d.writer(v, t) for v, t in zip(op.results, sem.results, strict=True)]
    guard = d.guard(op)
    nxt = index + 1
    if len(writers) == 1 and guard is None:
        slot, convert = writers[0]
        if len(readers) == 2:
            ra, rb = readers

            def run2(w: PtxWarp) -> int:
                R = w.regs
                value = convert(fn(ra(R), rb(R)))
                R[slot] = value if w.all_active else np.where(w.mask, value, R[slot])
                return nxt

            return run2, None
        if len(readers) == 1:
            (ra,) = readers

            def run1(w: PtxWarp) -> int:
                R = w.regs
                value = convert(fn(ra(R)))
                R[slot] = value if w.all_active else np.where(w.mask, value, R[slot])
                return nxt

            return run1, None
        if len(readers) == 3:  # (selp, mad, bfe: `_lanewise` without its per-call generality)
            ra, rb, rc = readers

            def run3(w: PtxWarp) -> int:
                R = w.regs
                if w.all_active:
                    R[slot] = convert(np.asarray(fn(ra(R), rb(R), rc(R))))
                elif w.mask.any():
                    R[slot] = np.where(w.mask, convert(np.asarray(fn(ra(R), rb(R), rc(R)))), R[slot])
                return nxt

            return run3, None

    return _lanewise(d, op, index, fn, readers, writers), None


def _u32_immediate(value: SSAValue) -> int | None:
    """An integer immediate operand as a `.u32` operand reads it (`Decoder.constant`), or None."""
    owner = value.owner
    if isinstance(owner, ptx.ImmOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data & 0xFFFFFFFF
    return None


def _mov_special(d: Decoder, op: ptx.MovOp, index: int) -> Run:
    """`mov d, %tid.x` (a special register, read when it runs: %clock changes) or
    `mov d, symbol[+offset]` (the address of a `.shared` variable of this CTA)."""
    slot, convert = d.writer(op.res, op.type.data.value)
    dtype = LANE_DTYPE[op.type.data.value]
    guard = d.guard(op)
    nxt = index + 1
    source = op.src.owner
    param = d.params.get(source.symbol.data) if isinstance(source, ptx.SymbolOp) else None
    if param is not None:  # a kernel parameter's address (a byval tensor map's, for TMA)
        at_param = PARAM_BASE + param.offset + (0 if op.offset is None else op.offset.data)

        def value_of(w: PtxWarp) -> Value:
            return at_param
    elif isinstance(source, ptx.SymbolOp):
        read_address = d.address(op.src, 0 if op.offset is None else op.offset.data)

        def value_of(w: PtxWarp) -> Value:
            return read_address(w, w.regs)
    else:
        assert isinstance(source, ptx.SpecialOp)
        name = source.register.data
        base, _, axis_name = name.removeprefix("%").rpartition(".")
        axis = "xyz".index(axis_name) if axis_name in ("x", "y", "z") and base else None
        register = (base if axis is not None else name.removeprefix("%")).replace("_", ".")

        def value_of(w: PtxWarp) -> Value:
            value = machine.special_register_value(w, register, axis)
            if value is None:
                raise UnsupportedValue(f"mov from special register {name}: not modelled")
            return value

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        full = guard is None and w.all_active
        value = value_of(w)
        if isinstance(value, np.ndarray):
            lanes = cast(Lanes, value).astype(np.uint64).astype(dtype)
        else:
            bits = int(cast(int, value)) & ((1 << (8 * dtype.itemsize)) - 1)
            lanes = np.full(WARP, bits, dtype=_UNSIGNED[dtype.itemsize]).view(dtype)
        _store_result(w, R, slot, convert(lanes), mask, full)
        return nxt

    return run


# ---- control flow -----------------------------------------------------------------------


@decodes(ptx.BraOp)
def _bra(d: Decoder, op: ptx.BraOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    target = labels[op.target.data]
    nxt = index + 1
    guard = d.guard(op)
    uniform = op.uniform is not None
    if guard is None:
        return _jump(target), None
    slot, negated = guard

    def run(w: PtxWarp) -> int:
        g = w.regs[slot]
        if w.all_active:  # the common, uniform case in one count
            count = np.count_nonzero(g)
            if count == 0:
                return target if negated else nxt
            if count == WARP:
                return nxt if negated else target
        if negated:
            g = ~g
        mask = w.mask
        taken = mask & g
        if not taken.any():
            return nxt
        stay = mask & ~g
        if not stay.any():
            return target
        if uniform:
            raise Hazard(
                "bra-uni-divergent",
                f"bra.uni {op.target.data} in {w.name}: its predicate is true in lanes {format_lanes(taken)} and false "
                f"in lanes {format_lanes(stay)} of the active {format_lanes(mask)} (.uni asserts that the branch is "
                "non-divergent: all active threads take the same path)",
            )
        if target == nxt:  # both ways lead to the next instruction
            return nxt
        return w.diverge(target, taken, nxt, stay, rpc)

    return run, None


@decodes(ptx.RetOp)
def _ret(d: Decoder, op: ptx.RetOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        mask = exec_mask(w, w.regs, guard)
        if guard is not None and not mask.any():
            return nxt
        return w.exit_lanes(mask, nxt)

    return run, None


# ---- memory --------------------------------------------------------------------------------


def _access(t: str, count: int) -> Access:
    dtype = LANE_DTYPE[t]
    return Access(dtype.itemsize * count, dtype, count, count > 1)


def _lanes(value: Value, dtype: np.dtype[Any], count: int) -> Lanes:
    """A loaded value as (32, count) lanes."""
    if isinstance(value, np.ndarray):
        return cast(Lanes, value).reshape(WARP, count)
    return np.full((WARP, count), value, dtype=dtype)


@decodes(ptx.LdOp)
def _ld(d: Decoder, op: ptx.LdOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    t = op.type.data.value
    count = len(op.res)
    writers = [d.writer(r, t) for r in op.res]
    guard = d.guard(op)
    nxt = index + 1
    space = op.space.data if op.space is not None else None
    if space in (StateSpace.PARAM, StateSpace.PARAM_ENTRY):
        constants = _param_values(d, op, t, count)

        def run_param(w: PtxWarp) -> int:
            R = w.regs
            mask = exec_mask(w, R, guard)
            full = guard is None and w.all_active
            for (slot, convert), value in zip(writers, constants, strict=True):
                _store_result(w, R, slot, convert(value), mask, full)
            return nxt

        return run_param, None
    if space not in (None, StateSpace.GLOBAL, StateSpace.SHARED, StateSpace.SHARED_CTA, StateSpace.SHARED_CLUSTER):
        raise Refused(f"ld from .{space.value if space else ''}: the machine model has no such memory")
    address = d.address(op.addr, op.offset.data)
    lanes_at = d.progression(op.addr, op.offset.data)
    access = _access(t, count)
    dtype = access.dtype

    def run(w: PtxWarp) -> int:
        R = w.regs
        full = guard is None and w.all_active
        where = lanes_at(w, R) if full and lanes_at is not None else None
        if where is not None:
            value = load_progression(w, op, where, access)
            for i, (slot, convert) in enumerate(writers):
                R[slot] = convert(np.ascontiguousarray(value[:, i]))
            return nxt
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        value = _lanes(with_mask(w, mask, lambda: load(w, op, address(w, R), access)), dtype, count)
        for i, (slot, convert) in enumerate(writers):
            _store_result(w, R, slot, convert(np.ascontiguousarray(value[:, i])), mask, full)
        return nxt

    return run, None


def _param_values(d: Decoder, op: ptx.LdOp, t: str, count: int) -> list[Lanes]:
    """`ld.param [name+offset]`: the launch's parameter bytes (fixed for the launch)."""
    owner = op.addr.owner
    if not isinstance(owner, ptx.SymbolOp):
        raise Refused("ld.param through a register address is not modelled (only [param_name+offset])")
    param = d.params.get(owner.symbol.data)
    if param is None:
        raise Refused(f"ld.param of '{owner.symbol.data}', which is not a parameter of the kernel")
    dtype = LANE_DTYPE[t]
    start = param.offset + op.offset.data
    if op.offset.data < 0 or op.offset.data + dtype.itemsize * count > param.size:
        raise Refused(f"ld.param [{param.name}+{op.offset.data}] reads outside the {param.size}-byte parameter")
    raw = np.frombuffer(bytes(d.param_bytes[start : start + dtype.itemsize * count]), dtype=dtype)
    values: list[Lanes] = []
    for v in raw:
        lanes = np.full(WARP, v, dtype=dtype)
        lanes.flags.writeable = False
        values.append(lanes)
    return values


@decodes(ptx.StOp)
def _st(d: Decoder, op: ptx.StOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    t = op.type.data.value
    space = op.space.data if op.space is not None else None
    if space not in (None, StateSpace.GLOBAL, StateSpace.SHARED, StateSpace.SHARED_CTA, StateSpace.SHARED_CLUSTER):
        raise Refused(f"st to .{space.value if space else ''}: the machine model has no such memory")
    readers = [d.reader(v, t) for v in op.values]
    address = d.address(op.addr, op.offset.data)
    lanes_at = d.progression(op.addr, op.offset.data)
    access = _access(t, len(readers))
    dtype, count = access.dtype, len(readers)
    guard = d.guard(op)
    nxt = index + 1

    def gather(R: list[Lanes]) -> Lanes:
        if count == 1:
            return readers[0](R)
        return np.array([r(R) for r in readers], dtype=dtype).T  # (32, count)

    def run(w: PtxWarp) -> int:
        R = w.regs
        if guard is None and w.all_active:
            where = lanes_at(w, R) if lanes_at is not None else None
            if where is not None:
                store_progression(w, op, where, gather(R), access)
            else:
                store(w, op, address(w, R), gather(R), access)
            return nxt
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        with_mask(w, mask, lambda: store(w, op, address(w, R), gather(R), access))
        return nxt

    return run, None


@decodes(ptx.CvtaOp)
def _cvta(d: Decoder, op: ptx.CvtaOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    space = op.space.data
    if space is StateSpace.PARAM:  # parameter addresses are PARAM_BASE + offset, generic or not
        window = 0  # (`cvta.to.param`: what uses the address checks it, as prefetch.param.tensormap does)
    else:
        window = _SPACE_WINDOW.get(space)
    if window is None:
        raise Refused(f"cvta with .{space.value}: the machine model has no such memory")
    read = d.reader(op.src, "u64")
    slot, convert = d.writer(op.res, "u64")
    guard = d.guard(op)
    nxt = index + 1
    to_generic = op.to_generic is not None

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        value = read(R)
        if not to_generic:
            with_mask(w, mask, lambda: check_window(w, value, window, op.mnemonic()))
        _store_result(w, R, slot, convert(value), mask, guard is None and w.all_active)
        return nxt

    return run, None


@decodes(ptx.MapaOp)
def _mapa(d: Decoder, op: ptx.MapaOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    t = op.type.data.value
    address = d.address(op.addr, 0)
    rank = d.integer(op.rank)
    slot, convert = d.writer(op.res, t)
    dtype = LANE_DTYPE[t]
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        value = with_mask(w, mask, lambda: machine.mapa(w, address(w, R), rank(w, R)))
        lanes = cast(Lanes, value).astype(dtype) if isinstance(value, np.ndarray) else np.full(WARP, value, dtype)
        _store_result(w, R, slot, convert(lanes), mask, guard is None and w.all_active)
        return nxt

    return run, None


# ---- synchronisation -------------------------------------------------------------------


def _action(d: Decoder, op: ptx.Instruction, index: int, act: Callable[[PtxWarp, list[Lanes]], None]) -> Run:
    """An instruction whose only effect is a machine action under its execution mask."""
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if guard is not None and not mask.any():
            return nxt
        with_mask(w, mask, lambda: act(w, R))
        return nxt

    return run


@decodes(ptx.MbarrierInitOp)
def _mbarrier_init(d: Decoder, op: ptx.MbarrierInitOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    address, count = d.address(op.addr, op.offset.data), d.integer(op.count)
    return _action(d, op, index, lambda w, R: machine.mbarrier_init(w, address(w, R), count(w, R), True, op)), None


@decodes(ptx.MbarrierInvalOp)
def _mbarrier_inval(d: Decoder, op: ptx.MbarrierInvalOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    address = d.address(op.addr, op.offset.data)
    return _action(d, op, index, lambda w, R: machine.mbarrier_inval(w, address(w, R), op)), None


@decodes(ptx.MbarrierArriveOp)
def _mbarrier_arrive(d: Decoder, op: ptx.MbarrierArriveOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    address = d.address(op.addr, op.offset.data)
    count = d.integer(op.count, 1)
    expect_tx = op.expect_tx is not None
    flags = {"drop": op.drop is not None, "no_complete": op.no_complete is not None}
    state = d.writer(op.state, "b64") if op.state is not None else None
    guard = d.guard(op)
    nxt = index + 1

    def act(w: PtxWarp, R: list[Lanes]) -> Value:
        a = address(w, R)
        if expect_tx:
            machine.mbarrier_add_tx(w, a, count(w, R), +1)
            return machine.mbarrier_arrive(w, a, 1, op, **flags)
        return machine.mbarrier_arrive(w, a, count(w, R), op, **flags)

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if guard is not None and not mask.any():
            return nxt
        token = with_mask(w, mask, lambda: act(w, R))
        if state is not None:
            lanes = np.asarray(token, dtype=np.uint64) * np.ones(WARP, dtype=np.uint64)
            _store_result(w, R, state[0], lanes, mask, guard is None and w.all_active)
        return nxt

    def effect(w: PtxWarp) -> Step:
        if op.count is not None or guard is not None or any(flags.values()):
            return OTHER
        a = address(w, w.regs)
        return OTHER if isinstance(a, np.ndarray) else Step("arrive", (a,), len(w.active_lanes()))

    return run, effect


@decodes(ptx.MbarrierPendingCountOp)
def _mbarrier_pending_count(
    d: Decoder, op: ptx.MbarrierPendingCountOp, index: int, labels: dict[str, int], rpc: int
) -> Decoding:
    state = d.integer(op.state)
    slot, convert = d.writer(op.res, "b32")
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        value = machine.mbarrier_pending_count(state(w, R))
        lanes = cast(Lanes, value) if isinstance(value, np.ndarray) else np.full(WARP, value, np.uint32)
        _store_result(w, R, slot, convert(lanes), mask, guard is None and w.all_active)
        return nxt

    return run, None


@decodes(ptx.MbarrierExpectTxOp)
def _mbarrier_tx(d: Decoder, op: ptx.MbarrierExpectTxOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    address, tx = d.address(op.addr, op.offset.data), d.integer(op.tx)
    sign = +1 if op.kind.data is MbarrierTxKind.EXPECT_TX else -1
    return _action(d, op, index, lambda w, R: machine.mbarrier_add_tx(w, address(w, R), tx(w, R), sign)), None


@decodes(ptx.MbarrierWaitOp)
def _mbarrier_wait(d: Decoder, op: ptx.MbarrierWaitOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """A probe (`test_wait`, or `try_wait` outside its retry loop) never blocks; a failed
    probe marks the warp as spinning (executor.Warp.poll_failed), so it runs again only
    after another agent changed something. The retry loop `L: try_wait.parity p, [a],
    phase[, hint]; @!p bra L;` is the blocking wait (PTX ISA, mbarrier.try_wait: a
    potentially blocking instruction, retried until the phase completes): decoded as one
    wait that blocks until the phase completed in every executing lane and then sets p,
    as `nvvm.mbarrier.try_wait.parity` runs at the NVVM level (the same scheduling,
    deadlock reports and exploration steps)."""
    address = d.address(op.addr, op.offset.data)
    is_state = op.parity is None
    phase = d.integer(op.phase)
    slot, _ = d.writer(op.res, "pred")
    guard = d.guard(op)
    nxt = index + 1
    if _is_wait_loop(d, op, index, labels):

        def wait(w: PtxWarp) -> int:
            R = w.regs
            mask = exec_mask(w, R, guard)
            if guard is not None and not mask.any():
                return nxt
            with_mask(w, mask, lambda: machine.mbarrier_wait_parity(w, address(w, R), phase(w, R)))
            _store_result(w, R, slot, np.ones(WARP, dtype=np.bool_), mask, guard is None and w.all_active)
            return nxt

        def effect(w: PtxWarp) -> Step:
            R = w.regs
            a, p = address(w, R), phase(w, R)
            if guard is not None or isinstance(a, np.ndarray) or isinstance(p, np.ndarray):
                return OTHER
            return Step("wait", (a,), parity=p)

        return wait, effect

    def probe(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if guard is not None and not mask.any():
            return nxt
        passed = with_mask(w, mask, lambda: machine.mbarrier_probe(w, address(w, R), phase(w, R), is_state))
        _store_result(w, R, slot, np.asarray(passed, dtype=np.bool_), mask, guard is None and w.all_active)
        return nxt

    return probe, None


def _is_wait_loop(d: Decoder, op: ptx.MbarrierWaitOp, index: int, labels: dict[str, int]) -> bool:
    """`op` is `L: mbarrier.try_wait.parity p, ...` followed by `@!p bra L` (our backend's
    loop), or by `@p bra DONE; bra L;` (llc-22's, from upstream MLIR's inline PTX)."""
    if op.kind.data is not MbarrierWaitKind.TRY_WAIT or op.parity is None or index + 1 >= len(d.instructions):
        return False
    after = d.instructions[index + 1]
    guard = after.guard_value() if isinstance(after, ptx.BraOp) else None
    if not isinstance(after, ptx.BraOp) or guard is None or guard.type != op.res.type:
        return False
    if after.negated is not None:
        return d.labels[index + 1].get(after.target.data) == index
    back = d.instructions[index + 2] if index + 2 < len(d.instructions) else None
    return (
        isinstance(back, ptx.BraOp)
        and back.guard_value() is None
        and d.labels[index + 2].get(back.target.data) == index
    )


@decodes(ptx.BarWarpSyncOp)
def _bar_warp_sync(d: Decoder, op: ptx.BarWarpSyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    member = d.integer(op.mask)
    return _action(d, op, index, lambda w, R: machine.warp_sync(w, member(w, R))), None


@decodes(ptx.BarrierClusterOp)
def _barrier_cluster(d: Decoder, op: ptx.BarrierClusterOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    aligned = op.aligned is not None
    from xdsl_tmem.dialects.ptx.qualifiers import BarrierClusterKind

    if op.kind.data is BarrierClusterKind.ARRIVE:
        return _action(d, op, index, lambda w, R: machine.cluster_arrive(w, aligned)), _local
    return _action(d, op, index, lambda w, R: machine.cluster_wait(w, aligned)), _local


@decodes(ptx.FenceOp, ptx.FenceProxyOp)
def _fence(d: Decoder, op: ptx.Instruction, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """Memory and proxy fences order nothing the model tracks (as at the NVVM level)."""
    return _jump(index + 1), None


@decodes(ptx.FenceMbarrierInitOp)
def _fence_mbarrier_init(
    d: Decoder, op: ptx.FenceMbarrierInitOp, index: int, labels: dict[str, int], rpc: int
) -> Decoding:
    return _action(d, op, index, lambda w, R: machine.fence_mbarrier_init(w)), None


@decodes(ptx.ElectSyncOp)
def _elect(d: Decoder, op: ptx.ElectSyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    member = d.integer(op.mask)
    slot, _ = d.writer(op.res, "pred")
    lane = d.writer(op.lane, "b32") if op.lane is not None else None
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        bits = member(w, R)
        if isinstance(bits, np.ndarray):
            raise Hazard("non-uniform-operand", "elect.sync: the member mask must be the same in every lane")
        elected = with_mask(w, mask, lambda: machine.elect_one(w, int(bits) & 0xFFFFFFFF))
        full = guard is None and w.all_active
        _store_result(w, R, slot, elected, mask, full)
        if lane is not None and elected.any():  # every executing lane gets the leader's laneid
            _store_result(w, R, lane[0], np.full(WARP, int(np.argmax(elected)), np.uint32), mask, full)
        return nxt

    return run, None


# ---- tcgen05 ---------------------------------------------------------------------------


@decodes(ptx.Tcgen05AllocOp)
def _alloc(d: Decoder, op: ptx.Tcgen05AllocOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    address, ncols = d.address(op.addr, op.offset.data), d.integer(op.ncols)
    group = op.cta_group.as_int()
    return _action(d, op, index, lambda w, R: machine.tmem_alloc(w, op, address(w, R), ncols(w, R), group)), None


@decodes(ptx.Tcgen05DeallocOp)
def _dealloc(d: Decoder, op: ptx.Tcgen05DeallocOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    taddr, ncols = d.integer(op.taddr), d.integer(op.ncols)
    group = op.cta_group.as_int()
    return _action(d, op, index, lambda w, R: machine.tmem_dealloc(w, taddr(w, R), ncols(w, R), group)), None


@decodes(ptx.Tcgen05RelinquishOp)
def _relinquish(d: Decoder, op: ptx.Tcgen05RelinquishOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    group = op.cta_group.as_int()
    return _action(d, op, index, lambda w, R: machine.tmem_relinquish(w, group)), None


@decodes(ptx.Tcgen05FenceOp)
def _tcgen05_fence(d: Decoder, op: ptx.Tcgen05FenceOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    before = op.kind.data == nvvm.Tcgen05FenceKind.BEFORE

    def act(w: PtxWarp, R: list[Lanes]) -> None:
        if before:
            w.clock.fence_before()
        else:
            w.clock.fence_after()

    return _action(d, op, index, act), None


@decodes(ptx.Tcgen05WaitOp)
def _tcgen05_wait(d: Decoder, op: ptx.Tcgen05WaitOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    if op.kind.data != nvvm.Tcgen05WaitKind.LOAD:
        return _action(d, op, index, lambda w, R: machine.tmem_wait(w, "st")), None

    def act(w: PtxWarp, R: list[Lanes]) -> None:
        machine.tmem_wait(w, "ld")
        pending.complete(R)

    return _action(d, op, index, act), None


def _split(op: ptx.Tcgen05LdOp | ptx.Tcgen05StOp) -> int:
    if op.split is None:
        return 0
    owner = op.split.owner
    if not isinstance(owner, ptx.ImmOp) or not isinstance(owner.value, IntegerAttr):
        raise Refused("the half-split offset of .16x32bx2 is an integer immediate")
    return owner.value.value.data


@decodes(ptx.Tcgen05LdOp)
def _tcgen05_ld(d: Decoder, op: ptx.Tcgen05LdOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    plan = ldst_plan(op.shape.data, len(op.res), _split(op), op.pack is not None)
    taddr = d.integer(op.taddr)
    writers = [d.writer(r, "b32") for r in op.res]
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if guard is not None and not mask.any():
            return nxt
        if mask is w.mask:
            values = machine.tmem_ld(w, op, taddr(w, R), plan)
        else:
            values = with_mask(w, mask, lambda: machine.tmem_ld(w, op, taddr(w, R), plan))
        # One copy into register order, then a view per register.
        columns = list(np.asarray(values, dtype=np.uint32).T.copy())
        # (.sync.aligned: every lane of the warp executes it, so no merge with old values.)
        for (slot, convert), column in zip(writers, columns, strict=True):
            R[slot] = cast(Lanes, pending.PendingRegister(convert(column), op))  # undefined until wait::ld
        return nxt

    return run, None


@decodes(ptx.Tcgen05StOp)
def _tcgen05_st(d: Decoder, op: ptx.Tcgen05StOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    plan = ldst_plan(op.shape.data, len(op.values), _split(op), op.unpack is not None)
    taddr = d.integer(op.taddr)
    readers = [d.reader(v, "b32") for v in op.values]

    def act(w: PtxWarp, R: list[Lanes]) -> None:
        machine.tmem_st(w, op, taddr(w, R), np.stack([r(R) for r in readers], axis=1), plan)

    return _action(d, op, index, act), None


@decodes(ptx.Tcgen05MmaOp)
def _tcgen05_mma(d: Decoder, op: ptx.Tcgen05MmaOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    a_tmem = op.a_tmem is not None
    dd = d.reader(op.d, "b32")
    a = d.reader(op.a, "b32" if a_tmem else "b64")
    b = d.reader(op.b, "b64")
    idesc = d.reader(op.idesc, "b32")
    enable = d.reader(op.enable_input_d, "pred")
    scale = d.reader(op.scale, "u32") if op.scale is not None else None
    masks = [d.reader(v, "b32") for v in op.disable_output_lane]
    kind, group = op.kind.data.value, op.cta_group.as_int()

    def act(w: PtxWarp, R: list[Lanes]) -> None:
        disable = np.stack([m(R) for m in masks], axis=1) if masks else None
        operands = machine.MmaOperands(
            dd(R), a(R), b(R), idesc(R), enable(R), a_tmem, scale(R) if scale is not None else None, disable
        )
        machine.tcgen05_mma(w, op, kind, group, operands)

    return _action(d, op, index, act), None


@decodes(ptx.Tcgen05CommitOp)
def _tcgen05_commit(d: Decoder, op: ptx.Tcgen05CommitOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    address = d.address(op.addr, op.offset.data)
    mask = d.reader(op.mask, "b16") if op.mask is not None else None
    group = op.cta_group.as_int()

    def act(w: PtxWarp, R: list[Lanes]) -> None:
        machine.tcgen05_commit(w, op, address(w, R), mask(R) if mask is not None else None, group)

    return _action(d, op, index, act), None


@decodes(ptx.Tcgen05CpOp)
def _tcgen05_cp(d: Decoder, op: ptx.Tcgen05CpOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    if op.src_format is not None:
        raise Refused("tcgen05.cp with a decompressing source format is not modelled")
    taddr, desc = d.reader(op.taddr, "b32"), d.reader(op.desc, "b64")
    shape, multicast, group = op.shape.data.value, op.multicast.data.value, op.cta_group.as_int()
    return _action(
        d, op, index, lambda w, R: machine.tcgen05_cp(w, op, taddr(R), desc(R), shape, multicast, group)
    ), None


@decodes(ptx.Tcgen05ShiftOp)
def _tcgen05_shift(d: Decoder, op: ptx.Tcgen05ShiftOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    raise Refused("tcgen05.shift is not modelled (its column footprint is not documented here)")


# ---- typed value ops beyond the core list: the same value semantics ----------------------

# Their operands are in PTX order (`bfi`'s c, d last, as the ISA writes them), which is
# the order the semantics take.
decodes(
    ptx.PopcOp, ptx.ClzOp, ptx.BfindOp, ptx.BrevOp, ptx.BfeOp, ptx.BfiOp, ptx.PrmtOp, ptx.ShfOp,
    ptx.Ex2Op, ptx.AbsOp, ptx.RcpOp, ptx.SqrtOp, ptx.CopysignOp, ptx.TestpOp, ptx.CvtPackOp,
)(_value)  # fmt: skip

Writer = tuple[int, Callable[[Lanes], Lanes]]


def _lanewise(
    d: Decoder, op: ptx.Instruction, index: int, fn: Callable[..., Any], readers: list[Callable[[list[Lanes]], Lanes]],
    writers: Sequence[Writer | None],
) -> Run:  # fmt: skip
    """`fn` over the readers' lane arrays, its result(s) written under the execution
    mask (a None writer: the sink `_`, not written)."""
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        full = guard is None and w.all_active
        if not full and not mask.any():
            return nxt
        out = fn(*[r(R) for r in readers])
        results = out if len(writers) > 1 else (out,)
        for writer, value in zip(writers, results, strict=True):
            if writer is not None:
                _store_result(w, R, writer[0], writer[1](np.asarray(value)), mask, full)
        return nxt

    return run


@decodes(ptx.Lop3Op)
def _lop3(d: Decoder, op: ptx.Lop3Op, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """The truth table is an immediate (the verifier's rule), which the semantics take as
    a Python int."""
    owner = op.lut.owner
    if not isinstance(owner, ptx.ImmOp) or not isinstance(owner.value, IntegerAttr):
        raise Refused("lop3's truth table is an integer immediate")
    lut = owner.value.value.data & 0xFF
    fn = decode("lop3", ("b32",)).fn
    readers = [d.reader(v, "b32") for v in (op.a, op.b, op.c)]

    def apply(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
        return fn(a, b, c, lut)

    return _lanewise(d, op, index, apply, readers, [d.writer(op.res, "b32")]), None


@decodes(ptx.MovPackOp)
def _mov_pack(d: Decoder, op: ptx.MovPackOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    sem = decode("mov", (op.ptx_type.value,), pack=len(op.parts))
    readers = [d.reader(v, t) for v, t in zip(op.parts, sem.operands, strict=True)]
    return _copying(d, op, index, sem.fn, readers, [d.writer(op.res, sem.results[0])]), None


@decodes(ptx.MovUnpackOp)
def _mov_unpack(d: Decoder, op: ptx.MovUnpackOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    sem = decode("mov", (op.ptx_type.value,), unpack=op.lanes.data.parts)
    writers = [None if v is None else d.writer(v, t) for v, t in zip(op.destinations(), sem.results, strict=True)]
    return _copying(d, op, index, sem.fn, [d.reader(op.src, sem.operands[0])], writers), None


def _copying(
    d: Decoder, op: ptx.Instruction, index: int, fn: Callable[..., Any], readers: list[Callable[[list[Lanes]], Lanes]],
    writers: Sequence[Writer | None],
) -> Run:  # fmt: skip
    """`_lanewise` for a register copy (`mov` pack / unpack) that carries the pending state
    of `tcgen05.ld` registers (pending.py) to its results, for the whole warp; a partial
    copy of one reads it (a hazard)."""
    plain = _lanewise(d, op, index, fn, readers, writers)
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        args: list[Any] = [r(R) for r in readers]
        load = next((a.load for a in args if a.__class__ is pending.PendingRegister), None)
        if load is None or guard is not None or not w.all_active:
            return plain(w)
        out = fn(*(a.values if a.__class__ is pending.PendingRegister else a for a in args))
        results = out if len(writers) > 1 else (out,)
        for writer, value in zip(writers, results, strict=True):
            if writer is not None:
                R[writer[0]] = cast(Lanes, pending.PendingRegister(writer[1](np.asarray(value)), load))
        return nxt

    return run


@decodes(ptx.AddF32x2Op, ptx.SubF32x2Op, ptx.MulF32x2Op, ptx.FmaF32x2Op)
def _f32x2(
    d: Decoder, op: ptx.AddF32x2Op | ptx.SubF32x2Op | ptx.MulF32x2Op | ptx.FmaF32x2Op, index: int,
    labels: dict[str, int], rpc: int,
) -> Decoding:  # fmt: skip
    """`.f32x2`: the `.f32` instruction with the same rounding and `.ftz` on each of the
    two `.f32` halves of the `.b64` operands (PTX ISA 9.0, add/sub/mul/fma: "element-wise")."""
    modifiers = ([] if op.rounding is None else [op.rounding.data.value]) + (["ftz"] if op.ftz else [])
    scalar = decode(op.MNEMONIC, (*modifiers, "f32")).fn

    def fn(*packed: Lanes) -> Lanes:
        halves = [np.ascontiguousarray(x).view(np.float32).reshape(WARP, 2) for x in packed]
        lo = np.asarray(scalar(*[np.ascontiguousarray(h[:, 0]) for h in halves]), np.float32)
        hi = np.asarray(scalar(*[np.ascontiguousarray(h[:, 1]) for h in halves]), np.float32)
        return np.stack([lo, hi], axis=1).view(np.uint64).reshape(WARP)

    readers = [d.reader(v, "b64") for v in op.sources()]
    return _lanewise(d, op, index, fn, readers, [d.writer(op.res, "b64")]), None


# ---- warp-level data exchange: shfl, vote, match, activemask --------------------------------

_LANE = np.arange(WARP, dtype=np.int64)


def _bits(mask: Lanes) -> int:
    return int((mask.astype(np.uint64) << np.arange(WARP, dtype=np.uint64)).sum())


def _members(w: PtxWarp, op: ptx.Instruction, member: Value, executing: Lanes) -> Lanes:
    """The lanes taking part in a `.sync` warp op of membermask `member`: the executing
    ones. An executing lane outside the membermask is undefined behaviour (PTX ISA 9.0,
    shfl.sync / vote.sync / match.sync: "The behavior ... is undefined if the executing
    thread is not in the membermask"); a live member lane that does not execute it with
    them would be waited for on the GPU, which the model (one divergent path at a time)
    does not do: refused."""
    if isinstance(member, np.ndarray):
        raise Hazard("non-uniform-operand", f"{op.mnemonic()}: the member mask must be the same in every lane")
    wanted = ((int(member) >> _LANE) & 1).astype(bool)
    if (executing & ~wanted).any():
        raise Hazard(
            "warp-sync-membermask",
            f"{op.mnemonic()} executed by lanes {format_lanes(executing & ~wanted)} not in membermask 0x"
            f"{int(member) & 0xFFFFFFFF:08x}",
        )
    waiting = wanted & w.live & ~executing
    if waiting.any():
        raise _refusal(
            w,
            op,
            f"membermask lanes {format_lanes(waiting)} are live but do not execute it with lanes "
            f"{format_lanes(executing)} (a .sync warp op completed from different instructions is not modelled)",
        )
    return executing


@decodes(ptx.ShflSyncOp)
def _shfl(d: Decoder, op: ptx.ShflSyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """The PTX ISA 9.0 pseudocode of shfl.sync: `lane` reads lane `j` of its segment,
    `p` whether `j` was in range (else `j = lane`)."""
    a, b, c = d.reader(op.a, "b32"), d.reader(op.b, "b32"), d.reader(op.c, "b32")
    member = d.integer(op.mask)
    slot, convert = d.writer(op.res, "b32")
    pred = d.writer(op.pred, "pred") if op.pred is not None else None
    mode = op.mode.data
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        lanes = _members(w, op, member(w, R), mask)
        bval = b(R).astype(np.int64) & 31
        cval = c(R).astype(np.int64)
        clamp, segmask = cval & 31, (cval >> 8) & 31
        max_lane = (_LANE & segmask) | (clamp & ~segmask)
        min_lane = _LANE & segmask
        if mode is ShflMode.UP:
            j = _LANE - bval
            pval = j >= max_lane
        elif mode is ShflMode.DOWN:
            j = _LANE + bval
            pval = j <= max_lane
        elif mode is ShflMode.BFLY:
            j = _LANE ^ bval
            pval = j <= max_lane
        else:
            j = min_lane | (bval & ~segmask)
            pval = j <= max_lane
        j = np.where(pval, j, _LANE)  # in [0, 31]: out-of-range sources failed pval
        stray = lanes & ~lanes[j]
        if stray.any():
            raise _refusal(
                w, op, f"lanes {format_lanes(stray)} read lanes that do not execute it (their value is not modelled)"
            )
        full = guard is None and w.all_active
        _store_result(w, R, slot, convert(a(R)[j]), lanes, full)
        if pred is not None:
            _store_result(w, R, pred[0], pval, lanes, full)
        return nxt

    return run, None


@decodes(ptx.VoteSyncOp)
def _vote(d: Decoder, op: ptx.VoteSyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """Over the member lanes' predicates (`!a` negated): `.all`, `.any`, `.uni` (all equal),
    `.ballot` (bit i = lane i's predicate, 0 for lanes not taking part)."""
    src = d.reader(op.src, "pred")
    member = d.integer(op.mask)
    negate = op.negate_source is not None
    mode = op.mode.data
    slot, convert = d.writer(op.res, "b32" if mode is VoteMode.BALLOT else "pred")
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        lanes = _members(w, op, member(w, R), mask)
        value = src(R) != negate
        votes = value[lanes]
        if mode is VoteMode.BALLOT:
            result = np.full(WARP, _bits(value & lanes), np.uint32)
        else:
            agree = votes.all() if mode is VoteMode.ALL else votes.any() if mode is VoteMode.ANY else (
                votes.all() or not votes.any())  # fmt: skip
            result = np.full(WARP, bool(agree), np.bool_)
        _store_result(w, R, slot, convert(result), lanes, guard is None and w.all_active)
        return nxt

    return run, None


@decodes(ptx.ReduxSyncOp)
def _redux(d: Decoder, op: ptx.ReduxSyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`a` over the member lanes (PTX ISA 9.0, redux.sync): `.add` wraps modulo 2^32,
    `.min/.max` compare as `.u32` or `.s32`, `.and/.or/.xor` bitwise; every member lane
    gets the result."""
    ptype = op.type.data.value
    src = d.reader(op.src, ptype)
    member = d.integer(op.mask)
    slot, convert = d.writer(op.res, ptype)
    kind = op.kind.data

    def reduce(v: Lanes) -> int:
        match kind:
            case ReduxKind.ADD:
                return int(v.astype(np.uint64).sum()) & 0xFFFFFFFF
            case ReduxKind.MIN:
                return int(v.min())
            case ReduxKind.MAX:
                return int(v.max())
            case ReduxKind.AND:
                return int(np.bitwise_and.reduce(v))
            case ReduxKind.OR:
                return int(np.bitwise_or.reduce(v))
            case ReduxKind.XOR:
                return int(np.bitwise_xor.reduce(v))

    dtype = LANE_DTYPE[ptype]
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        lanes = _members(w, op, member(w, R), mask)
        value = np.full(WARP, reduce(src(R)[lanes]) & 0xFFFFFFFF, np.uint32).view(dtype)
        _store_result(w, R, slot, convert(value), lanes, guard is None and w.all_active)
        return nxt

    return run, None


@decodes(ptx.MatchSyncOp)
def _match(d: Decoder, op: ptx.MatchSyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`.any`: the mask of member lanes whose value equals this lane's; `.all`: the member
    mask when every member lane holds the same value (then `p`), else 0."""
    src = d.reader(op.src, op.type.data.value)
    member = d.integer(op.mask)
    slot, convert = d.writer(op.res, "b32")
    pred = d.writer(op.pred, "pred") if op.pred is not None else None
    every = op.mode.data is MatchMode.ALL
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        lanes = _members(w, op, member(w, R), mask)
        value = src(R)
        full = guard is None and w.all_active
        if every:
            same = bool((value[lanes] == value[lanes][0]).all())
            result = np.full(WARP, _bits(lanes) if same else 0, np.uint32)
            if pred is not None:
                _store_result(w, R, pred[0], np.full(WARP, same, np.bool_), lanes, full)
        else:
            equal = (value[:, None] == value[None, :]) & lanes[None, :]
            result = (equal.astype(np.uint64) << np.arange(WARP, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
        _store_result(w, R, slot, convert(result), lanes, full)
        return nxt

    return run, None


@decodes(ptx.ActivemaskOp)
def _activemask(d: Decoder, op: ptx.ActivemaskOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """The warp's active lanes (a guarded-off lane is still active; an exited one is not)."""
    slot, convert = d.writer(op.res, "b32")
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        active = np.full(WARP, _bits(w.mask), np.uint32)
        _store_result(w, R, slot, convert(active), mask, guard is None and w.all_active)
        return nxt

    return run, None


# ---- no effect on the model, checked; traps; not modelled ---------------------------------


@decodes(ptx.NanosleepOp)  # prefetch: tma_copy.py
def _no_effect(d: Decoder, op: ptx.Instruction, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """A suspension or a cache hint: nothing the model tracks (the schedule is the explorer's)."""
    return _jump(index + 1), None


@decodes(ptx.SetmaxnregOp)
def _setmaxnreg(d: Decoder, op: ptx.SetmaxnregOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """The register budget is not modelled (the verifier checked the count); `.sync.aligned`
    is: every live lane of the warp executes it."""
    return _action(d, op, index, lambda w, R: w.require_converged(op.mnemonic())), None


@decodes(ptx.TrapOp)
def _trap(d: Decoder, op: ptx.TrapOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    def act(w: PtxWarp, R: list[Lanes]) -> None:
        raise Hazard("trap", f"trap executed by lanes {format_lanes(w.mask)} of {w.name}: the kernel aborted")

    return _action(d, op, index, act), None


def is_thread_barrier(op: Operation) -> bool:
    return op.has_trait(ThreadBarrier)

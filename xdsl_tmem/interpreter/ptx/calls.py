"""Device-function calls (`call` of a `.func`) and indexed branches (`brx.idx`) at the PTX level.

A call is **inlined at decode time** (docs/ptx-level.md, "Calls"): `Decoder.flatten`
hands each `call` to `_expand_call`, which places the call instruction, then the callee's
body as a new *frame* (its own register slots, its own labels), then the instruction
after the call, where the callee's `ret`s go. The flat program is one control-flow
graph, so a call under divergence, a guarded call and a callee with an early `ret` in
some lanes reconverge at immediate post-dominators (cfg.py) as branches do, with no
call stack in the warp. The price: recursion cannot be inlined; a recursive call is
refused when it runs.

`.param` variables declared in a body (a call's arguments and return values) are
per-thread byte arrays: each gets a register-file slot of (32, size) bytes, which
`st.param` / `ld.param` write and read at byte offsets (the layout llc-22 emits:
`st.param.b32 [param0+4], %r1`). Inside the inlined callee its parameter and return
names (`f_param_0`, `func_retval0`) are bound to the caller's argument and return
variables, so a call copies nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from xdsl.ir import Operation, SSAValue

from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx.qualifiers import StateSpace
from xdsl_tmem.interpreter.machine import Hazard
from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE
from xdsl_tmem.interpreter.ptx.cfg import EXIT, Flow
from xdsl_tmem.interpreter.ptx.program import (
    DECODERS,
    EXPANDERS,
    FLOWS,
    Decoder,
    Decoding,
    Lanes,
    OpDecoder,
    Refused,
    Run,
    decodes,
    exec_mask,
    parse_parameter,
)
from xdsl_tmem.interpreter.values import WARP, format_lanes

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp

MAX_INLINED = 200_000
"""Instructions a kernel may grow to by inlining its calls (a guard against a call tree
that explodes; such a kernel is refused at launch)."""

Chains = list[list[dict[str, int]]]


@dataclass(frozen=True)
class LocalParam:
    """A `.param` variable of a body (or a callee's parameter bound to one): a register-
    file slot of (32, size) bytes, one row per lane."""

    name: str
    slot: int
    size: int


@dataclass(frozen=True)
class CallSite:
    """An inlined call: the callee's first instruction and the instruction after its body
    (where its `ret`s go); or why the call is not inlined (refused when it runs)."""

    start: int
    join: int
    refusal: str | None = None


@dataclass
class Inlining:
    """What inlining decided for one launch's program (kept in `Decoder.extra`)."""

    sites: dict[int, CallSite] = field(default_factory=dict[int, CallSite])
    """Each call instruction's site."""
    returns: dict[int, int] = field(default_factory=dict[int, int])
    """Each inlined `ret`: where its call returns to."""
    stack: list[str] = field(default_factory=list[str])
    """The functions being inlined, outermost first (recursion check)."""
    frames: int = 0
    """Frames numbered so far (0 is the kernel's body)."""


def _state(d: Decoder) -> Inlining:
    return cast(Inlining, d.extra.setdefault("calls", Inlining()))


# --------------------------------------------------------------------------------------
# Flattening: `.param` variables and inlined calls
# --------------------------------------------------------------------------------------


def _new_param(d: Decoder, name: str, size: int) -> LocalParam:
    zeros = np.zeros((WARP, size), dtype=np.uint8)
    zeros.flags.writeable = False
    d.initial.append(zeros)
    return LocalParam(name, len(d.initial) - 1, size)


def _expand_variable(
    d: Decoder, op: ptx.VariableOp, instructions: list[Operation], chains: Chains, chain: list[dict[str, int]]
) -> None:
    """A `.param` variable of a body gets per-thread storage; other variables execute
    nothing (`.shared` ones are laid out at launch, kernel.py)."""
    if op.decl.space.data != "param":
        return
    try:
        size = parse_parameter(op.decl, 0).size
    except Refused:
        return  # an instruction naming it is refused when it runs (no local storage)
    d.symbols[-1][op.decl.sym_name.data] = _new_param(d, op.decl.sym_name.data, size)


def local_param(d: Decoder, index: int, value: SSAValue) -> LocalParam | None:
    """The body `.param` variable (or bound callee parameter) that a symbol operand of
    instruction `index` names, the innermost declaration first."""
    owner = value.owner
    if not isinstance(owner, ptx.SymbolOp):
        return None
    name = owner.symbol.data
    for scope in reversed(d.scope_symbols[index]):
        if name in scope:
            return cast(LocalParam, scope[name])
    return None


def _callee(op: ptx.CallOp) -> ptx.FunctionOp | None:
    """The `.func` definition (with a body) that `op` calls, from the enclosing module."""
    module = op.parent_op()
    while module is not None and not isinstance(module, ptx.ModuleOp):
        module = module.parent_op()
    if module is None:
        return None
    for function in module.body.block.ops:
        if (
            isinstance(function, ptx.FunctionOp)
            and function.sym_name.data == op.callee.data
            and function.kind.data == "func"
            and function.body.blocks
        ):
            return function
    return None


def _bindings(d: Decoder, op: ptx.CallOp, callee: ptx.FunctionOp, index: int) -> dict[str, Any]:
    """The callee's parameter and return names bound to the caller's `.param` variables
    (sizes must agree: the PTX ISA requires the call's arguments to match the callee's
    declarations)."""
    bound: dict[str, Any] = {}
    for what, decls, values in (
        ("argument", callee.params, op.args),
        ("return value", callee.returns, op.returns),
    ):
        declared = list(decls or ())
        if len(declared) != len(values):
            raise Refused(f"{len(values)} {what}s for {callee.sym_name.data}, which declares {len(declared)}")
        for decl, value in zip(declared, values, strict=True):
            given = local_param(d, index, value)
            if given is None:
                raise Refused(f"{what} {_name(value)} is not a .param variable of the calling body")
            size = parse_parameter(decl, 0).size
            if size != given.size:
                raise Refused(
                    f"{what} {given.name} has {given.size} bytes; {callee.sym_name.data} declares "
                    f"{decl.ptx_text()} ({size} bytes)"
                )
            bound[decl.sym_name.data] = given
    return bound


def _name(value: SSAValue) -> str:
    owner = value.owner
    return owner.symbol.data if isinstance(owner, ptx.SymbolOp) else str(value.type)


def _expand_call(
    d: Decoder, op: ptx.CallOp, instructions: list[Operation], chains: Chains, chain: list[dict[str, int]]
) -> None:
    """Place the call, then inline the callee's body as a new frame; its `ret`s jump to
    the instruction after it. A call that cannot be inlined is placed alone and refused
    when it runs (recursion, a callee without a body, mismatched arguments)."""
    state = _state(d)
    index = len(instructions)
    d.place(op, instructions, chains, chain)
    guarded = op.guard_value() is not None
    callee = _callee(op)
    name = op.callee.data
    refusal: str | None = None
    bound: dict[str, Any] = {}
    if callee is None:
        refusal = f"{name} is not a .func defined (with a body) in this module"
    elif name in state.stack:
        refusal = (
            f"recursive call of {name} (through {' -> '.join([*state.stack, name])}): calls are inlined when "
            "the kernel is decoded, so recursion is not modelled"
        )
    else:
        try:
            bound = _bindings(d, op, callee, index)
        except Refused as e:
            refusal = str(e)
    if refusal is not None or callee is None:
        state.sites[index] = CallSite(index + 1, index + 1, refusal)
        d.flows[index] = Flow()
        return
    saved_frame, saved_symbols = d.frame, d.symbols
    state.frames += 1
    frame = state.frames
    d.frame, d.symbols = frame, [bound]
    state.stack.append(name)
    try:
        d.flatten(callee.body.block, instructions, chains, [])
    finally:
        state.stack.pop()
        d.frame, d.symbols = saved_frame, saved_symbols
    if len(instructions) > MAX_INLINED:
        raise Refused(f"inlining the calls makes the kernel longer than {MAX_INLINED} instructions")
    join = len(instructions)
    state.sites[index] = CallSite(index + 1, join)
    d.flows[index] = Flow((join,), falls_through=True) if guarded else Flow()
    for i in range(index + 1, join):
        ret = instructions[i]
        if isinstance(ret, ptx.RetOp) and d.frames[i] == frame:  # not a ret of a callee of the callee
            state.returns[i] = join
            d.flows[i] = Flow((join,), falls_through=ret.guard_value() is not None)


EXPANDERS[ptx.VariableOp] = _expand_variable
EXPANDERS[ptx.CallOp] = _expand_call


# --------------------------------------------------------------------------------------
# Decoders: call, the callee's ret, ld/st of body `.param` variables
# --------------------------------------------------------------------------------------


@decodes(ptx.CallOp)
def _call(d: Decoder, op: ptx.CallOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """Enter the inlined callee. Under a guard the lanes whose guard holds call and the
    others go on after the call, a divergent branch reconverging at its post-dominator;
    `call.uni` asserts that the active lanes agree (PTX ISA 9.0, `call`)."""
    site = _state(d).sites[index]
    if site.refusal is not None:
        raise Refused(site.refusal)
    start, join = site.start, site.join
    guard = d.guard(op)
    if guard is None:
        return _jump(start), None
    slot, negated = guard
    uniform = op.uniform is not None

    def run(w: PtxWarp) -> int:
        g = w.regs[slot]
        if negated:
            g = ~g
        mask = w.mask
        taken = mask & g
        if not taken.any():
            return join
        stay = mask & ~g
        if not stay.any():
            return start
        if uniform:
            raise Hazard(
                "call-uni-divergent",
                f"call.uni {op.callee.data} in {w.name}: its guard is true in lanes {format_lanes(taken)} and false "
                f"in lanes {format_lanes(stay)} of the active {format_lanes(mask)} (.uni asserts that the call is "
                "non-divergent: all active threads agree on the guard)",
            )
        return w.diverge(start, taken, join, stay, rpc)

    return run, None


@decodes(ptx.CallIndirectOp)
def _call_indirect(d: Decoder, op: ptx.CallIndirectOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    raise Refused(
        f"an indirect call (through a function address and {op.prototype.data}) is not modelled: calls are "
        "inlined when the kernel is decoded, which needs the callee's name"
    )


def _jump(target: int) -> Run:
    def run(w: PtxWarp) -> int:
        return target

    return run


_KERNEL_RET = DECODERS[ptx.RetOp]


@decodes(ptx.RetOp)
def _ret(d: Decoder, op: ptx.RetOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """A callee's `ret` jumps to the instruction after its call (a guarded one is a
    branch there, divergent when the lanes disagree); the kernel's leaves the kernel."""
    join = _state(d).returns.get(index)
    if join is None:
        return _KERNEL_RET(d, op, index, labels, rpc)
    guard = d.guard(op)
    if guard is None:
        return _jump(join), None
    slot, negated = guard
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        g = w.regs[slot]
        if negated:
            g = ~g
        taken = w.mask & g
        if not taken.any():
            return nxt
        stay = w.mask & ~g
        if not stay.any():
            return join
        return w.diverge(join, taken, nxt, stay, rpc)

    return run, None


def _param_window(op: ptx.LdOp | ptx.StOp, param: LocalParam, size: int) -> tuple[int, int]:
    start = op.offset.data
    if start < 0 or start + size > param.size:
        raise Refused(f"[{param.name}+{start}] accesses {size} bytes outside the {param.size}-byte .param variable")
    return start, start + size


_PLAIN_LD: OpDecoder = DECODERS[ptx.LdOp]
_PLAIN_ST: OpDecoder = DECODERS[ptx.StOp]


@decodes(ptx.LdOp)
def _ld(d: Decoder, op: ptx.LdOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`ld.param` of a body `.param` variable (a call's return value, a callee's
    parameter): each lane's bytes at the offset; other loads are memory.py's."""
    param = local_param(d, index, op.addr) if _is_param(op.space) else None
    if param is None:
        return _PLAIN_LD(d, op, index, labels, rpc)
    t = op.type.data.value
    dtype = LANE_DTYPE[t]
    count = len(op.res)
    start, end = _param_window(op, param, dtype.itemsize * count)
    writers = [d.writer(r, t) for r in op.res]
    source, guard, nxt = param.slot, d.guard(op), index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        full = guard is None and w.all_active
        values = np.ascontiguousarray(R[source][:, start:end]).view(dtype)
        for i, (slot, convert) in enumerate(writers):
            value = convert(np.ascontiguousarray(values[:, i]))
            R[slot] = value if full else np.where(mask, value, R[slot])
        return nxt

    return run, None


@decodes(ptx.StOp)
def _st(d: Decoder, op: ptx.StOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`st.param` to a body `.param` variable (a call's argument, a callee's return
    value): the executing lanes' bytes at the offset; other stores are memory.py's."""
    param = local_param(d, index, op.addr) if _is_param(op.space) else None
    if param is None:
        return _PLAIN_ST(d, op, index, labels, rpc)
    t = op.type.data.value
    dtype = LANE_DTYPE[t]
    readers = [d.reader(v, t) for v in op.values]
    start, end = _param_window(op, param, dtype.itemsize * len(readers))
    target, guard, nxt = param.slot, d.guard(op), index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        value = np.empty((WARP, len(readers)), dtype=dtype)
        for i, read in enumerate(readers):
            value[:, i] = read(R)
        raw = value.view(np.uint8).reshape(WARP, end - start)
        stored = np.array(R[target])
        if guard is None and w.all_active:
            stored[:, start:end] = raw
        else:
            stored[mask, start:end] = raw[mask]
        stored.flags.writeable = False
        R[target] = stored
        return nxt

    return run, None


def _is_param(space: Any) -> bool:
    """`.param`, or `.param::func` (a function's own parameters, PTX ISA 9.0, "Parameter
    State Space"); `.param::entry` is a kernel's, read as before."""
    return space is not None and space.data in (StateSpace.PARAM, StateSpace.PARAM_FUNC)


# --------------------------------------------------------------------------------------
# brx.idx
# --------------------------------------------------------------------------------------


def branch_targets(op: ptx.BrxIdxOp) -> list[str]:
    """The labels of the `.branchtargets` list `op` names, declared in its scope or an
    enclosing one of its function (PTX ISA 9.0, `brx.idx`: "defined in the local
    function scope before it is used")."""
    name = op.targets.data
    block = op.parent_block()
    while block is not None:
        for other in block.ops:
            if isinstance(other, ptx.BranchTargetsOp) and other.sym_name.data == name:
                return [label.data for label in other.labels]
        parent = block.parent_op()
        if parent is None or isinstance(parent, ptx.FunctionOp):
            break
        block = parent.parent_block()
    raise Refused(f"brx.idx names {name}, which is no .branchtargets list of its function")


def _brx_flow(op: ptx.BrxIdxOp, index: int, labels: dict[str, int]) -> Flow:
    targets: list[int] = []
    for label in branch_targets(op):
        if label not in labels:
            raise Refused(f"brx.idx: .branchtargets {op.targets.data} names {label}, which is no label here")
        targets.append(labels[label])
    return Flow(tuple(targets), falls_through=op.guard_value() is not None)


def _flow_or_refusal(op: ptx.BrxIdxOp, index: int, labels: dict[str, int]) -> Flow:
    """The flow of a brx.idx; one whose list cannot be resolved falls through (it is
    refused when it runs)."""
    try:
        return _brx_flow(op, index, labels)
    except Refused:
        return Flow()


FLOWS[ptx.BrxIdxOp] = _flow_or_refusal


@decodes(ptx.BrxIdxOp)
def _brx_idx(d: Decoder, op: ptx.BrxIdxOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """Jump to the `index`-th label of the list. Lanes with different indices diverge:
    one path per target (the lowest index first), all reconverging at the immediate
    post-dominator of the targets. `.uni` with differing indices is the hazard
    `brx-uni-divergent`; an index past the list (undefined in the PTX ISA) the hazard
    `brx-index-out-of-range`."""
    targets = list(_brx_flow(op, index, labels).targets)
    read = d.reader(op.index, "u32")
    guard = d.guard(op)
    uniform = op.uniform is not None
    nxt = index + 1
    count = len(targets)
    table = op.targets.data

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        value = read(R)
        chosen = value[mask]
        if int(chosen.max()) >= count:
            bad = mask & (value >= count)
            raise Hazard(
                "brx-index-out-of-range",
                f"brx.idx {table} in {w.name}: index {int(value[bad][0])} in lanes {format_lanes(bad)}, but the list "
                f"has {count} targets (PTX ISA, brx.idx: an index past the list is undefined behaviour)",
            )
        indices = sorted({int(v) for v in chosen})
        if len(indices) > 1 and uniform:
            raise Hazard(
                "brx-uni-divergent",
                f"brx.idx.uni {table} in {w.name}: the active lanes {format_lanes(mask)} hold indices {indices} "
                "(.uni asserts that the branch is non-divergent: all active threads hold the same index)",
            )
        paths = [(targets[i], mask & (value == i)) for i in indices]
        stay = w.mask & ~mask
        if stay.any():
            paths.append((nxt, stay))
        if len(paths) == 1:
            return paths[0][0]
        return diverge_paths(w, paths, rpc)

    return run, None


def diverge_paths(w: PtxWarp, paths: Sequence[tuple[int, Lanes]], rpc: int) -> int:
    """A multi-way branch: the first path runs first, the others wait on the warp's
    stack in order, all join at `rpc` (as `PtxWarp.diverge` for two ways)."""
    r = w.rpc if rpc == EXIT else rpc
    if r != w.rpc:
        w.simt.append((r, w.mask, w.rpc))
    for pc, lanes in reversed(paths[1:]):
        if pc != r:
            w.simt.append((pc, lanes, r))
    w.rpc = r
    first, lanes = paths[0]
    if first != r:
        w.set_mask(lanes)
        return first
    return w.reconverge()

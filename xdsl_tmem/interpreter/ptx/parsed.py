"""Decoders of the typed ops for forms that parsed PTX writes and our backend does not:
`setp` with a `p|q` pair or a combining predicate (`ptx.setp_bool`) and vector loads
with sinks (`ptx.ld_sink`). Registered with `@decodes` like the others
(`kernel.DECODER_MODULES`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx.qualifiers import StateSpace
from xdsl_tmem.interpreter.memory import load
from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE, Lanes
from xdsl_tmem.interpreter.ptx.program import (
    Decoder,
    Decoding,
    Refused,
    _access,  # pyright: ignore[reportPrivateUsage]
    _lanes,  # pyright: ignore[reportPrivateUsage]
    _lanewise,  # pyright: ignore[reportPrivateUsage]
    decodes,
    exec_mask,
    with_mask,
)
from xdsl_tmem.interpreter.ptx.semantics import decode
from xdsl_tmem.interpreter.values import WARP

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp

Writer = tuple[int, Callable[[Lanes], Lanes]] | None
"""A destination's register slot and conversion, or None for a sink."""


def _store(R: list[Lanes], writer: Writer, value: Lanes, mask: Lanes, full: bool) -> None:
    if writer is not None:
        slot, convert = writer
        converted = convert(np.ascontiguousarray(value))
        R[slot] = converted if full else np.where(mask, converted, R[slot])


@decodes(ptx.SetpBoolOp)
def _setp_bool(d: Decoder, op: ptx.SetpBoolOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """PTX ISA 9.0, setp: `t = a cmp b; p = BoolOp(t, c); q = BoolOp(!t, c)` (the value
    semantics' `setp` with `pair`); `!c` is read negated, a sink is not written."""
    sem = decode("setp", tuple(op.mnemonic().split(".")[1:]), pair=True)
    t = op.ptx_type.value
    readers = [d.reader(op.lhs, t), d.reader(op.rhs, t)]
    if op.c is not None:
        read_c = d.reader(op.c, "pred")
        readers.append((lambda R: ~read_c(R)) if op.c_negated is not None else read_c)
    if len(readers) != len(sem.operands):
        raise Refused(f"{op.mnemonic()}: {len(readers)} operands, the semantics take {len(sem.operands)}")
    writers: list[Writer] = [None if v is None else d.writer(v, "pred") for v in (op.p, op.q)]
    return _lanewise(d, op, index, sem.fn, readers, writers), None


def _param_vector(d: Decoder, op: ptx.LdSinkOp, t: str, count: int) -> Lanes:
    """`ld.param.vN [name+offset]`: the launch's parameter bytes, (32, count) lanes."""
    owner = op.addr.owner
    if not isinstance(owner, ptx.SymbolOp):
        raise Refused("ld.param through a register address is not modelled (only [param_name+offset])")
    param = d.params.get(owner.symbol.data)
    if param is None:
        raise Refused(f"ld.param of '{owner.symbol.data}', which is not a parameter of the kernel")
    dtype = LANE_DTYPE[t]
    size = dtype.itemsize * count
    if op.offset.data < 0 or op.offset.data + size > param.size:
        raise Refused(f"ld.param [{param.name}+{op.offset.data}] reads outside the {param.size}-byte parameter")
    start = param.offset + op.offset.data
    raw = np.frombuffer(bytes(d.param_bytes[start : start + size]), dtype=dtype)
    lanes = np.tile(raw, (WARP, 1))
    lanes.flags.writeable = False
    return lanes


@decodes(ptx.LdSinkOp)
def _ld_sink(d: Decoder, op: ptx.LdSinkOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """The whole vector is read (one access, as for `ptx.ld`); sinks are not written."""
    t = op.type.data.value
    destinations = op.destinations()
    count = len(destinations)
    writers: list[Writer] = [None if v is None else d.writer(v, t) for v in destinations]
    guard = d.guard(op)
    nxt = index + 1
    space = op.space.data if op.space is not None else None
    if space in (StateSpace.PARAM, StateSpace.PARAM_ENTRY):
        constant = _param_vector(d, op, t, count)

        def run_param(w: PtxWarp) -> int:
            R = w.regs
            mask = exec_mask(w, R, guard)
            full = guard is None and w.all_active
            for i, writer in enumerate(writers):
                _store(R, writer, constant[:, i], mask, full)
            return nxt

        return run_param, None
    if space not in (None, StateSpace.GLOBAL, StateSpace.SHARED, StateSpace.SHARED_CTA, StateSpace.SHARED_CLUSTER):
        raise Refused(f"ld from .{space.value if space else ''}: the machine model has no such memory")
    address = d.address(op.addr, op.offset.data)
    access = _access(t, count)

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        full = guard is None and w.all_active
        value = _lanes(with_mask(w, mask, lambda: load(w, op, address(w, R), access)), access.dtype, count)
        for i, writer in enumerate(writers):
            _store(R, writer, value[:, i], mask, full)
        return nxt

    return run, None

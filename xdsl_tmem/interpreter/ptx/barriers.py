"""PTX-level decoders of the CTA barriers: `bar.sync/arrive/red` and
`barrier[.cta].sync/arrive/red[.aligned]` (PTX ISA 9.0, bar/barrier).

`bar` is `barrier`'s `.aligned` form: every thread of a warp executes the same
instruction, so the warp arrives as one (executed under divergence it is the hazard
`divergent-sync-aligned`, nvvm.py `bar_sync`). Without `.aligned` a warp's threads may
reach the barrier from different instructions; the machine model
(`nvvm.barrier_partial`) collects the lanes until every non-exited lane of the warp got
there, and the warp then arrives as a whole. A path of the warp that reached the barrier
first yields to the path its lanes diverged from (`_yield_to_sibling`), as the
independent thread scheduling of sm_70 and later lets the other threads run on while
some wait (docs/ptx-level.md).

`bar.red` arrivals carry each thread's predicate vote; every thread gets the reduction
over all participating threads (`nvvm.reduce_votes`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx.qualifiers import BarrierKind
from xdsl_tmem.interpreter import nvvm as machine
from xdsl_tmem.interpreter.machine import Blocked, Hazard
from xdsl_tmem.interpreter.ptx.program import (
    Decoder,
    Decoding,
    Lanes,
    _local,  # pyright: ignore[reportPrivateUsage]
    _refusal,  # pyright: ignore[reportPrivateUsage]
    _store_result,  # pyright: ignore[reportPrivateUsage]
    decodes,
    exec_mask,
    with_mask,
)
from xdsl_tmem.interpreter.values import WARP, format_lanes

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp

Op = ptx.BarSyncOp | ptx.BarArriveOp | ptx.BarrierOp | ptx.BarRedOp


def _shape(op: Op) -> tuple[bool, bool]:
    """(arrive only, aligned)."""
    if isinstance(op, ptx.BarrierOp):
        return op.kind.data is BarrierKind.ARRIVE, op.aligned is not None
    if isinstance(op, ptx.BarRedOp):
        return False, op.is_aligned()
    return isinstance(op, ptx.BarArriveOp), True


def _yield_to_sibling(w: PtxWarp) -> int | None:
    """The current path waits at a barrier: if the path its lanes diverged from at the
    same branch still has to run (the top of the SIMT stack, with the same
    reconvergence point), swap the two and return that path's pc; else None."""
    if not w.simt:
        return None
    pc, mask, rpc = w.simt[-1]
    if rpc != w.rpc or pc == w.rpc:
        return None
    w.simt[-1] = (w.pc, w.mask, w.rpc)
    w.set_mask(mask)
    return pc


def _reached(w: PtxWarp, number: int) -> bool:
    """Whether the active lanes already reached barrier `number` (a path resuming)."""
    bar = w.cta.named.get(number)
    part = bar.partial.get(w.index) if bar is not None else None
    return part is not None and bool((part.lanes & w.mask).any())


@decodes(ptx.BarSyncOp, ptx.BarArriveOp, ptx.BarrierOp, ptx.BarRedOp)
def _bar(d: Decoder, op: Op, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    barrier_id = d.integer(op.id)
    count = d.integer(op.count) if op.count is not None else None
    arrive_only, aligned = _shape(op)
    red = op if isinstance(op, ptx.BarRedOp) else None
    vote = d.reader(red.pred, "pred") if red is not None else None
    negate = red is not None and red.negate_source is not None
    result = d.writer(red.res, "u32" if red.popc() else "pred") if red is not None else None
    guard = d.guard(op)
    nxt = index + 1

    def operands(w: PtxWarp, R: list[Lanes]) -> tuple[int, int | None]:
        number, threads = barrier_id(w, R), count(w, R) if count is not None else None
        if isinstance(number, np.ndarray) or isinstance(threads, np.ndarray):
            raise Hazard("non-uniform-operand", f"{op.mnemonic()}: the barrier number and count must be warp-uniform")
        return int(number), None if threads is None else int(threads)

    def votes(w: PtxWarp, R: list[Lanes], mask: Lanes) -> tuple[int, int]:
        if vote is None:
            return (0, 0)
        lanes = vote(R) != negate
        true = int((lanes & mask).sum())
        return true, int(mask.sum()) - true

    def write(w: PtxWarp, R: list[Lanes], mask: Lanes, reduced: tuple[int, int]) -> None:
        if red is None or result is None:
            return
        value = machine.reduce_votes(red.reduction.data, reduced)
        slot, convert = result
        lanes = np.full(WARP, value, np.uint32) if red.popc() else np.full(WARP, bool(value))
        _store_result(w, R, slot, convert(lanes), mask, False)

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if guard is not None and not mask.any():
            return nxt
        number, threads = operands(w, R)
        resuming = _reached(w, number)
        if aligned or (w.converged() and mask is w.mask and not resuming):
            cast_votes = votes(w, R, mask)
            reduced = with_mask(w, mask, lambda: machine.bar_sync(w, number, threads, arrive_only, cast_votes))
            write(w, R, mask, reduced)
            return nxt
        if not bool((mask == w.mask).all()):
            raise _refusal(w, op, f"guard false in lanes {format_lanes(w.mask & ~mask)} of the path: a non-.aligned "
                                  "barrier skipped by part of a path is not modelled")  # fmt: skip
        try:
            reduced = machine.barrier_partial(w, number, threads, arrive_only, votes(w, R, mask))
        except Blocked:
            if resuming:
                raise
            sibling = _yield_to_sibling(w)
            if sibling is None:
                raise
            return sibling
        write(w, R, mask, reduced)
        return nxt

    return run, _local

"""PTX-level decoders of `atom`, `red` and `st.async` (PTX ISA 9.0): the machine actions
they call are the model's (`interpreter/atomics.py`, `memory.store`,
`nvvm.mbarrier_add_tx`), so any level shares them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter import nvvm as machine
from xdsl_tmem.interpreter.atomics import atomic
from xdsl_tmem.interpreter.machine import Hazard
from xdsl_tmem.interpreter.memory import Access, store
from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE
from xdsl_tmem.interpreter.ptx.program import (
    Decoder,
    Decoding,
    Lanes,
    _store_result,  # pyright: ignore[reportPrivateUsage]
    decodes,
    exec_mask,
    with_mask,
)
from xdsl_tmem.interpreter.values import WARP, Value

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp


@decodes(ptx.AtomOp, ptx.AtomCasOp, ptx.RedOp)
def _atomic(
    d: Decoder, op: ptx.AtomOp | ptx.AtomCasOp | ptx.RedOp, index: int, labels: dict[str, int], rpc: int
) -> Decoding:
    """Every executing lane applies its operation to its address, atomically (a generic
    address is a shared or global one in the model's address map, as for `ld`/`st`)."""
    t = op.type.data.value
    dtype = LANE_DTYPE[t]
    operation = "cas" if isinstance(op, ptx.AtomCasOp) else op.operation.data.value
    address = d.address(op.addr, op.offset.data)
    b = d.reader(op.b, t)
    c = d.reader(op.c, t) if isinstance(op, ptx.AtomCasOp) else None
    result = None if isinstance(op, ptx.RedOp) else d.writer(op.res, t)
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        old = with_mask(
            w, mask, lambda: atomic(w, op, address(w, R), operation, dtype, b(R), None if c is None else c(R))
        )
        if result is not None:
            _store_result(w, R, result[0], result[1](old), mask, False)
        return nxt

    return run, None


@decodes(ptx.StAsyncOp)
def _st_async(d: Decoder, op: ptx.StAsyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """Each executing lane stores its value at its shared::cluster address, then completes
    the store's size in transaction bytes on the mbarrier at its `mbar` address (PTX ISA
    9.0, st.async: the mbarrier is in the same CTA as the destination). The store
    happens at once in the model; the destination learns of it only through that
    mbarrier's phase (the release the tx completion carries)."""
    t = op.type.data.value
    dtype = LANE_DTYPE[t]
    readers = [d.reader(v, t) for v in op.values]
    count = len(readers)
    access = Access(dtype.itemsize * count, dtype, count, count > 1)
    address = d.address(op.addr, 0)
    mbar = d.address(op.mbar, 0)
    guard = d.guard(op)
    nxt = index + 1

    def gather(R: list[Lanes]) -> Lanes:
        if count == 1:
            return readers[0](R)
        value = np.empty((WARP, count), dtype=dtype)
        for i, r in enumerate(readers):
            value[:, i] = r(R)
        return value

    def act(w: PtxWarp, R: list[Lanes]) -> None:
        _check_same_cta(address(w, R), mbar(w, R), w)
        store(w, op, address(w, R), gather(R), access)
        machine.mbarrier_add_tx(w, mbar(w, R), access.size, -1)

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not mask.any():
            return nxt
        with_mask(w, mask, lambda: act(w, R))
        return nxt

    return run, None


def _check_same_cta(address: Value, mbar: Value, w: PtxWarp) -> None:
    """PTX ISA 9.0, st.async: the destination and the mbarrier are in the same CTA."""
    for lane in w.active_lanes():
        a, m = machine.at(address, lane), machine.at(mbar, lane)
        if w.cluster.cta_of(a)[0] is not w.cluster.cta_of(m)[0]:
            raise Hazard(
                "out-of-bounds",
                f"st.async in lane {lane}: destination 0x{a:x} and mbarrier 0x{m:x} are in different CTAs (the "
                "PTX ISA requires the mbarrier in the destination's CTA)",
            )

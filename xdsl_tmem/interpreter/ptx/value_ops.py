"""The value instructions of `dialects/ptx/values.py` at the PTX level: each one's value
semantics (`decode(opcode, modifiers)`, the same callable the NVVM level and the silicon
test use), run over the warp's lanes.

The carry chain (`add.cc`, `addc`, `sub.cc`, `subc`, `mad.cc`, `madc`) also reads and/or
writes the condition-code carry flag CC.CF (PTX ISA 9.0, Extended-Precision Integer
Arithmetic Instructions: "the carry-in/out is held in the condition code register"):
one boolean per lane, a register slot of its own per function instance (an inlined
`.func` has its own registers, calls.py), zero before the first `.cc` instruction (the
ISA leaves it undefined; a chain always starts with a `.cc` form that writes it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter.ptx.program import (
    Decoder,
    Decoding,
    Lanes,
    _lanewise,  # pyright: ignore[reportPrivateUsage]
    decodes,
)
from xdsl_tmem.interpreter.ptx.semantics import decode
from xdsl_tmem.interpreter.values import WARP

if TYPE_CHECKING:
    pass


@decodes(*ptx.VALUE_OPS)
def _spelled(d: Decoder, op: ptx.SpelledOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """Registers in, registers out: sources and destinations in PTX order, as the
    semantics take them (`setp`'s `p|q` a pair)."""
    opcode, *modifiers = op.mnemonic().split(".")
    sem = decode(opcode, tuple(modifiers), pair=op.pair())
    readers = [d.reader(v, t) for v, t in zip(op.sources(), sem.operands, strict=True)]
    writers = [d.writer(v, t) for v, t in zip(op.results, sem.results, strict=True)]
    return _lanewise(d, op, index, sem.fn, readers, writers), None


def carry_slot(d: Decoder) -> int:
    """The register slot of CC.CF for the function instance being decoded."""
    key = f"carry flag {d.frame}"
    slot = d.extra.get(key)
    if slot is None:
        slot = d.extra[key] = len(d.initial)
        lanes = np.zeros(WARP, dtype=np.bool_)
        lanes.flags.writeable = False
        d.initial.append(lanes)
    return slot


@decodes(*ptx.CARRY_OPS)
def _carry(d: Decoder, op: ptx.CarryOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    opcode, *modifiers = op.mnemonic().split(".")
    sem = decode(opcode, tuple(modifiers))
    cc = carry_slot(d)
    sources = iter(op.sources())

    def read_carry(R: list[Lanes]) -> Lanes:
        return R[cc]

    readers = [read_carry if t == "cc" else d.reader(next(sources), t) for t in sem.operands]
    writers = [(cc, _bools) if t == "cc" else d.writer(op.results[0], t) for t in sem.results]
    return _lanewise(d, op, index, sem.fn, readers, writers), None


def _bools(lanes: Lanes) -> Lanes:
    return lanes.astype(np.bool_, copy=False)

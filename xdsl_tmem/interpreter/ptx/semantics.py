"""Decoding a PTX instruction's opcode and modifiers into vectorised value semantics.

`decode("add", ("sat", "s32"))` validates the spelling once and returns a `Semantics`
whose `fn` maps lane arrays to lane arrays with no further string handling; or it raises
`UnsupportedInstruction` naming the opcode, the modifiers and why. See
docs/ptx-semantics.md for the value model.
"""

from __future__ import annotations

from functools import cache

from .base import FLOAT, Semantics, Spelling, UnsupportedInstruction
from .compare import decode_selp, decode_set, decode_setp, decode_slct
from .convert import decode_cvt, decode_mov
from .floating import DECODERS as FLOAT_DECODERS
from .floating import decode_float
from .integer import DECODERS as INTEGER_DECODERS
from .integer import decode_integer

# each family's dispatch table is the one list of its opcodes
INTEGER_OPCODES = frozenset(INTEGER_DECODERS)
FLOAT_OPCODES = frozenset(FLOAT_DECODERS)
OPCODES = INTEGER_OPCODES | FLOAT_OPCODES | {"setp", "set", "selp", "slct", "cvt", "mov"}


@cache
def decode(opcode: str, modifiers: tuple[str, ...], *, pair: bool = False, pack: int = 0, unpack: int = 0) -> Semantics:
    """The semantics of `opcode.modifier...` as PTX spells it (modifiers without dots, in order).

    `pair`: `setp` writes `p|q` (the callable returns both predicates). `pack`/`unpack`:
    the number of elements of a vector `mov` (`mov.b64 d, {a, b}` is `pack=2`).
    """
    s = Spelling(opcode, tuple(modifiers))
    if opcode not in OPCODES:
        s.fail("opcode not modelled (value semantics cover integer, bit, logic, float, compare and cvt)")
    if opcode == "setp":
        return decode_setp(s, pair)
    if pair:
        s.fail("only setp writes a p|q pair")
    if (pack or unpack) and opcode != "mov":
        s.fail("only mov packs or unpacks vectors")
    if opcode == "set":
        return decode_set(s)
    if opcode == "selp":
        return decode_selp(s)
    if opcode == "slct":
        return decode_slct(s)
    if opcode == "cvt":
        return decode_cvt(s)
    if opcode == "mov":
        return decode_mov(s, pack, unpack)
    types = s.types
    if types and types[-1] in FLOAT and opcode in FLOAT_OPCODES:
        return decode_float(s, types[-1])
    if opcode in INTEGER_OPCODES:
        return decode_integer(s)
    s.fail(f"{opcode} needs a floating-point type (.f16 .f16x2 .bf16 .bf16x2 .f32 .f64)")


def semantics(opcode: str, modifiers: tuple[str, ...]) -> object:
    """`decode(opcode, modifiers).fn`: the callable alone."""
    return decode(opcode, modifiers).fn


__all__ = ["OPCODES", "Semantics", "UnsupportedInstruction", "decode", "semantics"]

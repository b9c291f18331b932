"""Comparison and selection: setp, selp, slct (PTX ISA, "Comparison and Selection Instructions"
and "Half Precision Comparison Instructions")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .base import (
    BITS,
    FLOAT,
    INTEGER,
    SIGNED,
    TYPES,
    UNSIGNED,
    Lanes,
    Semantics,
    Spelling,
    UnsupportedInstruction,
    fn2,
    fn3,
    fnv,
)
from .floating import ELEMENT, PACKED
from .rounding import flush

Fn = Callable[..., Any]

_ORDERED: dict[str, Callable[[Lanes, Lanes], Lanes]] = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}
_UNSIGNED_NAMES = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
_BOOL: dict[str, Callable[[Lanes, Lanes], Lanes]] = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
FLOAT_CMP = frozenset({*_ORDERED, *(f"{k}u" for k in _ORDERED), "num", "nan"})
INT_CMP = frozenset({*_ORDERED, *_UNSIGNED_NAMES})


def _float_cmp(cmp: str) -> Callable[[Lanes, Lanes], Lanes]:
    """Ordered comparisons are false when either operand is NaN (`ne` too); the unordered
    ones (`equ ... geu`) are true then; `num`: neither is NaN; `nan`: either is."""
    if cmp == "num":
        return fn2(lambda a, b: (a == a) & (b == b))
    if cmp == "nan":
        return fn2(lambda a, b: (a != a) | (b != b))
    if cmp.endswith("u"):
        base = _ORDERED[cmp[:-1]]
        return fn2(lambda a, b: base(a, b) | (a != a) | (b != b))
    if cmp == "ne":
        return fn2(lambda a, b: (a != b) & (a == a) & (b == b))
    return _ORDERED[cmp]


def decode_setp(s: Spelling, pair: bool) -> Semantics:
    """setp.CmpOp{.BoolOp}{.ftz}.type p[|q], a, b{, {!}c}: p = (a CmpOp b) BoolOp c and
    q = !(a CmpOp b) BoolOp c; for .f16x2/.bf16x2, p from the lower halves, q from the upper."""
    ty = s.one_type(INTEGER | FLOAT)
    is_float = ty in FLOAT
    cmp = s.at_most_one(FLOAT_CMP if is_float else INT_CMP, "comparison")
    bop = s.at_most_one(_BOOL, "boolean operator")
    s.only({*(FLOAT_CMP if is_float else INT_CMP), *_BOOL, *(("ftz",) if ty in ("f32", "f16", "f16x2") else ())})
    if cmp is None:
        s.fail(f"setp needs a comparison ({' '.join('.' + c for c in sorted(FLOAT_CMP if is_float else INT_CMP))})")
    if is_float:
        base = _float_cmp(cmp)
        if "ftz" in s.flags:
            inner = base
            base = fn2(lambda a, b: inner(flush(a), flush(b)))
    else:
        if ty in BITS and cmp not in ("eq", "ne"):
            s.fail(f"bit-size types compare with .eq or .ne only, not .{cmp}")
        if ty in SIGNED and cmp in _UNSIGNED_NAMES:
            s.fail(f".{cmp} is an unsigned comparison; .{ty} is signed")
        base = _ORDERED[_UNSIGNED_NAMES.get(cmp, cmp)]
        assert ty in SIGNED | UNSIGNED | BITS
    operands: tuple[str, ...] = (ty, ty) + (("pred",) if bop else ())
    if ty in PACKED:
        elem = ELEMENT[ty]

        def halves(a: Lanes, b: Lanes) -> tuple[Lanes, Lanes]:
            t = base(a.view(elem), b.view(elem)).reshape(-1, 2)
            return t[:, 0], t[:, 1]

        if bop:
            combine = _BOOL[bop]
            return Semantics(
                fn3(lambda a, b, c: tuple(combine(h, c) for h in halves(a, b))), operands, ("pred", "pred")
            )
        return Semantics(halves, operands, ("pred", "pred"))
    if bop:
        combine = _BOOL[bop]
        if pair:

            def both(a: Lanes, b: Lanes, c: Lanes) -> tuple[Lanes, Lanes]:
                t = base(a, b)
                return combine(t, c), combine(~t, c)

            return Semantics(both, operands, ("pred", "pred"))
        return Semantics(fn3(lambda a, b, c: combine(base(a, b), c)), operands, ("pred",))
    if pair:

        def pq(a: Lanes, b: Lanes) -> tuple[Lanes, Lanes]:
            t = base(a, b)
            return t, ~t

        return Semantics(pq, operands, ("pred", "pred"))
    return Semantics(base, operands, ("pred",))


def decode_set(s: Spelling) -> Semantics:
    """set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c}: like setp, but the result is a value:
    all ones (.u32 .s32) or 1.0 (.f32), per half for .f16x2/.bf16x2 sources (0xffff, or 1.0 of
    the half type when the destination is .f16x2/.bf16x2), 0 where false."""
    types = s.types
    if len(types) != 2:
        s.fail(f"set needs a destination and a source type, got {len(types)} types")
    dty, sty = types
    allowed_dst: set[str] = {"u32", "s32", "f32"} | ({"f16x2", "bf16x2"} if sty in PACKED else set[str]())
    if dty not in allowed_dst:
        s.fail(f"set.*.{dty}.{sty}: destination type must be one of {' '.join('.' + t for t in sorted(allowed_dst))}")
    first = next(i for i, m in enumerate(s.modifiers) if m in TYPES)  # the destination type
    try:
        inner = decode_setp(Spelling("setp", s.modifiers[:first] + s.modifiers[first + 1 :]), pair=False)
    except UnsupportedInstruction as e:
        s.fail(e.why)
    operands = inner.operands
    if sty in PACKED:
        one = {"f16x2": 0x3C00, "bf16x2": 0x3F80}.get(dty, 0xFFFF)
        lo_hi = inner.fn

        def halves(*xs: Lanes) -> Lanes:
            lo, hi = lo_hi(*xs)
            return (
                np.where(lo, np.uint32(one), np.uint32(0)) | np.where(hi, np.uint32(one << 16), np.uint32(0))
            ).astype(np.uint32)

        return Semantics(halves, operands, (dty,))
    cmp = inner.fn
    true = {"u32": np.uint32(0xFFFFFFFF), "s32": np.int32(-1), "f32": np.float32(1.0)}[dty]
    false = np.zeros((), true.dtype)
    return Semantics(fnv(lambda *xs: np.where(cmp(*xs), true, false)), operands, (dty,))


def decode_selp(s: Spelling) -> Semantics:
    """selp.type d, a, b, c: d = c ? a : b."""
    ty = s.one_type((INTEGER - {"b8", "u8", "s8"}) | {"f32", "f64"})
    s.only(set())
    return Semantics(fn3(lambda a, b, c: np.where(c, a, b)), (ty, ty, "pred"), (ty,))


def decode_slct(s: Spelling) -> Semantics:
    """slct{.ftz}.dtype.{s32,f32} d, a, b, c: d = (c >= 0) ? a : b (.ftz flushes a subnormal c)."""
    dty, cty = s.two_types((INTEGER - {"b8", "u8", "s8"}) | {"f32", "f64"}, {"s32", "f32"})
    s.only({"ftz"} if cty == "f32" else set())
    if "ftz" in s.flags:
        return Semantics(fn3(lambda a, b, c: np.where(flush(c) >= 0, a, b)), (dty, dty, cty), (dty,))
    return Semantics(fn3(lambda a, b, c: np.where(c >= 0, a, b)), (dty, dty, cty), (dty,))

"""Floating-point instructions: f16, f16x2, bf16, bf16x2, f32, f64 (PTX ISA, "Floating-Point
Instructions" and "Half Precision Floating-Point Instructions").

Exact operations (`add sub mul fma mad div.rnd div.full rcp.rnd sqrt.rnd`) are correctly
rounded in every rounding mode (see `rounding.py`). Approximate operations (`.approx`:
`div rcp sqrt rsqrt ex2 lg2 sin cos tanh`) return the float64 value of the function
rounded to nearest in the destination type; the PTX ISA only bounds their error (e.g.
2 ulp for `ex2.approx.f32`), so silicon may differ in the last bits. NaN results follow
the H100: the canonical NaN (sign clear, all-ones payload) for f32/f16/bf16, the first NaN
operand quieted for f64 (docs/silicon.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from xdsl_tmem.dialects.ptx.qualifiers import TestpKind

from .base import Lanes, Semantics, Spelling, fn1, fn2, fnv
from .rounding import (
    BF16,
    F16,
    F32,
    F64,
    MODES,
    canonical_nan,
    canonicalize_fresh,
    div64,
    finfo,
    flush,
    fma64,
    mul64,
    propagate_nan64,
    quiet64,
    relu,
    round_pair,
    saturate,
    sqrt64,
    two_sum,
)

ELEMENT: dict[str, np.dtype[Any]] = {"f16": F16, "bf16": BF16, "f32": F32, "f64": F64, "f16x2": F16, "bf16x2": BF16}
PACKED = frozenset({"f16x2", "bf16x2"})

Fn = Callable[..., Any]


def packed(fn: Fn, elem: np.dtype[Any], n: int) -> Fn:
    """Lift an element-wise function of `n` operands to `.f16x2`/`.bf16x2` registers (uint32 lanes)."""
    if n == 1:
        return fn1(lambda a: fn(a.view(elem)).view(np.uint32))
    if n == 2:
        return fn2(lambda a, b: fn(a.view(elem), b.view(elem)).view(np.uint32))
    return fnv(lambda *xs: fn(*(x.view(elem) for x in xs)).view(np.uint32))


_relu = relu


def _finish(
    fn: Fn,
    elem: np.dtype[Any],
    *,
    ftz: bool,
    sat: bool,
    relu: bool = False,
    canon: bool = True,
    nan_order: tuple[int, ...] = (0,),
) -> Fn:
    """Wrap `fn` with the input/output flushing, clamping and NaN rules of its modifiers.

    NaN results: f32/f16/bf16 give the canonical NaN; f64 gives the first NaN operand in
    `nan_order`, quieted (H100; docs/silicon.md)."""
    post: list[Callable[[Lanes], Lanes]] = []
    if ftz:
        post.append(flush)
    if relu:
        post.append(_relu)
    if sat:
        post.append(saturate)
    elif canon and elem != F64:
        post.append(canonicalize_fresh)  # every wrapped fn returns a new array
    if canon and elem == F64 and not sat:
        inner = fn

        def nan64(*xs: Lanes) -> Lanes:
            return propagate_nan64(inner(*xs), xs, nan_order)

        fn = nan64
    if not post:
        return fn
    if ftz:

        def flushed(*xs: Lanes) -> Lanes:
            out = fn(*(flush(x) for x in xs))
            for p in post:
                out = p(out)
            return out

        return flushed
    if len(post) == 1:
        (p,) = post

        def one(*xs: Lanes) -> Lanes:
            return p(fn(*xs))

        return one

    def many(*xs: Lanes) -> Lanes:
        out = fn(*xs)
        for p in post:
            out = p(out)
        return out

    return many


def _rm_zero(r: Lanes, e: Lanes, kind: str, xs: tuple[Lanes, ...]) -> Lanes:
    """IEEE 754 §6.3: an exact zero sum is +0 in every rounding direction but roundTowardNegative
    (.rm), where it is -0 — unless both addends are +0 (x + x keeps x's sign)."""
    exact0 = (r == 0) & (e == 0)
    if not exact0.any():
        return r
    if kind == "fma":
        a, b, c = xs
        p_pos0 = ((a == 0) | (b == 0)) & (np.signbit(a) == np.signbit(b))
        both_pos = p_pos0 & (c == 0) & ~np.signbit(c)
    else:
        a, b = xs
        b_pos0 = (b == 0) & (np.signbit(b) == (kind == "sub"))  # sub adds -b
        both_pos = (a == 0) & ~np.signbit(a) & b_pos0
    return np.where(exact0, np.where(both_pos, 0.0, -0.0), r)


def _exact(kind: str, elem: np.dtype[Any], mode: str) -> Fn:
    """The correctly rounded `kind` in `mode`, element-wise in `elem`."""
    if mode == "rn" and kind in ("add", "sub", "mul", "div", "sqrt", "rcp"):
        # One IEEE operation in elem (numpy computes f16/bf16 in float32, >= 2p+2 bits,
        # which rounds like the exact result: Figueroa, "When is double rounding innocuous?").
        return {
            "add": np.add,
            "sub": np.subtract,
            "mul": np.multiply,
            "div": np.divide,
            "sqrt": np.sqrt,
            "rcp": fn1(lambda a: np.divide(np.ones((), elem), a)),
        }[kind]
    if elem == F64:
        pair: dict[str, Callable[..., tuple[Lanes, Lanes]]] = {
            "add": two_sum,
            "sub": fn2(lambda a, b: two_sum(a, -b)),
            "mul": mul64,
            "fma": fma64,
            "div": div64,
            "sqrt": sqrt64,
            "rcp": fn1(lambda a: div64(np.ones_like(a), a)),
        }
        op = pair[kind]

        def f64(*xs: Lanes) -> Lanes:
            r, e = op(*xs)
            if mode == "rm" and kind in ("add", "sub", "fma"):
                r = _rm_zero(r, e, kind, xs)
            finite = np.logical_and.reduce([np.isfinite(x) for x in xs]) & (r == r)
            if kind in ("div", "rcp"):
                finite &= xs[-1] != 0
            return round_pair(r, e, F64, mode, finite)

        return f64

    if kind == "fma" and mode == "rn" and elem == F32:
        return _fma_rn_f32

    def wide(*xs: Lanes) -> Lanes:
        w = [x.astype(np.float64) for x in xs]
        zero = np.zeros((), np.float64)
        if kind == "add":
            r, e = two_sum(w[0], w[1])
        elif kind == "sub":
            r, e = two_sum(w[0], -w[1])
        elif kind == "mul":  # p <= 24 bits: exact in float64
            r, e = w[0] * w[1], zero
        elif kind == "fma":
            r, e = two_sum(w[0] * w[1], w[2])
        elif kind == "div":
            # a/b of p <= 24-bit operands is never within 2^-53 (relative) of a p+1-bit
            # number it is not equal to, so RN64(a/b) keeps every rounding decision.
            r, e = w[0] / w[1], zero
        elif kind == "rcp":
            r, e = 1.0 / w[0], zero
        else:
            assert kind == "sqrt", kind
            r, e = np.sqrt(w[0]), zero
        if mode == "rm" and kind in ("add", "sub", "fma"):
            r = _rm_zero(r, e, kind, tuple(w))
        return round_pair(r, e, elem, mode)

    return wide


# 0-d arrays, not numpy scalars: numpy's array-with-0-d-array path is the faster one
_MIDPOINT_LOW = np.array(0x1FFFFFFF, np.uint64)  # the 29 float64 significand bits below float32's
_MIDPOINT = np.array(0x10000000, np.uint64)
_F32_TINY = np.array(2.0**-126, np.float64)


def _fma_rn_f32(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
    """fma.rn.f32: the product is exact in float64, so RN64(a*b + c) rounds like the exact result
    unless it sits exactly on a float32 halfway point (or in float32's subnormal range, where the
    halfway points lie elsewhere): only then take the exact path (TwoSum, round to odd)."""
    p = a.astype(np.float64) * b.astype(np.float64)
    cw = c.astype(np.float64)
    r = p + cw
    suspect = ((r.view(np.uint64) & _MIDPOINT_LOW) == _MIDPOINT) | (np.abs(r) < _F32_TINY)
    if suspect.any():
        s, e = two_sum(p, cw)
        return round_pair(s, e, F32, "rn")
    return r.astype(np.float32)


_APPROX: dict[str, Callable[[Lanes], Lanes]] = {
    "rcp": fn1(lambda a: 1.0 / a),
    "sqrt": np.sqrt,
    "rsqrt": fn1(lambda a: 1.0 / np.sqrt(a)),
    "ex2": np.exp2,
    "lg2": np.log2,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
}


def _approx(kind: str, elem: np.dtype[Any]) -> Fn:
    fn = _APPROX[kind]
    return fn1(lambda a: fn(a.astype(np.float64)).astype(elem))


_HI_WORD = np.array(0xFFFFFFFF00000000, np.uint64)
_NAN_HI = np.array(0x7FFFFFFF00000000, np.uint64).view(np.float64)


def _rcp_approx_f64(a: Lanes) -> Lanes:
    """rcp.approx.ftz.f64, "a fast, gross approximation": like H100 (whose reciprocal unit reads
    and writes only the upper 32 bits of a double), 1/a of a's upper word, truncated to an upper
    word; subnormal inputs and results flushed, NaN -> 0x7fffffff00000000. This gives every
    H100 result of the silicon fixtures bit for bit (2,048 edge-value cases)."""
    x = (a.view(np.uint64) & _HI_WORD).view(np.float64)
    x = np.where(np.abs(x) < 2.0**-1022, x * 0, x)
    r = ((1.0 / x).view(np.uint64) & _HI_WORD).view(np.float64)
    r = np.where(np.abs(r) < 2.0**-1022, r * 0, r)
    return np.where(r != r, _NAN_HI, r)


_F32_SMALLEST = np.float32(2.0**-126)
_TWO_32 = np.float32(2.0**32)
_ONE_32 = np.float32(1.0)


def _div_approx(a: Lanes, b: Lanes) -> Lanes:
    """div.approx.f32: "computed as d = a * (1/b)" — here two float32 roundings, a times the
    correctly rounded reciprocal (rcp.approx.f32 agreed with that on every recorded H100 case);
    "for 2^126 < |b| < 2^128, if a is infinity, div.approx.f32 returns NaN, otherwise it
    returns 0" (PTX ISA, div). A subnormal b (without .ftz) is scaled up with a first, as the
    H100 does (its result for b = 2^-149 is a * 2^149, not a * inf)."""
    scale = np.where((np.abs(b) < _F32_SMALLEST) & (b != 0), _TWO_32, _ONE_32)
    q = (a * scale) * (_ONE_32 / (b * scale))
    huge = (np.abs(b) > np.float32(2.0**126)) & np.isfinite(b)
    return np.where(huge, np.where(np.isinf(a), np.float32(np.nan), a * np.float32(0) * np.sign(b)), q)


def _minmax(is_max: bool, elem: np.dtype[Any], nan: bool, xorsign: bool) -> Fn:
    """min/max: "-0.0 < +0.0"; a NaN operand yields the other (both NaN: NaN); with .NaN,
    any NaN operand yields the canonical NaN; .xorsign.abs: compare magnitudes, the sign
    of the result is the XOR of the operands' signs."""
    cnan = canonical_nan(elem)

    def two(a: Lanes, b: Lanes) -> Lanes:
        if xorsign:
            neg = np.signbit(a) ^ np.signbit(b)
            a, b = np.abs(a), np.abs(b)
        pick = (a > b) if is_max else (a < b)
        pick |= (a == b) & (np.signbit(a) != is_max)
        r = np.where(pick, a, b)
        an, bn = a != a, b != b
        both = quiet64(b) if elem == F64 else cnan  # H100: two f64 NaNs give b's, quieted
        r = np.where(an | bn, cnan, r) if nan else np.where(an, np.where(bn, both, b), np.where(bn, a, r))
        if xorsign:
            r = np.where(neg & (r == r), -r, r)  # pyright: ignore[reportPossiblyUnboundVariable]
        return r

    def reduce(*xs: Lanes) -> Lanes:
        r = two(xs[0], xs[1])
        for x in xs[2:]:
            r = two(r, x)
        return r

    return reduce


def _sign_ops(kind: str, elem: np.dtype[Any]) -> Fn:
    """abs/neg: the sign bit cleared/flipped, the rest of the bits (NaN payloads too) kept."""
    u = np.dtype(f"u{elem.itemsize}")
    top = np.array(1 << (8 * elem.itemsize - 1), dtype=u)
    if kind == "abs":
        return fn1(lambda a: (a.view(u) & ~top).view(elem))
    return fn1(lambda a: (a.view(u) ^ top).view(elem))


def _copysign(elem: np.dtype[Any]) -> Fn:
    """copysign d, a, b: "copy sign of a into value of b" — the magnitude of b, the sign of a."""
    u = np.dtype(f"u{elem.itemsize}")
    top = np.array(1 << (8 * elem.itemsize - 1), dtype=u)
    return fn2(lambda a, b: ((a.view(u) & top) | (b.view(u) & ~top)).view(elem))


_TESTP: dict[str, Callable[[Lanes, Any], Lanes]] = {
    "finite": fn2(lambda a, tiny: np.isfinite(a)),
    "infinite": fn2(lambda a, tiny: np.isinf(a)),
    "number": fn2(lambda a, tiny: a == a),
    "notanumber": fn2(lambda a, tiny: a != a),
    # H100: testp.normal is true for +-0 too (IEEE 754 would say false)
    "normal": fn2(lambda a, tiny: np.isfinite(a) & ((np.abs(a) >= tiny) | (a == 0))),
    "subnormal": fn2(lambda a, tiny: (np.abs(a) < tiny) & (a != 0)),
}


# One decoder per opcode (or group of opcodes spelled alike), called with the spelling and
# its float type: each validates its own modifiers and returns the finished callable.
Decoder = Callable[[Spelling, str], Semantics]

_HALF = frozenset({"f16", "f16x2"})
_BF = frozenset({"bf16", "bf16x2"})


def _done(fn: Fn, ty: str, n: int) -> Semantics:
    """`n` operands and one result of type `ty`; packed types get `fn` lifted to their halves."""
    return Semantics(packed(fn, ELEMENT[ty], n) if ty in PACKED else fn, (ty,) * n, (ty,))


def _arith_allowed(ty: str, fused: bool) -> set[str]:
    """The modifiers add/sub/mul (and fma/mad when `fused`) take on type `ty`."""
    if ty == "f32":
        return {*MODES, "ftz", "sat"}
    if ty == "f64":
        return set(MODES)
    if ty in _HALF:
        return {"rn", "ftz", "sat", *(("relu",) if fused else ())}
    return {"rn", *(("relu",) if fused else ())}


def _arith(s: Spelling, ty: str) -> Semantics:
    """add sub mul fma mad: correctly rounded in the given mode (.rn by default where optional)."""
    op, flags = s.opcode, s.flags
    fused = op in ("fma", "mad")
    if op == "mad" and ty not in ("f32", "f64"):
        s.fail("mad on floats takes .f32 or .f64 (use fma for half types)")
    s.only(_arith_allowed(ty, fused))
    mode = s.at_most_one(MODES, "rounding modifier")
    if mode is None and fused:
        s.fail("a fused multiply-add needs a rounding modifier (.rn .rz .rm .rp)")
    if "sat" in flags and "relu" in flags:
        s.fail(".sat and .relu exclude each other")
    elem = ELEMENT[ty]
    fn = _finish(
        _exact("fma" if fused else op, elem, mode or "rn"),
        elem,
        ftz="ftz" in flags,
        sat="sat" in flags,
        relu="relu" in flags,
        nan_order=(1, 2, 0) if fused else (1, 0),  # H100, f64: b's NaN first (fma: b, c, a)
    )
    return _done(fn, ty, 3 if fused else 2)


def _div_rcp_sqrt(s: Spelling, ty: str) -> Semantics:
    op = s.opcode
    if ty not in ("f32", "f64"):
        s.fail(f"{op} takes .f32 or .f64")
    return _div_rcp_sqrt_f64(s) if ty == "f64" else _div_rcp_sqrt_f32(s)


def _div_rcp_sqrt_f64(s: Spelling) -> Semantics:
    op, flags = s.opcode, s.flags
    n = 2 if op == "div" else 1
    s.only({*MODES, *(("approx", "ftz") if op == "rcp" else ())})
    if "approx" in flags:  # rcp.approx.ftz.f64
        if "ftz" not in flags:
            s.fail("rcp.approx.f64 needs .ftz")
        return _done(_rcp_approx_f64, "f64", 1)
    mode = s.at_most_one(MODES, "rounding modifier")
    if mode is None:
        s.fail(f"{op}.f64 needs a rounding modifier (.rn .rz .rm .rp)")
    # H100: div gives a's NaN first
    return _done(_finish(_exact(op, F64, mode), F64, ftz=False, sat=False, nan_order=(0, 1)[:n]), "f64", n)


def _div_rcp_sqrt_f32(s: Spelling) -> Semantics:
    op = s.opcode
    s.only({*MODES, "approx", "ftz", *(("full",) if op == "div" else ())})
    how = s.at_most_one({*MODES, "approx", "full"}, "rounding/approximation modifier")
    if how is None:
        s.fail(f"{op}.f32 needs one of .approx{' .full' if op == 'div' else ''} .rn .rz .rm .rp")
    if how == "approx":
        inner = _div_approx if op == "div" else _approx(op, F32)
    elif how == "full":
        inner = _exact("div", F32, "rn")  # full range, at most 2 ulp in PTX: we round correctly
    else:
        inner = _exact(op, F32, how)
    return _done(_finish(inner, F32, ftz="ftz" in s.flags, sat=False), "f32", 2 if op == "div" else 1)


def _approx_check(s: Spelling, ty: str) -> None:
    """The types and modifiers rsqrt ex2 lg2 sin cos tanh take, short of .approx itself."""
    op = s.opcode
    if op in ("tanh", "ex2"):
        if ty == "f64":
            s.fail(f"{op} takes .f32, .f16, .f16x2, .bf16, .bf16x2")
        # ptxas: tanh has no .ftz; ex2 has it optional on .f32, not on .f16/.f16x2, and
        # required on .bf16/.bf16x2
        s.only({"approx", "ftz"} if op == "ex2" and ty not in _HALF else {"approx"})
        if op == "ex2" and ty in _BF and "ftz" not in s.flags:
            s.fail(f"ex2.approx.{ty} needs .ftz")
    elif op == "rsqrt":
        if ty not in ("f32", "f64"):
            s.fail("rsqrt takes .f32 or .f64")
        s.only({"approx", "ftz"})
    else:
        if ty != "f32":
            s.fail(f"{op} takes .f32")
        s.only({"approx", "ftz"})


def _approx_unary(s: Spelling, ty: str) -> Semantics:
    """rsqrt ex2 lg2 sin cos tanh, which exist only as .approx."""
    op = s.opcode
    _approx_check(s, ty)
    if "approx" not in s.flags:
        s.fail(f"{op} exists only as {op}.approx")
    elem = ELEMENT[ty]
    return _done(_finish(_approx(op, elem), elem, ftz="ftz" in s.flags, sat=False), ty, 1)


def _min_max(s: Spelling, ty: str) -> Semantics:
    op, flags = s.opcode, s.flags
    s.only({"ftz", "NaN", "xorsign", "abs"} if ty in ("f32", "f16", "f16x2") else {"NaN", "xorsign", "abs"})
    if ty == "f64" and flags:
        s.fail(f"{op}.f64 takes no modifiers")
    if ("xorsign" in flags) != ("abs" in flags):
        s.fail(".xorsign goes with .abs")
    elem = ELEMENT[ty]
    inner = _minmax(op == "max", elem, "NaN" in flags, "xorsign" in flags)
    fn = _finish(inner, elem, ftz="ftz" in flags, sat=False, canon=False)
    # two operands, or three (sm_100's `max.f32 d, a, b, c`): the callable takes either
    return Semantics(packed(fn, elem, 3) if ty in PACKED else fn, (ty, ty), (ty,))


def _abs_neg(s: Spelling, ty: str) -> Semantics:
    s.only({"ftz"} if ty in ("f32", "f16", "f16x2") else set())
    elem = ELEMENT[ty]
    sign = _sign_ops(s.opcode, elem)
    if ty == "f64":  # H100: a NaN comes back quieted, its sign unchanged
        return _done(fn1(lambda a: np.where(a != a, quiet64(a), sign(a))), ty, 1)
    # H100: a NaN gives the canonical NaN (not a sign-bit operation on NaNs)
    return _done(_finish(sign, elem, ftz="ftz" in s.flags, sat=False), ty, 1)


def _copysign_decode(s: Spelling, ty: str) -> Semantics:
    if ty not in ("f32", "f64"):
        s.fail("copysign takes .f32 or .f64")
    s.only(set())
    return _done(_copysign(ELEMENT[ty]), ty, 2)


def _testp(s: Spelling, ty: str) -> Semantics:
    if ty not in ("f32", "f64"):
        s.fail("testp takes .f32 or .f64")
    tests = {k.value for k in TestpKind}  # the typed qualifier's values; _TESTP has one function per value
    test = s.at_most_one(tests, "test")
    s.only(tests)
    if test is None:
        s.fail(f"testp needs one of {' '.join('.' + t for t in _TESTP)}")
    tiny = finfo(ELEMENT[ty]).smallest_normal
    t = _TESTP[test]
    return Semantics(fn1(lambda a: t(a, tiny)), (ty,), ("pred",))


DECODERS: dict[str, Decoder] = {
    **dict.fromkeys(("add", "sub", "mul", "fma", "mad"), _arith),
    **dict.fromkeys(("div", "rcp", "sqrt"), _div_rcp_sqrt),
    **dict.fromkeys(("rsqrt", "ex2", "lg2", "sin", "cos", "tanh"), _approx_unary),
    "min": _min_max,
    "max": _min_max,
    "abs": _abs_neg,
    "neg": _abs_neg,
    "copysign": _copysign_decode,
    "testp": _testp,
}
"""The floating-point opcodes this model executes, each with its decoder."""


def decode_float(s: Spelling, ty: str) -> Semantics:
    """Decode a floating-point instruction whose (last) type modifier `ty` is a float type."""
    if ty not in ELEMENT:
        s.fail(f"type .{ty} is not a floating-point type")
    decoder = DECODERS.get(s.opcode)
    if decoder is None:
        s.fail(f"{s.opcode} is not a floating-point instruction this model executes")
    return decoder(s, ty)

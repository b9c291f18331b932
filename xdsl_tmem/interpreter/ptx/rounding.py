"""Exact IEEE-754 rounding on numpy lanes, for every PTX rounding modifier.

numpy rounds to nearest only. The directed modes (`.rz .rm .rp`) and fused operations
(`fma`) are therefore computed as an exact pair `(r, e)` in float64 — `r` the
round-to-nearest float64 of the exact result `x`, `e` a float64 whose sign is the sign of
`x - r` (zero when `r` is exact) — from error-free transformations (Knuth's TwoSum,
Dekker's TwoProduct), and then rounded once to the target format:

* to float64: `r`, stepped one ulp when the mode asks for the other neighbour of `x`;
* to a narrower format: `r` is first rounded *to odd* (its last bit made 1 when inexact),
  which keeps the information that `x` is not representable, so a single rounding of it
  to any format of at most 51 significand bits equals the rounding of `x` itself
  (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms
  using rounding to odd", IEEE Trans. Computers 57(4), 2008).

These transformations are exact as long as no intermediate over- or underflows in
float64; the narrow formats (f32 and below) never come near those limits, and f64
`mul`/`div`/`sqrt` take their error's sign on the operands' significands. The one corner
`fma.f64` works on the operands' significands (`fma64`) for the same reason.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

import ml_dtypes
import numpy as np

from .base import Lanes

F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
BF16 = np.dtype(ml_dtypes.bfloat16)

MODES = ("rn", "rz", "rm", "rp")

_SPLIT = np.float64(134217729.0)  # 2^27 + 1, Dekker's splitting constant for float64

SMALLEST_NORMAL: dict[np.dtype[Any], Any] = {
    F64: np.float64(2.0**-1022),
    F32: np.float32(2.0**-126),
    F16: np.float16(2.0**-14),
    BF16: ml_dtypes.bfloat16(2.0**-126),
}

CANONICAL_NAN_BITS: dict[np.dtype[Any], int] = {
    F64: 0x7FFFFFFFFFFFFFFF,
    F32: 0x7FFFFFFF,
    F16: 0x7FFF,
    BF16: 0x7FFF,
}
_UINT = {8: np.dtype(np.uint64), 4: np.dtype(np.uint32), 2: np.dtype(np.uint16), 1: np.dtype(np.uint8)}
_SINT = {8: np.dtype(np.int64), 4: np.dtype(np.int32), 2: np.dtype(np.int16), 1: np.dtype(np.int8)}


def finfo(dtype: np.dtype[Any]) -> Any:
    """ml_dtypes' finfo (numpy's for numpy types; it also knows bfloat16 and the narrow floats)."""
    return cast(Any, ml_dtypes.finfo(dtype))


def largest(dtype: np.dtype[Any]) -> Any:
    """The largest finite value of `dtype`, as a 0-d array of it."""
    return np.array(float(finfo(dtype).max), dtype)


@cache
def canonical_nan(dtype: np.dtype[Any]) -> Any:
    """The canonical NaN of `dtype` (all-ones payload, sign clear) as a 0-d array."""
    return np.array(CANONICAL_NAN_BITS[dtype], dtype=_UINT[dtype.itemsize]).view(dtype)


def canonicalize(x: Lanes) -> Lanes:
    """Every NaN lane replaced by the canonical NaN of its dtype (a new array)."""
    return np.where(x != x, canonical_nan(x.dtype), x)


def canonicalize_fresh(x: Lanes) -> Lanes:
    """`canonicalize` in place, for an array the caller has just created (cheaper)."""
    x[x != x] = canonical_nan(x.dtype)
    return x


def flush(x: Lanes) -> Lanes:
    """`.ftz`: subnormal lanes become zero of the same sign (x * 0 keeps the sign)."""
    return np.where(np.abs(x) < SMALLEST_NORMAL[x.dtype], x * 0, x)


def saturate(x: Lanes) -> Lanes:
    """`.sat`: clamp to [0.0, 1.0], NaN to +0.0 (PTX ISA, floating-point instructions); -0.0 gives
    +0.0 too (H100, docs/ptx-semantics.md)."""
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    return np.where(x > zero, np.where(x > one, one, x), zero)


def relu(x: Lanes) -> Lanes:
    """`.relu`: negative results and -0.0 become +0.0, a NaN the canonical NaN (H100: -0.0 -> +0.0)."""
    zero = np.zeros((), x.dtype)
    return np.where(x <= zero, zero, canonicalize(x))


def clamp_finite(x: Lanes) -> Lanes:
    """`.satfinite` for types with infinities: beyond ±max (infinity included) -> ±max; NaN kept.
    (np.where, not np.clip: ml_dtypes' bfloat16 clip mis-broadcasts 0-d bounds.)"""
    mx = largest(x.dtype)
    return np.where(x > mx, mx, np.where(x < -mx, -mx, x))


_QUIET64 = np.array(0x0008000000000000, np.uint64)
DEFAULT_NAN64 = np.array(0xFFF8000000000000, np.uint64).view(np.float64)
"""The NaN an invalid f64 operation (inf - inf, 0 * inf, 0 / 0, sqrt(-1)) gives on H100."""


def quiet64(x: Lanes) -> Lanes:
    """float64 lanes with the quiet bit set (sign and payload kept)."""
    return (x.view(np.uint64) | _QUIET64).view(np.float64)


def propagate_nan64(r: Lanes, xs: tuple[Lanes, ...], order: tuple[int, ...]) -> Lanes:
    """f64 NaN results as H100 gives them: the first NaN operand in `order`, quieted, sign kept;
    a NaN from operands that are not NaN (an invalid operation) is DEFAULT_NAN64."""
    nan = r != r
    if not nan.any():
        return r
    out = np.where(nan, DEFAULT_NAN64, r)
    for i in reversed(order):
        x = xs[i]
        out = np.where(x != x, quiet64(x), out)
    return out


def two_sum(a: Lanes, b: Lanes) -> tuple[Lanes, Lanes]:
    """Knuth's TwoSum: s = RN(a + b) and e = (a + b) - s exactly (e = 0 where s is not finite)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _split(a: Lanes) -> tuple[Lanes, Lanes]:
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a: Lanes, b: Lanes) -> tuple[Lanes, Lanes]:
    """Dekker's TwoProduct: p = RN(a * b) and e = a * b - p exactly (float64, no over/underflow)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = al * bl - (((p - ah * bh) - al * bh) - ah * bl)
    return p, np.where(np.isfinite(p) & np.isfinite(e), e, 0.0)


def to_odd(r: Lanes, e: Lanes) -> Lanes:
    """Round-to-odd float64 of x = r + e, given r = RN(x) and the sign of e."""
    bits = r.view(np.int64)
    step = np.where((e > 0) == (r > 0), 1, -1)
    return np.where((e != 0) & ((bits & 1) == 0), bits + step, bits).view(np.float64)


def _odd32(s: Lanes) -> Lanes:
    """Round-to-odd float32 of the float64 `s` (finite beyond 2^128 become ±max finite)."""
    t = s.astype(np.float32)
    tf = t.astype(np.float64)
    bits = t.view(np.int32)
    big = np.isinf(t) & np.isfinite(s)
    bits = np.where(big, np.where(s > 0, np.int32(0x7F7FFFFF), np.int32(-0x00800001)), bits)
    tf = np.where(big, bits.view(np.float32).astype(np.float64), tf)
    step = np.where(np.abs(s) > np.abs(tf), 1, -1)
    return np.where((tf != s) & ((bits & 1) == 0), bits + step, bits).astype(np.int32).view(np.float32)


def nearest(s: Lanes, dtype: np.dtype[Any]) -> Lanes:
    """Round the float64 `s` (exact or rounded to odd) to nearest-even in `dtype`.

    numpy's float64 -> float32/float16 casts round once, correctly; ml_dtypes' casts from
    float64 go through float32 (double rounding), so other formats take a round-to-odd
    float32 first, which is exact for any format of at most 22 significand bits.
    """
    if dtype == F32 or dtype == F16 or dtype == F64:
        return s.astype(dtype)
    return _odd32(s).astype(dtype)


def directed(s: Lanes, dtype: np.dtype[Any], mode: str) -> Lanes:
    """Round the float64 `s` (exact or rounded to odd) to `dtype` (f32, f16, bf16) in `mode`."""
    t = nearest(s, dtype)
    if mode == "rn":
        return t
    tf = t.astype(np.float64)
    if mode == "rz":
        return np.where(np.abs(tf) > np.abs(s), np.nextafter(t, np.zeros((), dtype)), t)
    if mode == "rm":
        return np.where(tf > s, np.nextafter(t, np.array(-np.inf, dtype)), t)
    assert mode == "rp", mode
    return np.where(tf < s, np.nextafter(t, np.array(np.inf, dtype)), t)


def round_pair(r: Lanes, e: Lanes, dtype: np.dtype[Any], mode: str, finite: Lanes | None = None) -> Lanes:
    """Round x = r + e (r = RN64(x), sign(e) = sign(x - r)) to `dtype` in `mode`.

    `finite`, for float64 results, marks lanes whose exact result is finite, so that an
    overflow to ±inf under `.rz .rm .rp` comes back as ±max where the mode asks for it.
    """
    if dtype != F64:
        return directed(to_odd(r, e), dtype, mode)
    if mode == "rn":
        return r
    if mode == "rz":
        step = ((e != 0) & ((e > 0) != (r > 0))) | (np.isinf(r) if finite is None else np.isinf(r) & finite)
        return np.where(step, np.nextafter(r, 0.0), r)
    over = np.isinf(r) & (False if finite is None else finite)
    if mode == "rm":
        return np.where((e < 0) | (over & (r > 0)), np.nextafter(r, -np.inf), r)
    assert mode == "rp", mode
    return np.where((e > 0) | (over & (r < 0)), np.nextafter(r, np.inf), r)


def _fma64_core(a: Lanes, b: Lanes, c: Lanes) -> tuple[Lanes, Lanes]:
    """Boldo & Melquiond's emulated FMA, for operands whose product neither over- nor underflows:
    uh + ul = a * b exactly; th + tl = c + uh exactly; v = RO(tl + ul); then th + v rounds like
    the exact a * b + c, and its TwoSum gives r and the sign of e."""
    uh, ul = two_prod(a, b)
    th, tl = two_sum(c, uh)
    v = to_odd(*two_sum(tl, ul))
    return two_sum(th, v)


_SUBNORMAL_STEPS = np.array(2.0**52)


def fma64(a: Lanes, b: Lanes, c: Lanes) -> tuple[Lanes, Lanes]:
    """(r, e) of a * b + c for float64 lanes, exact for every finite input.

    On the significands: a * b = ma * mb * 2^K (ma, mb in [0.5, 1)), so the sum is
    (ma * mb + c * 2^-K) * 2^K, and `_fma64_core` never over- or underflows. A c below
    2^-1000 of the product only contributes its sign (a sticky 2^-1000 in its place), a c
    beyond 2^1000 of it leaves the product only as the error's sign. A subnormal result is rounded to the
    2^-1074 grid from the scaled exact pair. Zeros, infinities and NaN (and an exact zero's
    sign) as a*b + c computed directly gives them."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    k = (ea + eb).astype(np.int64)
    cs = np.ldexp(c, -k)
    lost = (c != 0) & (np.abs(cs) < 2.0**-1000)
    big_c = (np.abs(cs) > 2.0**1000) & np.isfinite(c)
    # a lost c stands in as a sticky of its sign, far below the product's last bit
    cs = np.where(lost, np.sign(c) * 2.0**-1000, np.where(big_c, 0.0, cs))
    r1, e1 = _fma64_core(ma, mb, cs)
    t = np.ldexp(r1, 1074 + k)  # the result in units of the smallest subnormal (exact)
    n = np.rint(t)
    d = t - n
    # a tie of t broken by the sign of the scaled error: away from n if e1 points past the tie
    n = np.where((np.abs(d) == 0.5) & (e1 != 0) & ((e1 > 0) == (d > 0)), n + 2 * d, n)
    rest = t - n
    normal = np.abs(t) >= _SUBNORMAL_STEPS
    r = np.where(normal, np.ldexp(r1, k), np.ldexp(n, -1074))
    e = np.where(normal, e1, np.where(rest == 0, np.sign(e1), np.sign(rest)))
    r = np.where(big_c, c, r)
    e = np.where(big_c, np.sign(a) * np.sign(b), e)
    naive = a * b + c
    special = ~np.isfinite(a) | ~np.isfinite(b) | ~np.isfinite(c) | (a == 0) | (b == 0) | ((r == 0) & (e == 0))
    return np.where(special, naive, r), np.where(special, 0.0, e)


def _residual_sign(a: Lanes, q: Lanes, b: Lanes) -> Lanes:
    """sign(a - q * b) exactly, for q = RN(a / b) or RN(sqrt(a)) (b = q): on the operands'
    significands (frexp), so that Dekker's product neither over- nor underflows."""
    mq, eq = np.frexp(q)
    mb, eb = np.frexp(b)
    ma, ea = np.frexp(a)
    shift = np.clip(ea - eq - eb, -60, 60)  # a ~ q * b: the shift is within a few units
    ph, pl = two_prod(mq, mb)
    return np.sign((np.ldexp(ma, shift) - ph) - pl)


def div64(a: Lanes, b: Lanes) -> tuple[Lanes, Lanes]:
    """(q, e) of a / b for float64 lanes: e's sign from the residual a - q*b."""
    q = a / b
    e = np.where(np.isfinite(q) & (q != 0) & (b != 0), _residual_sign(a, q, b) * np.sign(b), 0.0)
    # q = 0 from an underflow: the exact quotient has a's sign times b's
    e = np.where((q == 0) & (a != 0) & np.isfinite(b), np.sign(a) * np.sign(b), e)
    return q, e


def sqrt64(a: Lanes) -> tuple[Lanes, Lanes]:
    """(q, e) of sqrt(a) for float64 lanes: e's sign from the residual a - q*q."""
    q = np.sqrt(a)
    e = np.where(np.isfinite(q) & (q > 0), _residual_sign(a, q, q), 0.0)
    return q, e


def mul64(a: Lanes, b: Lanes) -> tuple[Lanes, Lanes]:
    """(p, e) of a * b for float64 lanes, the error's sign taken on the significands (no
    over/underflow in Dekker's product): sign(ma * mb - p * 2^-(ea + eb))."""
    p = a * b
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    ph, pl = two_prod(ma, mb)
    e = np.sign((ph - np.ldexp(p, -(ea + eb))) + pl)
    e = np.where(np.isfinite(p), e, 0.0)
    # an underflow to zero: the exact product has the operands' signs
    return p, np.where((p == 0) & (a != 0) & (b != 0), np.sign(a) * np.sign(b), e)

"""Integer, bit-manipulation, logic/shift and extended-precision instructions (PTX ISA,
"Integer Arithmetic Instructions", "Extended-Precision Integer Arithmetic Instructions",
"Logic and Shift Instructions", and `prmt` of "Data Movement and Conversion Instructions").

Lanes are numpy integers of the instruction type's width; arithmetic wraps modulo 2^n as
in PTX (numpy does not warn on array overflow). Where the ISA calls a result
"unspecified" (integer division by zero) we return what the usual division sequence gives,
flagged as unverified until a silicon fixture decides.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, cast

import numpy as np

from xdsl_tmem.dialects.ptx.qualifiers import (
    BFE_TYPES,
    BFI_TYPES,
    BFIND_TYPES,
    BREV_TYPES,
    POPC_CLZ_TYPES,
    PrmtMode,
    ShfDirection,
    ShfMode,
)

from .base import BITS, LANE_DTYPE, SIGNED, UNSIGNED, WIDTH, Lanes, Semantics, Spelling, fn1, fn2, fn3, fn4, fnv

Fn = Callable[..., Any]

ARITH = frozenset({"u16", "u32", "u64", "s16", "s32", "s64"})
ARITH_X2 = frozenset({"u16x2", "s16x2"})
_M32 = np.uint64(0xFFFFFFFF)


def udt(ty: str) -> np.dtype[Any]:
    return np.dtype(f"u{WIDTH[ty] // 8}")


def sdt(ty: str) -> np.dtype[Any]:
    return np.dtype(f"i{WIDTH[ty] // 8}")


def _wider(ty: str) -> str:
    return {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}[ty]


def _mask(k: Lanes, dt: np.dtype[Any]) -> Lanes:
    """Lanes of k (0..width) low one-bits in the unsigned dtype `dt`."""
    width = dt.itemsize * 8
    k = k.astype(dt)
    return np.where(k >= width, np.array(-1).astype(dt), (np.ones((), dt) << k) - np.ones((), dt))


def mul_hi64(a: Lanes, b: Lanes, signed: bool) -> Lanes:
    """The high 64 bits of the 128-bit product of 64-bit lanes (32-bit limbs in uint64)."""
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    a0, a1, b0, b1 = ua & _M32, ua >> np.uint64(32), ub & _M32, ub >> np.uint64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> np.uint64(32)) + (p01 & _M32) + (p10 & _M32)
    hi = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (mid >> np.uint64(32))
    if signed:  # two's complement correction: hi -= (a < 0 ? b : 0) + (b < 0 ? a : 0)
        zero = np.zeros((), np.uint64)
        hi = hi - np.where(a < 0, ub, zero) - np.where(b < 0, ua, zero)
        return hi.view(np.int64)
    return hi


def _mul(mode: str, ty: str) -> Fn:
    dt = LANE_DTYPE[ty]
    if mode == "lo":
        return np.multiply
    if WIDTH[ty] == 64:
        if mode == "wide":
            raise AssertionError("no mul.wide on 64-bit types")
        signed = ty in SIGNED
        return fn2(lambda a, b: mul_hi64(a, b, signed))
    wide = LANE_DTYPE[_wider(ty)]
    if mode == "wide":
        return fn2(lambda a, b: a.astype(wide) * b.astype(wide))
    shift = np.array(WIDTH[ty], wide)
    return fn2(lambda a, b: ((a.astype(wide) * b.astype(wide)) >> shift).astype(dt))


def _carry_add(dt: np.dtype[Any]) -> Fn:
    """d, cf = a + b + cin (unsigned view: a carry out of either addition)."""
    u = np.dtype(f"u{dt.itemsize}")

    def add(a: Lanes, b: Lanes, cin: Lanes) -> tuple[Lanes, Lanes]:
        ua, ub = a.view(u), b.view(u)
        s = ua + ub
        s2 = s + cin.astype(u)
        return s2.view(dt), (s < ua) | (s2 < s)

    return add


def _carry_sub(dt: np.dtype[Any]) -> Fn:
    """d, cf = a - (b + cin): "subc: d = a - (b + CC.CF)"; the flag out is the borrow."""
    u = np.dtype(f"u{dt.itemsize}")

    def sub(a: Lanes, b: Lanes, cin: Lanes) -> tuple[Lanes, Lanes]:
        ua, ub = a.view(u), b.view(u)
        s = ua - ub
        c = cin.astype(u)
        return (s - c).view(dt), (ua < ub) | (s < c)

    return sub


def _bitlen(x: Lanes) -> Lanes:
    """Bit length of unsigned lanes (0 for 0), exact for up to 64 bits (two float64-exact halves)."""
    if x.dtype.itemsize <= 4:
        return np.frexp(x.astype(np.float64))[1].astype(np.uint32)
    hi, lo = x >> np.uint64(32), x & _M32
    bh = np.frexp(hi.astype(np.float64))[1]
    bl = np.frexp(lo.astype(np.float64))[1]
    return np.where(hi != 0, bh + 32, bl).astype(np.uint32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def _brev(a: Lanes) -> Lanes:
    return _REV8[a.view(np.uint8)].view(a.dtype).byteswap()


def _bfe(ty: str) -> Fn:
    """bfe: pos = b & 0xff, len = c & 0xff; bit i of d is a[pos+i] for i < len and pos+i < width,
    else the sign bit a[min(pos+len-1, width-1)] (.s types, len != 0) or 0."""
    dt, u, w = LANE_DTYPE[ty], udt(ty), WIDTH[ty]
    signed = ty in SIGNED
    # H100: the 64-bit forms take the whole 32-bit position and length, not their low 8 bits
    field = np.uint32(0xFF) if w == 32 else np.uint32(0xFFFFFFFF)
    if w == 32:  # in int64: a shift by up to 63 keeps the sign (arithmetic) or zeros

        def bfe32(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
            pos = np.minimum(b & np.uint32(0xFF), np.uint32(63)).astype(np.int64)
            ln = np.minimum(c & np.uint32(0xFF), np.uint32(32)).astype(np.int64)
            x = a.astype(np.int64) >> pos
            if signed:  # sign-extend the low ln bits: sbit = a[min(pos+len-1, 31)]
                k = 64 - ln
                return np.where(ln == 0, 0, (x << k) >> k).astype(dt)
            return (x & ((np.int64(1) << ln) - 1)).astype(dt)

        return bfe32

    def bfe(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
        pos = (b & field).astype(np.int64)
        ln = (c & field).astype(np.int64)
        ua = a.view(u)
        k = np.minimum(ln, np.maximum(w - pos, 0))
        bits = (ua >> np.minimum(pos, w - 1).astype(u)) & _mask(k, u)
        if signed:
            msb = np.minimum(pos + ln - 1, w - 1).astype(u)
            sbit = (ln != 0) & (((ua >> msb) & np.ones((), u)) != 0)
            bits = np.where(sbit, bits | ~_mask(k, u), bits)
        return bits.view(dt)

    return bfe


def _bfi(ty: str) -> Fn:
    """bfi f, a, b, c, d: pos = c & 0xff, len = d & 0xff; f is b with bits pos..pos+len-1
    (those below the width) replaced by the low bits of a."""
    u, w = udt(ty), WIDTH[ty]
    # H100: the 64-bit form takes the whole 32-bit position and length, not their low 8 bits
    field = np.uint32(0xFF) if w == 32 else np.uint32(0xFFFFFFFF)

    def bfi(a: Lanes, b: Lanes, c: Lanes, d: Lanes) -> Lanes:
        pos = (c & field).astype(np.int64)
        ln = (d & field).astype(np.int64)
        k = np.minimum(ln, np.maximum(w - pos, 0))
        sh = np.minimum(pos, w - 1).astype(u)
        m = _mask(k, u) << sh
        return (b.view(u) & ~m) | ((a.view(u) << sh) & m)

    return bfi


def _szext(mode: str, ty: str) -> Fn:
    """szext: extend the low N bits of a, N = min(b, 32) (.clamp) or b mod 32 (.wrap);
    N = 0 gives 0; .s32 sign-extends, .u32 zero-extends."""
    dt = LANE_DTYPE[ty]

    def szext(a: Lanes, b: Lanes) -> Lanes:
        n = np.minimum(b, np.uint32(32)) if mode == "clamp" else b & np.uint32(31)
        n = n.astype(np.int64)
        x = a.view(np.uint32).astype(np.int64) & ((np.int64(1) << n) - 1)
        if ty == "s32":
            x = np.where((n > 0) & (((x >> np.maximum(n - 1, 0)) & 1) != 0), x - (np.int64(1) << n), x)
        return x.astype(dt)

    return szext


def _bmsk(mode: str) -> Callable[[Lanes, Lanes], Lanes]:
    """bmsk.{clamp,wrap}.b32 d, a, b: a mask of b one-bits starting at bit a, in 32 bits; .clamp
    takes min(a, 32) and min(b, 32), .wrap a & 31 and b & 31 (so a >= 32 under .clamp, and a
    width of 0, give 0)."""

    def bmsk(a: Lanes, b: Lanes) -> Lanes:
        if mode == "clamp":
            pos, width = np.minimum(a, _U32_32), np.minimum(b, _U32_32)
        else:
            pos, width = a & _U32_31, b & _U32_31
        ones = (np.ones((), np.uint64) << width.astype(np.uint64)) - np.ones((), np.uint64)
        return (ones << pos.astype(np.uint64)).astype(np.uint32)

    return bmsk


def _fns(mask: Lanes, base: Lanes, offset: Lanes) -> Lanes:
    """fns.b32 d, mask, base, offset (PTX ISA pseudo-code): offset 0 -> base if mask[base] is set;
    else walk from base (up for offset > 0, down for < 0) and return the |offset|-th set bit;
    0xffffffff where none."""
    bits = ((mask.view(np.uint32)[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(np.int64)
    pos = np.arange(32)
    b = base.view(np.int32).astype(np.int64)[:, None]
    off = offset.view(np.int32).astype(np.int64)[:, None]
    want = np.abs(off)
    up: Lanes = np.where(pos >= b, bits, 0)
    down: Lanes = np.where(pos <= b, bits, 0)
    cum_up: Lanes = np.cumsum(up, axis=1)
    cum_down: Lanes = np.cumsum(down[:, ::-1], axis=1)[:, ::-1]
    walk = cast(Lanes, np.where(off > 0, (up == 1) & (cum_up == want), (down == 1) & (cum_down == want)))
    hit: Lanes = np.where(off == 0, (pos == b) & (bits == 1), walk)
    found = cast(Lanes, hit.any(axis=1))
    return np.where(found, np.argmax(hit, axis=1), 0xFFFFFFFF).astype(np.uint32)


# prmt modes: for c[1:0] = 0..3, the source byte of d.b3 d.b2 d.b1 d.b0 (PTX ISA, prmt table)
_PRMT_MODES: dict[str, list[tuple[int, int, int, int]]] = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}
# as gather indices over [b0..b7] (little-endian: index j is byte j of the result)
_PRMT_INDEX = {m: np.array([t[::-1] for t in rows], dtype=np.intp) for m, rows in _PRMT_MODES.items()}
_SHIFTS4 = np.array([0, 4, 8, 12], dtype=np.uint32)


_ROWS = np.arange(64)[:, None]


def _rows(n: int) -> Lanes:
    """Row indices for a gather over n lanes (a warp's 32 come from a table)."""
    return _ROWS[:n] if n <= 64 else np.arange(n)[:, None]


def _bytes8(a: Lanes, b: Lanes) -> Lanes:
    """The 8 bytes {b, a} of each lane (byte 0 = a's lowest)."""
    return np.concatenate([a.view(np.uint8).reshape(-1, 4), b.view(np.uint8).reshape(-1, 4)], axis=1)


_LOW16 = np.array(0xFFFF, np.uint32)
_SIXTEEN = np.array(16, np.uint32)


def _prmt_halves(lo: int, hi: int) -> Callable[[Lanes, Lanes], Lanes]:
    """prmt selecting halfword `lo` into bits 15:0 and `hi` into 31:16 (halfwords of {b, a})."""

    def half(k: int, a: Lanes, b: Lanes, up: bool) -> Lanes:
        src = a if k < 2 else b
        if k % 2 == 0:
            return (src << _SIXTEEN) if up else (src & _LOW16)
        return (src >> _SIXTEEN << _SIXTEEN) if up else (src >> _SIXTEEN)

    return fn2(lambda a, b: half(lo, a, b, False) | half(hi, a, b, True))


@cache
def _prmt_const(mode: str | None, c: int) -> Callable[[Lanes, Lanes], Lanes]:
    """prmt with an immediate selector: a fixed gather of bytes (and of sign fills)."""
    if mode is None:
        nibs = [(c >> (4 * j)) & 0xF for j in range(4)]
        index = np.array([n & 7 for n in nibs], np.intp)
        signs = np.array([n >= 8 for n in nibs])
    else:
        index = _PRMT_INDEX[mode][c & 3]
        signs = np.zeros(4, np.bool_)
    if not signs.any():
        pairs = [int(index[0]), int(index[1])], [int(index[2]), int(index[3])]
        if all(lo % 2 == 0 and hi == lo + 1 for lo, hi in pairs):
            # whole 16-bit halves (e.g. 0x5410, 0x7632, 0x3276): shifts and masks, no gather
            return _prmt_halves(pairs[0][0] // 2, pairs[1][0] // 2)
        return fn2(lambda a, b: np.ascontiguousarray(_bytes8(a, b)[:, index]).view(np.uint32).reshape(-1))

    def with_signs(a: Lanes, b: Lanes) -> Lanes:
        out = _bytes8(a, b)[:, index]
        fill = np.where(out >= 0x80, np.uint8(0xFF), np.uint8(0))
        return np.ascontiguousarray(np.where(signs, fill, out)).view(np.uint32).reshape(-1)

    return with_signs


def _prmt(mode: str | None) -> Callable[..., Lanes]:
    """prmt.b32: the 8 bytes {b, a} (a = bytes 0-3) permuted by the selector c. Default mode: result
    byte j is byte c[4j+2:4j] of {b, a}, replaced by its sign (bit 7) spread over 8 bits if c[4j+3].
    The selector is a lane array, or a Python int (the usual immediate: a cached fixed gather)."""

    if mode is None:

        def prmt(a: Lanes, b: Lanes, c: Lanes | int) -> Lanes:
            if isinstance(c, int):
                return _prmt_const(None, c)(a, b)
            nib = (c.view(np.uint32)[:, None] >> _SHIFTS4) & np.uint32(0xF)
            out = _bytes8(a, b)[_rows(a.shape[0]), nib & np.uint32(7)]
            sign = nib >= 8
            if sign.any():
                out = np.where(sign, np.where(out >= 0x80, np.uint8(0xFF), np.uint8(0)), out)
            return np.ascontiguousarray(out, np.uint8).view(np.uint32).reshape(-1)

        return prmt
    table = _PRMT_INDEX[mode]

    def prmt_mode(a: Lanes, b: Lanes, c: Lanes | int) -> Lanes:
        if isinstance(c, int):
            return _prmt_const(mode, c)(a, b)
        idx = table[(c.view(np.uint32) & np.uint32(3)).astype(np.intp)]
        return np.ascontiguousarray(_bytes8(a, b)[_rows(a.shape[0]), idx]).view(np.uint32).reshape(-1)

    return prmt_mode


# The 16 bitwise functions of two lanes, keyed by their truth table t: bit (2*x + y) of t
# is f(x, y) (so that lop3's nibbles index them); each in its shortest numpy form.
_TRUTH: list[Callable[[Lanes, Lanes], Lanes]] = [
    lambda b, c: b & ~b,
    lambda b, c: ~(b | c),
    lambda b, c: ~b & c,
    lambda b, c: ~b,
    lambda b, c: b & ~c,
    lambda b, c: ~c,
    lambda b, c: b ^ c,
    lambda b, c: ~(b & c),
    lambda b, c: b & c,
    lambda b, c: ~(b ^ c),
    lambda b, c: c,
    lambda b, c: ~b | c,
    lambda b, c: b,
    lambda b, c: b | ~c,
    lambda b, c: b | c,
    lambda b, c: b | ~b,
]


def _lop3_fn(lut: int) -> Callable[[Lanes, Lanes, Lanes], Lanes]:
    """f(a, b, c) = a ? F1(b, c) : F0(b, c), F1/F0 the upper/lower nibble of immLut."""
    f1, f0 = _TRUTH[(lut >> 4) & 0xF], _TRUTH[lut & 0xF]
    if lut == 0x96:
        return lambda a, b, c: a ^ b ^ c
    if lut >> 4 == lut & 0xF:
        return lambda a, b, c: f0(b, c) | (a & 0)
    if (lut >> 4) == 0xF:
        return lambda a, b, c: a | f0(b, c)
    if (lut & 0xF) == 0:
        return lambda a, b, c: a & f1(b, c)

    def mux(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
        g0 = f0(b, c)
        return g0 ^ (a & (g0 ^ f1(b, c)))

    return mux


_LOP3 = [_lop3_fn(lut) for lut in range(256)]


def lop3(a: Lanes, b: Lanes, c: Lanes, lut: int) -> Lanes:
    """lop3.b32 d, a, b, c, immLut: bit i of d is bit (4 a_i + 2 b_i + c_i) of immLut
    (the ISA's ta = 0xF0, tb = 0xCC, tc = 0xAA encoding); immLut is a Python int."""
    return _LOP3[lut](a, b, c)


_U32_32 = np.array(32, np.uint32)
_U32_31 = np.array(31, np.uint32)


def _shf(direction: str, mode: str) -> Callable[[Lanes, Lanes, Lanes], Lanes]:
    """shf.{l,r}.{clamp,wrap}.b32 d, a, b, c: the 64-bit {b, a} shifted by n = min(c, 32) or
    c & 31; .l keeps the upper 32 bits, .r the lower. (numpy defines a shift by >= the width
    as 0, which the n = 0 and n = 32 ends rely on.)"""
    clamp = mode == "clamp"
    if direction == "l":

        def left(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
            n = np.minimum(c, _U32_32) if clamp else c & _U32_31
            return (b << n) | (a >> (_U32_32 - n))

        return left

    def right(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
        n = np.minimum(c, _U32_32) if clamp else c & _U32_31
        return (a >> n) | (b << (_U32_32 - n))

    return right


def _shift(op: str, ty: str) -> Fn:
    """shl/shr: "shift amounts greater than the register width N are clamped to N"; shr on a
    signed type is arithmetic (sign fill), on .b/.u types logical."""
    dt, w = LANE_DTYPE[ty], WIDTH[ty]
    if op == "shl":
        return fn2(lambda a, b: np.where(b >= w, np.zeros((), dt), a << np.minimum(b, w - 1).astype(dt)))
    if ty in SIGNED:
        return fn2(lambda a, b: a >> np.minimum(b, w - 1).astype(dt))
    return fn2(lambda a, b: np.where(b >= w, np.zeros((), dt), a >> np.minimum(b, w - 1).astype(dt)))


def by_immediate(op: str, ty: str, amounts: list[int]) -> Callable[[Lanes], Lanes] | None:
    """`shl` / `shr` (`amounts`: the shift) or 32-bit `bfe` (the position and the length)
    whose amounts are immediates, each as its `.u32` operand reads it: the value as a
    function of the first operand alone, the clamping decided once. The same lanes as
    `_shift` / `_bfe` given the amounts' lanes; None for the forms not specialised."""
    dt, w = LANE_DTYPE[ty], WIDTH[ty]
    if op in ("shl", "shr"):
        (k,) = amounts
        if op == "shr" and ty in SIGNED:  # arithmetic: a shift by w - 1 or more is the sign fill
            by = dt.type(min(k, w - 1))
            return lambda a: a >> by
        if k >= w:
            return np.zeros_like
        by = dt.type(k)
        return (lambda a: a << by) if op == "shl" else (lambda a: a >> by)
    if op != "bfe" or w != 32:
        return None
    pos, ln = min(amounts[0] & 0xFF, 63), min(amounts[1] & 0xFF, 32)
    if ty not in SIGNED:  # (in int64, as bfe32: the field's low `ln` bits, zeros past bit 31)
        if pos >= 32:
            return np.zeros_like
        by, field = np.uint32(pos), np.uint32((1 << ln) - 1)
        return lambda a: (a >> by) & field
    if not ln:
        return np.zeros_like
    k = 64 - ln
    return lambda a: ((a.astype(np.int64) >> pos) << k >> k).astype(dt)


def _divrem(op: str, ty: str) -> Fn:
    """div/rem: quotient truncated toward zero, remainder with the dividend's sign. By zero the ISA
    leaves the result unspecified; H100 gives all ones for div and rem, every width and
    signedness (docs/silicon.md)."""
    dt, u = LANE_DTYPE[ty], udt(ty)
    ones = np.array(-1).astype(u).view(dt)
    one = np.ones((), dt)
    if ty in UNSIGNED:
        if op == "div":
            return fn2(lambda a, b: np.where(b == 0, ones, a // np.where(b == 0, one, b)))
        return fn2(lambda a, b: np.where(b == 0, ones, a % np.where(b == 0, one, b)))

    def signed(a: Lanes, b: Lanes) -> Lanes:
        ua, ub = a.view(u), b.view(u)
        ma, mb = np.where(a < 0, -ua, ua), np.where(b < 0, -ub, ub)
        safe = np.where(mb == 0, np.ones((), u), mb)
        if op == "div":
            q = ma // safe
            r = np.where((a < 0) ^ (b < 0), -q, q).view(dt)
        else:
            m = ma % safe
            r = np.where(a < 0, -m, m).view(dt)
        return np.where(b == 0, ones, r)

    return signed


def _dp4a(at: str, bt: str) -> Fn:
    """dp4a: d = c + sum of the four products of a's and b's bytes (signed per .s32)."""
    a8 = np.int8 if at == "s32" else np.uint8
    b8 = np.int8 if bt == "s32" else np.uint8
    out = np.int32 if "s32" in (at, bt) else np.uint32

    def dp4a(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
        pa = a.view(a8).reshape(-1, 4).astype(np.int64)
        pb = b.view(b8).reshape(-1, 4).astype(np.int64)
        return ((pa * pb).sum(axis=1) + c.astype(np.int64)).astype(out)

    return dp4a


def _dp2a(mode: str, at: str, bt: str) -> Fn:
    """dp2a.{lo,hi}: d = c + a.h0 * b.b(k) + a.h1 * b.b(k+1), k = 0 (.lo) or 2 (.hi)."""
    a16 = np.int16 if at == "s32" else np.uint16
    b8 = np.int8 if bt == "s32" else np.uint8
    out = np.int32 if "s32" in (at, bt) else np.uint32
    k = 0 if mode == "lo" else 2

    def dp2a(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
        pa = a.view(a16).reshape(-1, 2).astype(np.int64)
        pb = b.view(b8).reshape(-1, 4)[:, k : k + 2].astype(np.int64)
        return ((pa * pb).sum(axis=1) + c.astype(np.int64)).astype(out)

    return dp2a


def _sat32(x: Lanes) -> Lanes:
    return np.clip(x, -(2**31), 2**31 - 1).astype(np.int32)


def _x2(fn: Fn, ty: str) -> Fn:
    """Lift a 16-bit lane function to u16x2/s16x2 registers (uint32 lanes)."""
    e = np.int16 if ty == "s16x2" else np.uint16
    return fnv(lambda *xs: fn(*(x.view(e) for x in xs)).view(np.uint32))


# One decoder per opcode (or per pair of opcodes spelled alike): each validates its own
# modifiers and returns the callable, so no string handling is left for run time.
Decoder = Callable[[Spelling], Semantics]


def _add_sub(s: Spelling) -> Semantics:
    op, flags = s.opcode, s.flags
    ty = s.one_type(ARITH | ARITH_X2 if op == "add" else ARITH)  # ptxas: no sub.u16x2
    s.only({"sat", "cc"})
    if "cc" in flags:
        if ty not in ("u32", "s32", "u64", "s64") or "sat" in flags:
            s.fail(f"{op}.cc takes .u32 .s32 .u64 .s64 and no .sat")
        f = (_carry_add if op == "add" else _carry_sub)(LANE_DTYPE[ty])
        false = np.zeros(1, np.bool_)
        return Semantics(fn2(lambda a, b: f(a, b, false)), (ty, ty), (ty, "cc"))
    base = np.add if op == "add" else np.subtract
    if "sat" in flags:
        if ty != "s32":
            s.fail(f"{op}.sat takes .s32 only")
        return Semantics(fn2(lambda a, b: _sat32(base(a.astype(np.int64), b.astype(np.int64)))), (ty, ty), (ty,))
    return Semantics(_x2(base, ty) if ty in ARITH_X2 else base, (ty, ty), (ty,))


def _addc_subc(s: Spelling) -> Semantics:
    ty = s.one_type({"u32", "s32", "u64", "s64"})
    s.only({"cc"})
    f = (_carry_add if s.opcode == "addc" else _carry_sub)(LANE_DTYPE[ty])
    if "cc" in s.flags:
        return Semantics(f, (ty, ty, "cc"), (ty, "cc"))
    return Semantics(fn3(lambda a, b, cin: f(a, b, cin)[0]), (ty, ty, "cc"), (ty,))


def _mul_mad_mode(s: Spelling, ty: str) -> str:
    """The .lo/.hi/.wide of integer mul/mad/madc, after checking its combinations with .sat/.cc."""
    op, flags = s.opcode, s.flags
    mode = s.at_most_one({"lo", "hi", "wide"}, "mode")
    s.only({"lo", "hi", "wide", "sat", "cc"})
    if mode is None:
        if op == "mul":
            s.fail("integer mul needs .lo, .hi or .wide")
        mode = "lo"
    if mode == "wide" and WIDTH[ty] == 64:
        s.fail(".wide takes 16- or 32-bit types")
    if "sat" in flags and not (op == "mad" and mode == "hi" and ty == "s32"):
        s.fail(".sat is only allowed as mad.hi.sat.s32")
    if ("cc" in flags or op == "madc") and (mode == "wide" or WIDTH[ty] < 32 or op == "mul"):
        s.fail("carry forms are mad{c}.{lo,hi}{.cc} on 32- and 64-bit types")
    return mode


def _mul_mad(s: Spelling) -> Semantics:
    op, flags = s.opcode, s.flags
    ty = s.one_type(ARITH)
    mode = _mul_mad_mode(s, ty)
    prod = _mul(mode, ty)
    dty = _wider(ty) if mode == "wide" else ty
    if op == "mul":
        return Semantics(prod, (ty, ty), (dty,))
    if "sat" in flags:
        return Semantics(
            fn3(lambda a, b, c: _sat32(prod(a, b).astype(np.int64) + c.astype(np.int64))), (ty, ty, ty), (ty,)
        )
    if op == "madc" or "cc" in flags:
        add = _carry_add(LANE_DTYPE[ty])
        if op == "madc":
            if "cc" in flags:
                return Semantics(fn4(lambda a, b, c, cin: add(prod(a, b), c, cin)), (ty, ty, ty, "cc"), (ty, "cc"))
            return Semantics(fn4(lambda a, b, c, cin: add(prod(a, b), c, cin)[0]), (ty, ty, ty, "cc"), (ty,))
        false = np.zeros(1, np.bool_)
        return Semantics(fn3(lambda a, b, c: add(prod(a, b), c, false)), (ty, ty, ty), (ty, "cc"))
    return Semantics(fn3(lambda a, b, c: prod(a, b) + c), (ty, ty, dty), (dty,))


def _mul24_mad24(s: Spelling) -> Semantics:
    op, flags = s.opcode, s.flags
    ty = s.one_type({"u32", "s32"})
    mode = s.at_most_one({"lo", "hi"}, "mode")
    s.only({"lo", "hi", "sat"})
    if mode is None:
        s.fail(f"{op} needs .lo or .hi")
    if "sat" in flags and not (op == "mad24" and mode == "hi" and ty == "s32"):
        s.fail(".sat is only allowed as mad24.hi.sat.s32")
    dt = LANE_DTYPE[ty]

    def p48(a: Lanes, b: Lanes) -> Lanes:
        """The 48-bit product of the low 24 bits (sign-extended for .s32) of a and b."""
        if ty == "s32":
            x = (a.astype(np.int64) << 40) >> 40
            y = (b.astype(np.int64) << 40) >> 40
        else:
            x = a.astype(np.int64) & 0xFFFFFF
            y = b.astype(np.int64) & 0xFFFFFF
        p = x * y
        return (p >> 16) if mode == "hi" else p

    if op == "mul24":
        return Semantics(fn2(lambda a, b: p48(a, b).astype(dt)), (ty, ty), (ty,))
    if "sat" in flags:
        return Semantics(
            fn3(lambda a, b, c: _sat32(((p48(a, b) << 32) >> 32) + c.astype(np.int64))), (ty, ty, ty), (ty,)
        )
    return Semantics(fn3(lambda a, b, c: (p48(a, b) + c.astype(np.int64)).astype(dt)), (ty, ty, ty), (ty,))


def _sad(s: Spelling) -> Semantics:
    ty = s.one_type(ARITH)
    s.only(set())
    u = udt(ty)
    return Semantics(
        fn3(lambda a, b, c: c + np.where(a > b, a.view(u) - b.view(u), b.view(u) - a.view(u)).view(c.dtype)),
        (ty, ty, ty),
        (ty,),
    )


def _div_rem(s: Spelling) -> Semantics:
    ty = s.one_type(ARITH)
    s.only(set())
    return Semantics(_divrem(s.opcode, ty), (ty, ty), (ty,))


def _abs_neg(s: Spelling) -> Semantics:
    ty = s.one_type(SIGNED - {"s8"})
    s.only(set())
    return Semantics(np.abs if s.opcode == "abs" else np.negative, (ty,), (ty,))


def _min_max(s: Spelling) -> Semantics:
    ty = s.one_type(ARITH | ARITH_X2)
    s.only({"relu"})
    base = np.minimum if s.opcode == "min" else np.maximum
    if "relu" in s.flags:
        if ty not in ("s32", "s16x2"):
            s.fail(".relu takes .s32 or .s16x2")
        zero = np.zeros((), np.int16 if ty == "s16x2" else np.int32)
        inner: Fn = fn2(lambda a, b: np.maximum(base(a, b), zero))
    else:
        inner = base
    return Semantics(_x2(inner, ty) if ty in ARITH_X2 else inner, (ty, ty), (ty,))


def _popc_clz(s: Spelling) -> Semantics:
    ty = s.one_type({t.value for t in POPC_CLZ_TYPES})
    s.only(set())
    if s.opcode == "popc":
        return Semantics(fn1(lambda a: np.bitwise_count(a).astype(np.uint32)), (ty,), ("u32",))
    w = np.uint32(WIDTH[ty])
    return Semantics(fn1(lambda a: w - _bitlen(a)), (ty,), ("u32",))


def _bfind(s: Spelling) -> Semantics:
    ty = s.one_type({t.value for t in BFIND_TYPES})
    s.only({"shiftamt"})
    u, w1 = udt(ty), np.uint32(WIDTH[ty] - 1)
    shiftamt = "shiftamt" in s.flags
    signed = ty in SIGNED
    none = np.uint32(0xFFFFFFFF)

    def bfind(a: Lanes) -> Lanes:
        """The position of the most significant non-sign bit; 0xffffffff if there is none."""
        x = a.view(u)
        if signed:
            x = np.where(a < 0, ~x, x)
        n = _bitlen(x)
        pos = (w1 - (n - 1)) if shiftamt else n - np.uint32(1)
        return np.where(n == 0, none, pos)

    return Semantics(bfind, (ty,), ("u32",))


def _clamp_or_wrap(s: Spelling) -> str:
    """The required .clamp/.wrap of bmsk and szext."""
    mode = s.at_most_one({"clamp", "wrap"}, "mode")
    s.only({"clamp", "wrap"})
    if mode is None:
        s.fail(f"{s.opcode} needs .clamp or .wrap")
    return mode


def _bmsk_decode(s: Spelling) -> Semantics:
    s.one_type({"b32"})
    return Semantics(_bmsk(_clamp_or_wrap(s)), ("b32", "b32"), ("b32",))


def _szext_decode(s: Spelling) -> Semantics:
    ty = s.one_type({"u32", "s32"})
    return Semantics(_szext(_clamp_or_wrap(s), ty), (ty, "u32"), (ty,))


def _fns_decode(s: Spelling) -> Semantics:
    s.one_type({"b32"})
    s.only(set())
    return Semantics(_fns, ("b32", "u32", "s32"), ("b32",))


def _brev_decode(s: Spelling) -> Semantics:
    ty = s.one_type({t.value for t in BREV_TYPES})
    s.only(set())
    return Semantics(_brev, (ty,), (ty,))


def _bfe_decode(s: Spelling) -> Semantics:
    ty = s.one_type({t.value for t in BFE_TYPES})
    s.only(set())
    return Semantics(_bfe(ty), (ty, "u32", "u32"), (ty,))


def _bfi_decode(s: Spelling) -> Semantics:
    ty = s.one_type({t.value for t in BFI_TYPES})
    s.only(set())
    return Semantics(_bfi(ty), (ty, ty, "u32", "u32"), (ty,))


def _dp4a_decode(s: Spelling) -> Semantics:
    at, bt = s.two_types({"u32", "s32"}, {"u32", "s32"})
    s.only(set())
    out = "s32" if "s32" in (at, bt) else "u32"
    return Semantics(_dp4a(at, bt), (at, bt, out), (out,))


def _dp2a_decode(s: Spelling) -> Semantics:
    at, bt = s.two_types({"u32", "s32"}, {"u32", "s32"})
    mode = s.at_most_one({"lo", "hi"}, "mode")
    s.only({"lo", "hi"})
    if mode is None:
        s.fail("dp2a needs .lo or .hi")
    out = "s32" if "s32" in (at, bt) else "u32"
    return Semantics(_dp2a(mode, at, bt), (at, bt, out), (out,))


def _prmt_decode(s: Spelling) -> Semantics:
    s.one_type({"b32"})
    modes = {m.value for m in PrmtMode}
    mode = s.at_most_one(modes, "mode")
    s.only(modes)
    return Semantics(_prmt(mode), ("b32", "b32", "b32"), ("b32",))


def _lop3_decode(s: Spelling) -> Semantics:
    s.one_type({"b32"})
    s.only(set())
    return Semantics(lop3, ("b32", "b32", "b32", "b32"), ("b32",))


def _shf_decode(s: Spelling) -> Semantics:
    s.one_type({"b32"})
    directions, modes = {d.value for d in ShfDirection}, {m.value for m in ShfMode}
    d = s.at_most_one(directions, "direction")
    m = s.at_most_one(modes, "mode")
    s.only(directions | modes)
    if d is None or m is None:
        s.fail("shf needs .l or .r and .clamp or .wrap")
    return Semantics(_shf(d, m), ("b32", "b32", "u32"), ("b32",))


def _shl_shr(s: Spelling) -> Semantics:
    op = s.opcode
    ty = s.one_type(BITS - {"b8"} if op == "shl" else (BITS | SIGNED | UNSIGNED) - {"b8", "u8", "s8"})
    s.only(set())
    return Semantics(_shift(op, ty), (ty, "u32"), (ty,))


_LOGIC = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


def _logic(s: Spelling) -> Semantics:
    ty = s.one_type({"pred", "b16", "b32", "b64"})
    s.only(set())
    return Semantics(_LOGIC[s.opcode], (ty, ty), (ty,))


def _not(s: Spelling) -> Semantics:
    ty = s.one_type({"pred", "b16", "b32", "b64"})
    s.only(set())
    return Semantics(np.invert, (ty,), (ty,))


def _cnot(s: Spelling) -> Semantics:
    ty = s.one_type({"b16", "b32", "b64"})
    s.only(set())
    dt = LANE_DTYPE[ty]
    return Semantics(fn1(lambda a: (a == 0).astype(dt)), (ty,), (ty,))


DECODERS: dict[str, Decoder] = {
    "add": _add_sub,
    "sub": _add_sub,
    "addc": _addc_subc,
    "subc": _addc_subc,
    "mul": _mul_mad,
    "mad": _mul_mad,
    "madc": _mul_mad,
    "mul24": _mul24_mad24,
    "mad24": _mul24_mad24,
    "sad": _sad,
    "div": _div_rem,
    "rem": _div_rem,
    "abs": _abs_neg,
    "neg": _abs_neg,
    "min": _min_max,
    "max": _min_max,
    "popc": _popc_clz,
    "clz": _popc_clz,
    "bfind": _bfind,
    "bmsk": _bmsk_decode,
    "fns": _fns_decode,
    "brev": _brev_decode,
    "bfe": _bfe_decode,
    "bfi": _bfi_decode,
    "szext": _szext_decode,
    "dp4a": _dp4a_decode,
    "dp2a": _dp2a_decode,
    "prmt": _prmt_decode,
    "lop3": _lop3_decode,
    "shf": _shf_decode,
    "shl": _shl_shr,
    "shr": _shl_shr,
    "and": _logic,
    "or": _logic,
    "xor": _logic,
    "not": _not,
    "cnot": _cnot,
}
"""The integer, bit and logic opcodes this model executes, each with its decoder."""


def decode_integer(s: Spelling) -> Semantics:
    decoder = DECODERS.get(s.opcode)
    if decoder is None:
        s.fail("not an integer instruction this model executes")
    return decoder(s)

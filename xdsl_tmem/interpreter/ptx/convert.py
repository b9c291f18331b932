"""Conversions: cvt in every direction and mov pack/unpack (PTX ISA, "Data Movement and
Conversion Instructions": cvt, cvt.pack, mov).

Every conversion rounds once, exactly (`rounding.py`). The narrow float formats are
ml_dtypes' `float8_e4m3fn`, `float8_e5m2`, `float6_e2m3fn`, `float6_e3m2fn`,
`float4_e2m1fn`, reached from float32 (ml_dtypes rounds float32 to them correctly; the
tests check it against exact rational rounding). Packed destinations put the value
converted from `a` in the upper half/byte and `b` in the lower, as the ISA states for
`cvt.*x2.f32 d, a, b`; a packed source is unpacked lower element first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .base import LANE_DTYPE, UNSIGNED, WIDTH, Lanes, Semantics, Spelling, fn1, fn2
from .floating import ELEMENT
from .rounding import (
    BF16,
    F16,
    F32,
    F64,
    MODES,
    canonical_nan,
    canonicalize,
    canonicalize_fresh,
    clamp_finite,
    directed,
    finfo,
    flush,
    nearest,
    relu,
    round_pair,
    saturate,
    to_odd,
    two_sum,
)

Fn = Callable[..., Any]

CVT_INT = frozenset({"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"})
CVT_FLOAT = frozenset({"f16", "bf16", "f32", "f64"})
INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}

EIGHT_BIT: dict[str, np.dtype[Any]] = {
    "e4m3x2": np.dtype(ml_dtypes.float8_e4m3fn),
    "e5m2x2": np.dtype(ml_dtypes.float8_e5m2),
    "e2m3x2": np.dtype(ml_dtypes.float6_e2m3fn),
    "e3m2x2": np.dtype(ml_dtypes.float6_e3m2fn),
    "e2m1x2": np.dtype(ml_dtypes.float4_e2m1fn),
}
_HAS_NAN = frozenset({"e4m3x2", "e5m2x2"})
_NAN8 = np.uint8(0x7F)  # sign clear, all-ones payload: H100, from f32 and from f16x2


def _int_to_pair(a: Lanes) -> tuple[Lanes, Lanes]:
    """(r, e) of an integer lane array: exact in float64 up to 32 bits; 64-bit values as the
    TwoSum of their upper and lower 32 bits (each exact in float64)."""
    if a.dtype.itemsize <= 4:
        return a.astype(np.float64), np.zeros((), np.float64)
    hi = (a >> 32).astype(np.float64) * 4294967296.0  # arithmetic shift for s64
    lo = (a & 0xFFFFFFFF).astype(np.float64)
    return two_sum(hi, lo)


def _float_to_int(ty: str, src: str, rnd: str) -> Fn:
    """float -> integer: round by .rni/.rzi/.rmi/.rpi and saturate to the type's range (the ISA:
    float-to-integer conversions saturate whether or not .sat is given). NaN: the ISA says 0,
    which H100 gives from f32/f16/bf16 into 8 to 32 bits; an f64 NaN, or any NaN into 64 bits,
    gives the destination's sign bit alone (0x80..0; for 8-bit types 0x80)."""
    dt = LANE_DTYPE[ty]
    info = np.iinfo(dt)
    lo, hi = float(info.min), float(info.max)
    fn = INT_ROUND[rnd]
    top = np.array(info.max, dt)
    bottom = np.array(info.min, dt)
    nan = np.array(1 << (8 * dt.itemsize - 1), np.dtype(f"u{dt.itemsize}")).view(dt)
    if src != "f64" and dt.itemsize <= 4:
        nan = np.zeros((), dt)

    if dt.itemsize <= 4:  # the range is exact in float64: clip, NaN, convert

        def small(a: Lanes) -> Lanes:
            x = np.clip(fn(a.astype(np.float64)), lo, hi)
            bad = x != x
            x[bad] = 0
            out = x.astype(dt)
            out[bad] = nan
            return out

        return small

    def cvt(a: Lanes) -> Lanes:
        x = fn(a.astype(np.float64))
        # float64 hi rounds up for 64-bit types (2^63, 2^64): >= catches those lanes
        out = np.where(x >= hi, top, np.where(x <= lo, bottom, np.where(x != x, 0, x).astype(dt)))
        return np.where(x != x, nan, out).astype(dt)

    return cvt


def _to_float(dst: str, mode: str, src_int: bool) -> Fn:
    """Round the exact source value to the float type `dst` in `mode`."""
    elem = ELEMENT[dst]
    if src_int:
        if elem == F64:
            return fn1(lambda a: round_pair(*_int_to_pair(a), F64, mode))
        return fn1(lambda a: directed(to_odd(*_int_to_pair(a)), elem, mode))
    if elem == F64:
        return fn1(lambda a: a.astype(np.float64))
    if mode == "rn" and elem != F32:
        # numpy (f16) and ml_dtypes (bf16) round float32 once, correctly; from float64 only
        # numpy's f16 cast does (ml_dtypes goes through float32 first)
        return fn1(lambda a: a.astype(elem) if a.dtype == F32 or elem == F16 else nearest(a.astype(np.float64), elem))
    return fn1(lambda a: directed(a.astype(np.float64), elem, mode))


def _narrow8(name: str, relu: bool) -> Callable[[Lanes], Lanes]:
    """float32 lanes -> the bits (uint8) of a narrow float, .rn.satfinite: NaN stays NaN where the
    format has one (else: +max, unverified), beyond max (incl. inf) -> signed max."""
    dt = EIGHT_BIT[name]
    mx = np.float32(float(finfo(dt).max))
    nan_bits = _NAN8 if name in _HAS_NAN else np.array(mx).astype(dt).view(np.uint8)

    def narrow(x: Lanes) -> Lanes:
        if relu:  # -0.0 too becomes +0.0 (H100)
            x = np.where(x <= 0, np.float32(0), x)
        bits = np.clip(x, -mx, mx).astype(dt).view(np.uint8)
        return np.where(x != x, nan_bits, bits)

    return narrow


def _tf32(mode: str, satfinite: bool, relu: bool) -> Fn:
    """f32 -> tf32 (10 explicit significand bits, in a .b32 whose low 13 bits are zero):
    .rna rounds half away from zero, .rn half to even, .rz truncates; NaN -> canonical NaN."""

    def cvt(a: Lanes) -> Lanes:
        if relu:
            a = np.where(a <= 0, np.float32(0), a)
        b = a.view(np.uint32)
        if mode == "rna":
            r = b + np.uint32(0x1000)
        elif mode == "rn":
            r = b + np.uint32(0xFFF) + ((b >> np.uint32(13)) & np.uint32(1))
        else:
            r = b
        r = r & np.uint32(0xFFFFE000)
        mag = b & np.uint32(0x7FFFFFFF)
        r = np.where(mag >= np.uint32(0x7F800000), b, r)  # inf stays, NaN fixed below
        if satfinite:
            rmag = r & np.uint32(0x7FFFFFFF)
            r = np.where(rmag == np.uint32(0x7F800000), (r & np.uint32(0x80000000)) | np.uint32(0x7F7FE000), r)
        # H100 (.rna): a NaN keeps its bits but the low 13, unrounded (0x7F800001 becomes +inf)
        return np.where(mag > np.uint32(0x7F800000), b & np.uint32(0xFFFFE000), r)

    return cvt


relu_step = relu


def _nan_rule(dst: str, src: str, ftz: bool) -> str:
    """How a NaN converts between float types on H100 (docs/silicon.md): "canonical"
    (the destination's canonical NaN), "keep" (sign and the top payload bits kept, quieted) or
    "shift" (bf16 -> f32: the bits shifted up, a signalling NaN stays signalling)."""
    if dst == "f64":
        return "canonical-f32" if (src == "f32" and ftz) else "keep"
    if src == "f64":
        return "keep"  # f64 -> f32 / f16 observed; f64 -> bf16 by analogy (unverified)
    if (dst, src) == ("f32", "bf16"):
        return "shift"
    return "canonical"


_FIELDS: dict[np.dtype[Any], tuple[int, int]] = {F64: (11, 52), F32: (8, 23), F16: (5, 10), BF16: (8, 7)}


def nan_bits(a: Lanes, src: np.dtype[Any], dst: np.dtype[Any], quiet: bool) -> Lanes:
    """`a`'s NaNs in format `dst`: sign kept, payload aligned at the top (cut or widened), and the
    quiet bit set when `quiet`. Lanes that are not NaN come out as garbage (callers select)."""
    se, sm = _FIELDS[src]
    de, dm = _FIELDS[dst]
    sw, dw = 1 + se + sm, 1 + de + dm
    u = a.view(np.dtype(f"u{sw // 8}")).astype(np.uint64)
    sign = u >> np.uint64(sw - 1)
    mant = u & np.uint64((1 << sm) - 1)
    mant = mant >> np.uint64(sm - dm) if sm >= dm else mant << np.uint64(dm - sm)
    bits = (sign << np.uint64(dw - 1)) | np.uint64(((1 << de) - 1) << dm) | mant
    if quiet:
        bits |= np.uint64(1 << (dm - 1))
    return bits.astype(np.dtype(f"u{dw // 8}")).view(dst)


def _pack2(lo: Lanes, hi: Lanes) -> Lanes:
    """Two lane arrays of one dtype packed into the unsigned integer of twice their width."""
    out = np.empty((lo.shape[0], 2), lo.dtype)
    out[:, 0] = lo
    out[:, 1] = hi
    return out.view(np.dtype(f"u{2 * lo.dtype.itemsize}")).reshape(-1)


def _unpack2(x: Lanes, dt: np.dtype[Any]) -> tuple[Lanes, Lanes]:
    v = x.view(dt).reshape(-1, 2)
    return v[:, 0], v[:, 1]


def decode_cvt_pack(s: Spelling) -> Semantics:
    """cvt.pack.sat.{u16,s16}.s32 d, a, b: a and b saturated to 16 bits, a in the upper half;
    cvt.pack.sat.{u8,s8}.s32.b32 d, a, b, c: a and b saturated to 8 bits in bits 15:8 and 7:0,
    the low half of c above them."""
    s.only({"pack", "sat"})
    types = s.types
    if "sat" not in s.flags:
        s.fail("cvt.pack needs .sat")
    if len(types) == 2 and types[0] in ("u16", "s16") and types[1] == "s32":
        narrow, three = types[0], False
    elif len(types) == 3 and types[0] in ("u8", "s8") and types[1:] == ("s32", "b32"):
        narrow, three = types[0], True
    else:
        s.fail("cvt.pack is .sat.{u16,s16}.s32 (two sources) or .sat.{u8,s8}.s32.b32 (three)")
    info = np.iinfo(LANE_DTYPE[narrow])
    width = info.bits
    mask = np.int64((1 << width) - 1)

    def sat(x: Lanes) -> Lanes:
        return np.clip(x.astype(np.int64), info.min, info.max) & mask

    if three:

        def pack8(a: Lanes, b: Lanes, c: Lanes) -> Lanes:
            low = (sat(a) << 8) | sat(b)
            return ((c.astype(np.int64) << 16) | low).astype(np.uint32)

        return Semantics(pack8, ("s32", "s32", "b32"), ("b32",))
    return Semantics(fn2(lambda a, b: ((sat(a) << 16) | sat(b)).astype(np.uint32)), ("s32", "s32"), ("b32",))


# cvt d, a is decoded by the family of its (destination, source) pair: one decoder each,
# called with the spelling, both types, and the float (`fmode`) and integer (`imode`)
# rounding modifiers, of which decode_cvt has checked that at most one is given.
CvtDecoder = Callable[[Spelling, str, str, str | None, str | None], Semantics]


def _int_from_int(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    s.only({"sat"})
    dt = LANE_DTYPE[dst]
    dinfo, sinfo = np.iinfo(dt), np.iinfo(LANE_DTYPE[src])
    if "sat" not in s.flags:
        return Semantics(fn1(lambda a: a.astype(dt)), (src,), (dst,))
    if dinfo.min <= sinfo.min and sinfo.max <= dinfo.max:
        s.fail(f".sat: every .{src} value fits .{dst} (ptxas refuses it)")
    lo, hi = np.array(dinfo.min, dt), np.array(dinfo.max, dt)
    if src in UNSIGNED:  # compare in the unsigned 64-bit domain
        return Semantics(
            fn1(lambda a: np.where(a.astype(np.uint64) > np.uint64(dinfo.max), hi, a.astype(dt))), (src,), (dst,)
        )
    return Semantics(
        fn1(
            lambda a: np.where(
                a < 0,
                np.where(a.astype(np.int64) < dinfo.min, lo, a.astype(dt)),
                np.where(a.astype(np.uint64) > np.uint64(dinfo.max), hi, a.astype(dt)),
            )
        ),
        (src,),
        (dst,),
    )


def _int_from_float(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    if imode is None:
        s.fail("float-to-integer cvt needs .rni, .rzi, .rmi or .rpi")
    s.only({*INT_ROUND, "sat", "ftz"})
    ftz = "ftz" in s.flags
    if ftz and src != "f32":
        s.fail(".ftz applies to .f32 sources only")
    fn = _float_to_int(dst, src, imode)
    if ftz:
        inner = fn
        fn = fn1(lambda a: inner(flush(a)))
    return Semantics(fn, (src,), (dst,))


def _float_from_int(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    s.only({*MODES, "sat", "ftz"})
    if fmode is None or fmode == "rna":
        s.fail("integer-to-float cvt needs .rn, .rz, .rm or .rp")
    fn = _to_float(dst, fmode, True)
    if "sat" in s.flags:
        inner = fn
        fn = fn1(lambda a: saturate(inner(a)))
    return Semantics(fn, (src,), (dst,))


def _float_convert(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Fn:
    """The conversion proper of cvt between float types: a same-type rounding to integer, a
    narrowing rounding, or an exact widening."""
    narrowing = WIDTH[dst] < WIDTH[src] or (dst, src) in (("f16", "bf16"), ("bf16", "f16"))
    if dst == src:
        if fmode:
            s.fail(f"same-type cvt takes an integer rounding (.rni .rzi .rmi .rpi), not .{fmode}")
        return INT_ROUND[imode] if imode else np.copy
    if imode:
        s.fail(f".{imode} is for same-type float cvt or float-to-integer")
    if narrowing:
        if fmode is None or fmode == "rna":
            s.fail(f"cvt.{dst}.{src} narrows and needs .rn, .rz, .rm or .rp")
        return _to_float(dst, fmode, False)
    if fmode:
        s.fail(f"cvt.{dst}.{src} is exact and takes no rounding modifier")
    elem = ELEMENT[dst]
    return fn1(lambda a: a.astype(elem))


def _float_steps(flags: frozenset[str], dst: str, src: str, fn: Fn) -> list[Fn]:
    """`fn` with the flushing (.ftz), .relu, .satfinite and .sat steps around it, in order."""
    ftz = "ftz" in flags
    steps: list[Fn] = []
    if ftz and src == "f32":
        steps.append(flush)
    steps.append(fn)
    if "relu" in flags:
        steps.append(relu_step)
    if "satfinite" in flags:
        steps.append(clamp_finite)
    if ftz and dst == "f32":
        steps.append(flush)
    return steps


def _float_from_float(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    flags = s.flags
    s.only({*MODES, *INT_ROUND, "sat", "ftz", "relu", "satfinite"})
    if ("relu" in flags or "satfinite" in flags) and not (dst in ("f16", "bf16") and src == "f32"):
        s.fail(".relu/.satfinite apply to cvt.rn.{f16,bf16}.f32")
    fn = _float_convert(s, dst, src, fmode, imode)
    ftz = "ftz" in flags
    if ftz and "f32" not in (dst, src):
        s.fail(".ftz needs an .f32 source or destination")
    steps = _float_steps(flags, dst, src, fn)
    rule = _nan_rule(dst, src, ftz)
    sat = "sat" in flags
    if sat:
        steps.append(saturate)  # NaN -> +0
    elif rule == "canonical":
        steps.append(canonicalize_fresh)  # every step above makes a new array
    if sat or rule == "canonical":

        def chain(a: Lanes) -> Lanes:
            for step in steps:
                a = step(a)
            return a

        return Semantics(chain, (src,), (dst,))
    src_elem, dst_elem = ELEMENT[src], ELEMENT[dst]

    def chain_nan(a: Lanes) -> Lanes:
        x = a
        for step in steps:
            x = step(x)
        nan = a != a
        if not nan.any():
            return x
        if rule == "canonical-f32":  # .ftz: the canonical f32 NaN, then widened
            a = np.where(nan, canonical_nan(F32), a)
        return np.where(nan, nan_bits(a, src_elem, dst_elem, quiet=rule != "shift"), x)

    return Semantics(chain_nan, (src,), (dst,))


def _halves_from_f32(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    """Packed half pairs from two f32: cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b."""
    s.only({"rn", "rz", "relu", "satfinite"})
    if fmode not in ("rn", "rz"):
        s.fail(f"cvt.{dst}.f32 needs .rn (or .rz)")
    one = _to_float(dst[:-2], fmode, False)
    relu_flag, satfinite = "relu" in s.flags, "satfinite" in s.flags

    def half(x: Lanes) -> Lanes:
        y = one(x)
        if relu_flag:
            y = relu_step(y)
        if satfinite:
            y = clamp_finite(y)
        return canonicalize_fresh(y)  # y is a new array

    return Semantics(fn2(lambda a, b: _pack2(half(b), half(a))), ("f32", "f32"), (dst,))


def _narrow_from(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    """Narrow float pairs (.e4m3x2 ... .e2m1x2) from two f32 or from one f16x2."""
    s.only({"rn", "satfinite", "relu"})
    if fmode != "rn" or "satfinite" not in s.flags:
        s.fail(f"cvt to .{dst} is cvt.rn.satfinite{{.relu}}")
    if src == "bf16x2" or (src == "f16x2" and dst not in ("e4m3x2", "e5m2x2", "e2m1x2")):
        s.fail(f"cvt.{dst}.{src} is not a PTX conversion (sources: .f32; .f16x2 for e4m3x2 e5m2x2 e2m1x2)")
    narrow = _narrow8(dst, "relu" in s.flags)
    four = dst == "e2m1x2"
    if src == "f32":

        def from_f32(a: Lanes, b: Lanes) -> Lanes:
            lo, hi = narrow(b.astype(np.float32)), narrow(a.astype(np.float32))
            if four:
                return (hi << np.uint8(4)) | lo
            return _pack2(lo, hi)

        return Semantics(from_f32, ("f32", "f32"), (dst,))

    def from_f16x2(a: Lanes) -> Lanes:
        lo, hi = (narrow(h.astype(np.float32)) for h in _unpack2(a, np.dtype(np.float16)))
        if four:
            return (hi << np.uint8(4)) | lo
        return _pack2(lo, hi)

    return Semantics(from_f16x2, (src,), (dst,))


def _halves_from_narrow(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    """cvt.rn{.relu}.f16x2 of a narrow float pair."""
    s.only({"rn", "relu"})
    if fmode != "rn":
        s.fail(f"cvt.{dst}.{src} is cvt.rn{{.relu}}")
    if dst == "bf16x2":
        s.fail(f"cvt.bf16x2.{src} is not a PTX conversion")
    dt = EIGHT_BIT[src]
    four = src == "e2m1x2"
    relu_flag = "relu" in s.flags

    def widen(a: Lanes) -> Lanes:
        if four:
            lo, hi = a & np.uint8(0xF), a >> np.uint8(4)
        else:
            lo, hi = _unpack2(a, np.dtype(np.uint8))
        pair = [np.ascontiguousarray(v).view(dt).astype(np.float16) for v in (lo, hi)]
        if relu_flag:  # -0.0 too becomes +0.0 (H100)
            pair = [np.where(v <= 0, np.float16(0), v) for v in pair]
        return _pack2(canonicalize(pair[0]), canonicalize(pair[1]))

    return Semantics(widen, (src,), (dst,))


def _tf32_from_f32(s: Spelling, dst: str, src: str, fmode: str | None, imode: str | None) -> Semantics:
    s.only({"rna", "rn", "rz", "satfinite", "relu"})
    if fmode not in ("rna", "rn", "rz"):
        s.fail("cvt.tf32.f32 needs .rna, .rn or .rz")
    relu_flag = "relu" in s.flags
    if fmode == "rna" and relu_flag:
        s.fail(".relu does not combine with .rna")
    return Semantics(_tf32(fmode, "satfinite" in s.flags, relu_flag), ("f32",), ("tf32",))


_HALF_PAIRS = ("f16x2", "bf16x2")

CVT_DECODERS: dict[tuple[str, str], CvtDecoder] = {
    **{(d, a): _int_from_int for d in CVT_INT for a in CVT_INT},
    **{(d, a): _int_from_float for d in CVT_INT for a in CVT_FLOAT},
    **{(d, a): _float_from_int for d in CVT_FLOAT for a in CVT_INT},
    **{(d, a): _float_from_float for d in CVT_FLOAT for a in CVT_FLOAT},
    **{(d, "f32"): _halves_from_f32 for d in _HALF_PAIRS},
    **{(d, a): _narrow_from for d in EIGHT_BIT for a in ("f32", *_HALF_PAIRS)},
    **{(d, a): _halves_from_narrow for d in _HALF_PAIRS for a in EIGHT_BIT},
    ("tf32", "f32"): _tf32_from_f32,
}
"""The (destination, source) type pairs of cvt this model executes, each with its decoder."""


def decode_cvt(s: Spelling) -> Semantics:
    if "pack" in s.flags:
        return decode_cvt_pack(s)
    types = s.types
    if len(types) != 2:
        s.fail(f"cvt needs a destination and a source type, got {len(types)} types")
    dst, src = types
    fmode = s.at_most_one({*MODES, "rna"}, "rounding modifier")
    imode = s.at_most_one(INT_ROUND, "integer rounding modifier")
    if fmode and imode:
        s.fail(f"both .{fmode} and .{imode}")
    decoder = CVT_DECODERS.get((dst, src))
    if decoder is None:
        s.fail(f"no cvt from .{src} to .{dst} in this model")
    return decoder(s, dst, src, fmode, imode)


def decode_mov(s: Spelling, pack: int, unpack: int) -> Semantics:
    """mov.type d, a (a copy), mov.b32/b64 d, {a, b[, c, d]} (pack, first element lowest) and
    mov.b32/b64 {a, b[, c, d]}, d (unpack)."""
    ty = s.one_type(
        {"pred", "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64", "f16", "bf16", "f32", "f64"}
    )
    s.only(set())
    n = pack or unpack
    if not n:
        return Semantics(fn1(lambda a: a), (ty,), (ty,))
    if ty not in ("b32", "b64") or n not in (2, 4) or (pack and unpack):
        s.fail(f"vector mov packs/unpacks 2 or 4 elements into .b32/.b64, not {n} into .{ty}")
    part = f"b{WIDTH[ty] // n}"
    pdt, whole = LANE_DTYPE[part], LANE_DTYPE[ty]
    if pack:

        def do_pack(*xs: Lanes) -> Lanes:
            out = np.empty((xs[0].shape[0], n), pdt)
            for i, x in enumerate(xs):
                out[:, i] = x
            return out.view(whole).reshape(-1)

        return Semantics(do_pack, (part,) * n, (ty,))

    def do_unpack(x: Lanes) -> tuple[Lanes, ...]:
        v = x.view(pdt).reshape(-1, n)
        return tuple(np.ascontiguousarray(v[:, i]) for i in range(n))

    return Semantics(do_unpack, (ty,), (part,) * n)

"""An independent reference for the generated silicon programs' instructions.

Used by `test_silicon_fixtures.py` to replay the generated fixtures without our
interpreter. Every result is derived from a definition outside this repository's code:

* floating point: IEEE 754-2019 arithmetic on exact rationals (`fractions.Fraction`),
  rounded to the destination format by the rounding-direction attribute (`.rn` ties to
  even, `.rna` ties away, `.rz`, `.rm`, `.rp`); `.ftz` / `.sat` / `.relu` / `.satfinite`
  and NaN/infinity rules of conversions as the PTX ISA states them (chapter "Instruction
  Set": the floating-point instructions and `cvt`);
* integers and bits: the descriptions and pseudocode of the PTX ISA's integer, logic and
  shift instructions (`bfe`, `bfi`, `prmt`, `lop3`, `shf`, `bfind`, `bmsk`, `szext`,
  `dp4a`, `dp2a`, `cvt.pack`, carry chains, shifts clamped at the width).

`evaluate(opcode, text, ops)` returns the expected bits of each result, or `None` where
the PTX ISA leaves the result unspecified or approximate (`.approx`, `ex2`, `sin`, integer
division by zero): those results are recorded on silicon only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache


@dataclass(frozen=True)
class Fmt:
    """A binary floating-point format: exponent and fraction bit counts."""

    name: str
    ebits: int
    mbits: int
    ieee_specials: bool = True  # False: e4m3 (no infinity; S.1111.111 is NaN)

    @property
    def width(self) -> int:
        return 1 + self.ebits + self.mbits

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def sign(self) -> int:
        return 1 << (self.width - 1)

    @property
    def emax(self) -> int:
        return self.bias if self.ieee_specials else self.bias + 1

    @property
    def max_finite(self) -> int:
        if self.ieee_specials:
            return ((1 << self.ebits) - 2) << self.mbits | ((1 << self.mbits) - 1)
        return ((1 << self.ebits) - 1) << self.mbits | ((1 << self.mbits) - 2)

    @property
    def inf(self) -> int:
        return ((1 << self.ebits) - 1) << self.mbits

    @property
    def qnan(self) -> int:
        """The canonical NaN of PTX: all exponent and fraction bits set, sign clear."""
        return (1 << (self.width - 1)) - 1


F32 = Fmt("f32", 8, 23)
F64 = Fmt("f64", 11, 52)
F16 = Fmt("f16", 5, 10)
BF16 = Fmt("bf16", 8, 7)
E4M3 = Fmt("e4m3", 4, 3, ieee_specials=False)
E5M2 = Fmt("e5m2", 5, 2)
FMTS = {"f32": F32, "f64": F64, "f16": F16, "bf16": BF16, "e4m3": E4M3, "e5m2": E5M2}

NAN = "nan"
INF = "inf"


@dataclass(frozen=True)
class Val:
    """A decoded float: `kind` is "num", "inf" or "nan"; `neg` the sign; `x` the value (num)."""

    kind: str
    neg: bool
    x: Fraction = Fraction(0)

    @property
    def is_nan(self) -> bool:
        return self.kind == NAN

    @property
    def is_inf(self) -> bool:
        return self.kind == INF

    def num(self) -> Fraction:
        return self.x


@cache
def pow2(e: int) -> Fraction:
    return Fraction(1 << e) if e >= 0 else Fraction(1, 1 << -e)


@cache
def decode(bits: int, f: Fmt) -> Val:
    neg = bool(bits & f.sign)
    e = (bits >> f.mbits) & ((1 << f.ebits) - 1)
    m = bits & ((1 << f.mbits) - 1)
    top = (1 << f.ebits) - 1
    if f.ieee_specials and e == top:
        return Val(NAN if m else INF, neg)
    if not f.ieee_specials and e == top and m == (1 << f.mbits) - 1:
        return Val(NAN, neg)
    x = m * pow2(1 - f.bias - f.mbits) if e == 0 else ((1 << f.mbits) | m) * pow2(e - f.bias - f.mbits)
    return Val("num", neg, -x if neg else x)


def is_subnormal(bits: int, f: Fmt) -> bool:
    return (bits >> f.mbits) & ((1 << f.ebits) - 1) == 0 and bits & ((1 << f.mbits) - 1) != 0


def ftz_in(bits: int, f: Fmt) -> int:
    return bits & f.sign if is_subnormal(bits, f) else bits


def floor_log2(a: Fraction) -> int:
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if pow2(e) > a:
        e -= 1
    elif pow2(e + 1) <= a:
        e += 1
    return e


def round_int(q: Fraction, neg: bool, mode: str) -> int:
    """Round a non-negative rational magnitude to an integer; `neg` is the sign of the value."""
    n = q.numerator // q.denominator
    rem = q - n
    if rem == 0:
        return n
    half = Fraction(1, 2)
    if mode in ("rn", "rni"):
        return n + 1 if rem > half or (rem == half and n % 2 == 1) else n
    if mode == "rna":
        return n + 1 if rem >= half else n
    if mode in ("rz", "rzi"):
        return n
    if mode in ("rm", "rmi"):
        return n + 1 if neg else n
    if mode in ("rp", "rpi"):
        return n if neg else n + 1
    raise ValueError(mode)


def encode(v: Fraction, f: Fmt, mode: str, neg_zero: bool = False) -> int:
    """Round the exact value `v` to format `f` (IEEE 754 §4.3, overflow per §7.4)."""
    if v == 0:
        return f.sign if neg_zero else 0
    neg = v < 0
    a = -v if neg else v
    emin = 1 - f.bias
    e = max(floor_log2(a), emin)
    n = round_int(a * pow2(f.mbits - e), neg, mode)
    if n == 1 << (f.mbits + 1):
        e += 1
        n >>= 1
    sign = f.sign if neg else 0
    if e > f.emax or (not f.ieee_specials and e == f.emax and n - (1 << f.mbits) > (1 << f.mbits) - 2):
        to_inf = mode in ("rn", "rna") or (mode == "rp" and not neg) or (mode == "rm" and neg)
        if to_inf and f.ieee_specials:
            return sign | f.inf
        if to_inf:
            return sign | f.qnan  # e4m3 without .satfinite: NaN
        return sign | f.max_finite
    if n < 1 << f.mbits:
        return sign | n  # subnormal (or zero after rounding: sign kept)
    return sign | (e + f.bias) << f.mbits | (n - (1 << f.mbits))


def exact_zero_sign(mode: str) -> bool:
    """IEEE 754 §6.3: an exact zero sum of opposite-signed operands is -0 only under roundTowardNegative."""
    return mode == "rm"


def add(a: Val, b: Val, f: Fmt, mode: str) -> int:
    if a.is_nan or b.is_nan:
        return f.qnan
    if a.is_inf or b.is_inf:
        if a.is_inf and b.is_inf and a.neg != b.neg:
            return f.qnan
        return (f.sign if (a.neg if a.is_inf else b.neg) else 0) | f.inf
    s = a.x + b.x
    if s == 0:
        both_neg = a.neg and b.neg and a.x == 0 and b.x == 0
        return encode(
            s, f, mode, neg_zero=both_neg or ((a.x != 0 or b.x != 0 or a.neg != b.neg) and exact_zero_sign(mode))
        )
    return encode(s, f, mode)


def mul(a: Val, b: Val, f: Fmt, mode: str) -> int:
    if a.is_nan or b.is_nan:
        return f.qnan
    neg = a.neg != b.neg
    if a.is_inf or b.is_inf:
        if (not a.is_inf and a.x == 0) or (not b.is_inf and b.x == 0):
            return f.qnan
        return (f.sign if neg else 0) | f.inf
    return encode(a.x * b.x, f, mode, neg_zero=neg)


def fma(a: Val, b: Val, c: Val, f: Fmt, mode: str) -> int:
    if a.is_nan or b.is_nan or c.is_nan:
        return f.qnan
    pneg = a.neg != b.neg
    if a.is_inf or b.is_inf:
        if (not a.is_inf and a.x == 0) or (not b.is_inf and b.x == 0):
            return f.qnan
        if c.is_inf and c.neg != pneg:
            return f.qnan
        return (f.sign if pneg else 0) | f.inf
    if c.is_inf:
        return (f.sign if c.neg else 0) | f.inf
    p = a.x * b.x
    s = p + c.x
    if s == 0:
        if p == 0 and c.x == 0:
            return encode(s, f, mode, neg_zero=(pneg and c.neg) or (pneg != c.neg and exact_zero_sign(mode)))
        return encode(s, f, mode, neg_zero=exact_zero_sign(mode))
    return encode(s, f, mode)


def div(a: Val, b: Val, f: Fmt, mode: str) -> int:
    if a.is_nan or b.is_nan:
        return f.qnan
    neg = a.neg != b.neg
    sign = f.sign if neg else 0
    if a.is_inf:
        return f.qnan if b.is_inf else sign | f.inf
    if b.is_inf:
        return sign
    if b.x == 0:
        return f.qnan if a.x == 0 else sign | f.inf
    return encode(a.x / b.x, f, mode, neg_zero=neg)


def sqrt_bits(a: Val, f: Fmt, mode: str) -> int:
    if a.is_nan or (a.neg and (a.is_inf or a.x != 0)):
        return f.qnan
    if a.is_inf:
        return f.inf
    if a.x == 0:
        return f.sign if a.neg else 0
    # exact: find the rounded root by bracketing with integer square roots at high precision
    x = a.x
    e = floor_log2(x) // 2
    scale = pow2(f.mbits + 3 - e)  # root * scale has >= mbits + 3 bits
    t = x * scale * scale
    n = t.numerator // t.denominator
    r = isqrt(n)
    exact = r * r == n and t.denominator == 1
    # r <= sqrt(t) < r + 1; add a sticky half unit when inexact so the rounding sees it
    approx = Fraction(r) if exact else Fraction(2 * r + 1, 2)
    return encode(approx / scale, f, mode)


def isqrt(n: int) -> int:
    import math

    return math.isqrt(n)


def minmax(a: Val, ab: int, b: Val, bb: int, f: Fmt, is_max: bool, nan_mode: bool) -> int:
    """PTX min/max: a NaN operand is ignored unless both are NaN (`.NaN`: any NaN gives NaN); -0 < +0."""
    if a.is_nan or b.is_nan:
        if nan_mode or (a.is_nan and b.is_nan):
            return f.qnan
        return bb if a.is_nan else ab

    def key(v: Val) -> tuple[Fraction, int]:
        if v.is_inf:
            return (Fraction(-(10**400)) if v.neg else Fraction(10**400), 0)
        return (v.x, -1 if v.neg else 0)

    pick_a = key(a) >= key(b) if is_max else key(a) <= key(b)
    return ab if pick_a else bb


def testp(kind: str, v: Val, bits: int, f: Fmt) -> bool:
    return {
        "finite": not v.is_nan and not v.is_inf,
        "infinite": v.is_inf,
        "number": not v.is_nan,
        "notanumber": v.is_nan,
        "normal": not v.is_nan and not v.is_inf and v.x != 0 and not is_subnormal(bits, f),
        "subnormal": is_subnormal(bits, f),
    }[kind]


def fcmp(cmp: str, a: Val, b: Val) -> bool:
    unordered = a.is_nan or b.is_nan
    if cmp == "num":
        return not unordered
    if cmp == "nan":
        return unordered
    if unordered:
        return cmp.endswith("u")
    base = cmp[:-1] if len(cmp) == 3 and cmp.endswith("u") else cmp

    def value(v: Val) -> Fraction:
        if v.is_inf:
            return Fraction(-(10**400)) if v.neg else Fraction(10**400)
        return v.x

    x, y = value(a), value(b)
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[base]


# --- integers ----------------------------------------------------------------------------


def sx(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def ux(v: int, w: int) -> int:
    return v & ((1 << w) - 1)


def clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def bfe(a: int, pos: int, ln: int, w: int, signed: bool) -> int:
    msb = w - 1
    pos, ln = pos & 0xFF, ln & 0xFF
    sbit = 0 if not signed or ln == 0 else (a >> min(pos + ln - 1, msb)) & 1
    d = 0
    for i in range(w):
        bit = (a >> (pos + i)) & 1 if i < ln and pos + i <= msb else sbit
        d |= bit << i
    return d


def bfi(a: int, b: int, pos: int, ln: int, w: int) -> int:
    msb = w - 1
    pos, ln = pos & 0xFF, ln & 0xFF
    f = b
    i = 0
    while i < ln and pos + i <= msb:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return ux(f, w)


def bfind(a: int, w: int, signed: bool, shiftamt: bool) -> int:
    v = ux(a, w)
    if signed and v >> (w - 1):
        v = ~v & ((1 << w) - 1)
    if v == 0:
        return 0xFFFFFFFF
    pos = v.bit_length() - 1
    return (w - 1 - pos) if shiftamt else pos


PRMT_MODES = {
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}
"""PTX ISA `prmt`: the source byte of result bytes 3, 2, 1, 0 for each value of c[1:0]."""


def prmt(a: int, b: int, c: int, mode: str) -> int:
    tmp = [((b << 32 | a) >> (8 * i)) & 0xFF for i in range(8)]
    out = 0
    if mode == "":
        for i in range(4):
            sel = (c >> (4 * i)) & 0xF
            byte = tmp[sel & 7]
            if sel & 8:
                byte = 0xFF if byte & 0x80 else 0
            out |= byte << (8 * i)
        return out
    b3, b2, b1, b0 = PRMT_MODES[mode][c & 3]
    for i, src in enumerate((b0, b1, b2, b3)):
        out |= tmp[src] << (8 * i)
    return out


def lop3(a: int, b: int, c: int, lut: int) -> int:
    out = 0
    for i in range(32):
        idx = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        out |= ((lut >> idx) & 1) << i
    return out


def shf(a: int, b: int, n: int, left: bool, wrap: bool) -> int:
    n = n & 31 if wrap else min(n, 32)
    v = (b << 32) | a
    return ((v << n) >> 32) & 0xFFFFFFFF if left else (v >> n) & 0xFFFFFFFF


def dp4a(a: int, b: int, c: int, sa: bool, sb: bool) -> int:
    s = sx(c, 32)
    for i in range(4):
        x, y = (a >> (8 * i)) & 0xFF, (b >> (8 * i)) & 0xFF
        s += (sx(x, 8) if sa else x) * (sx(y, 8) if sb else y)
    return ux(s, 32)


def dp2a(a: int, b: int, c: int, sa: bool, sb: bool, hi: bool) -> int:
    s = sx(c, 32)
    for i in range(2):
        x = (a >> (16 * i)) & 0xFFFF
        y = (b >> (8 * (i + (2 if hi else 0)))) & 0xFF
        s += (sx(x, 16) if sa else x) * (sx(y, 8) if sb else y)
    return ux(s, 32)


# --- one generated slot ------------------------------------------------------------------

FLOAT_TYPES = {"f32": F32, "f64": F64, "f16": F16, "bf16": BF16}
INT_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}


@dataclass(frozen=True)
class Operands:
    """One thread's operand record (see silicon/generate.py)."""

    a: int
    b: int
    c: int
    d: int
    e: int

    def reg(self, token: str) -> int:
        token = token.strip()
        if token in ("%d", "%e"):
            return self.d if token == "%d" else self.e
        if token.startswith("%") and token[1] in "abc":
            v = {"a": self.a, "b": self.b, "c": self.c}[token[1]]
            return ux(v, int(token[2:]))
        return int(token, 0)


def post(bits: int, f: Fmt, mods: set[str]) -> int:
    """`.ftz` flushes a subnormal result, `.sat` clamps to [0, 1] (NaN to +0), `.relu` clamps below at 0."""
    if "ftz" in mods and is_subnormal(bits, f):
        bits &= f.sign
    v = decode(bits, f)
    if "sat" in mods:
        if v.is_nan or v.neg:
            return 0
        if v.is_inf or v.x > 1:
            return encode(Fraction(1), f, "rn")
    if "relu" in mods:
        if v.is_nan:
            return f.qnan
        if v.neg:
            return 0
    return bits


def rounding(mods: set[str], default: str = "rn") -> str:
    for m in ("rn", "rz", "rm", "rp", "rna", "rni", "rzi", "rmi", "rpi"):
        if m in mods:
            return m
    return default


def float_op(base: str, mods: set[str], f: Fmt, srcs: list[int]) -> int | None:
    if "approx" in mods or "full" in mods or base in ("ex2", "lg2", "sin", "cos", "tanh", "rsqrt"):
        return None  # approximate by definition: silicon only
    if "ftz" in mods:
        srcs = [ftz_in(s, f) for s in srcs]
    v = [decode(s, f) for s in srcs]
    mode = rounding(mods)
    if base == "add":
        r = add(v[0], v[1], f, mode)
    elif base == "sub":
        r = add(v[0], decode(srcs[1] ^ f.sign, f), f, mode)
    elif base == "mul":
        r = mul(v[0], v[1], f, mode)
    elif base == "fma":
        r = fma(v[0], v[1], v[2], f, mode)
    elif base == "div":
        r = div(v[0], v[1], f, mode)
    elif base == "rcp":
        r = div(Val("num", False, Fraction(1)), v[0], f, mode)
    elif base == "sqrt":
        r = sqrt_bits(v[0], f, mode)
    elif base in ("min", "max"):
        if "xorsign" in mods:
            sign = (srcs[0] ^ srcs[1]) & f.sign
            aa, bb = srcs[0] & ~f.sign, srcs[1] & ~f.sign
            m = minmax(decode(aa, f), aa, decode(bb, f), bb, f, base == "max", "NaN" in mods)
            return m if decode(m, f).is_nan else m | sign
        r = minmax(v[0], srcs[0], v[1], srcs[1], f, base == "max", "NaN" in mods)
    elif base == "abs":
        r = srcs[0] & ~f.sign
    elif base == "neg":
        r = srcs[0] ^ f.sign
    elif base == "copysign":
        r = (srcs[1] & ~f.sign) | (srcs[0] & f.sign)
    else:
        raise KeyError(base)
    return post(r, f, mods)


def packed(f: Fmt, srcs: list[int], base: str, mods: set[str]) -> int | None:
    lo = float_op(base, mods, f, [s & 0xFFFF for s in srcs])
    hi = float_op(base, mods, f, [(s >> 16) & 0xFFFF for s in srcs])
    return None if lo is None or hi is None else hi << 16 | lo


def to_float(v: Val, df: Fmt, mods: set[str]) -> int | None:
    """cvt between float formats (and to an integral value of the same format with .rXi)."""
    mode = rounding(mods, "rn")
    if v.is_nan:
        return 0 if "sat" in mods else df.qnan
    if v.is_inf:
        if "relu" in mods and v.neg:
            return 0
        if "satfinite" in mods:
            return (df.sign if v.neg else 0) | df.max_finite
        return post((df.sign if v.neg else 0) | (df.inf if df.ieee_specials else df.qnan), df, mods)
    x = v.x
    if mode in ("rni", "rzi", "rmi", "rpi"):
        n = round_int(abs(x), x < 0, mode)
        x = Fraction(-n if x < 0 else n)
        mode = "rn"
    bits = encode(x, df, mode, neg_zero=v.neg)
    if "satfinite" in mods and (decode(bits, df).is_inf or decode(bits, df).is_nan):
        bits = (df.sign if v.neg else 0) | df.max_finite
    return post(bits, df, mods)


def float_to_int(v: Val, mode: str, w: int, signed: bool) -> int:
    """cvt to an integer: round, then saturate to the destination's range; NaN gives 0."""
    if v.is_nan:
        return 0
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    if v.is_inf:
        return ux(lo if v.neg else hi, w)
    n = round_int(abs(v.x), v.x < 0, mode)
    return ux(clamp(-n if v.x < 0 else n, lo, hi), w)


def int_type(t: str) -> tuple[int, bool]:
    return INT_WIDTH[t[1:]], t[0] == "s"


def cvt(mods: set[str], dt: str, st: str, srcs: list[int], dst_width: int) -> int | None:
    if st in ("e4m3x2", "e5m2x2"):
        sf = E4M3 if st.startswith("e4m3") else E5M2
        out = 0
        for i in range(2):
            h = to_float(decode((srcs[0] >> (8 * i)) & 0xFF, sf), F16, mods)
            assert h is not None
            out |= h << (16 * i)
        return out
    if dt in ("e4m3x2", "e5m2x2", "f16x2", "bf16x2"):
        df = {"e4m3x2": E4M3, "e5m2x2": E5M2, "f16x2": F16, "bf16x2": BF16}[dt]
        parts: list[int] = []
        if st == "f32":  # d = {cvt(a) high, cvt(b) low}
            srcs_f = [(srcs[0], F32), (srcs[1], F32)]
        else:  # f16x2 source: upper half high
            srcs_f = [((srcs[0] >> 16) & 0xFFFF, F16), (srcs[0] & 0xFFFF, F16)]
        for bits, sf in srcs_f:
            r = to_float(decode(bits, sf), df, mods)
            assert r is not None
            parts.append(r)
        return parts[0] << df.width | parts[1]
    if dt == "tf32":
        v = decode(srcs[0], F32)
        if v.is_nan:
            return F32.qnan
        if v.is_inf:
            return srcs[0]
        r = encode(v.x, Fmt("tf32", 8, 10), "rna", neg_zero=v.neg)
        return r << 13 if not decode(r, Fmt("tf32", 8, 10)).is_inf else srcs[0] & F32.sign | F32.inf
    if dt in FLOAT_TYPES and st in FLOAT_TYPES:
        sf, df = FLOAT_TYPES[st], FLOAT_TYPES[dt]
        bits = ftz_in(srcs[0], sf) if "ftz" in mods else srcs[0]
        return to_float(decode(bits, sf), df, mods)
    if dt in FLOAT_TYPES:  # integer -> float
        w, signed = int_type(st)
        x = sx(srcs[0], w) if signed else ux(srcs[0], w)
        df = FLOAT_TYPES[dt]
        bits = encode(Fraction(x), df, rounding(mods))
        return post(bits, df, mods)
    if st in FLOAT_TYPES:  # float -> integer
        sf = FLOAT_TYPES[st]
        bits = ftz_in(srcs[0], sf) if "ftz" in mods else srcs[0]
        w, signed = int_type(dt)
        r = float_to_int(decode(bits, sf), rounding(mods, "rzi"), w, signed)
        return ux(sx(r, w) if signed else r, dst_width)
    # integer -> integer
    dw, dsigned = int_type(dt)
    sw, ssigned = int_type(st)
    x = sx(srcs[0], sw) if ssigned else ux(srcs[0], sw)
    if "sat" in mods:
        lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dsigned else (0, (1 << dw) - 1)
        x = clamp(x, lo, hi)
    x = sx(x, dw) if dsigned else ux(x, dw)
    return ux(x, dst_width)


def int_op(base: str, mods: list[str], t: str, srcs: list[int]) -> int | None:
    w, signed = int_type(t) if t[0] in "su" else (INT_WIDTH[t[1:]], False)
    val = [sx(s, w) if signed else ux(s, w) for s in srcs]
    m = set(mods)
    if base == "add":
        r = val[0] + val[1]
        return ux(clamp(r, -(1 << (w - 1)), (1 << (w - 1)) - 1) if "sat" in m else r, w)
    if base == "sub":
        r = val[0] - val[1]
        return ux(clamp(r, -(1 << (w - 1)), (1 << (w - 1)) - 1) if "sat" in m else r, w)
    if base in ("mul", "mad"):
        p = val[0] * val[1]
        if "wide" in m:
            r = p + (sx(srcs[2], 2 * w) if signed else ux(srcs[2], 2 * w)) if base == "mad" else p
            return ux(r, 2 * w)
        part = ux(p, w) if "lo" in m else p >> w
        r = part + val[2] if base == "mad" else part
        if "sat" in m:
            r = clamp(r, -(1 << 31), (1 << 31) - 1)
        return ux(r, w)
    if base in ("mul24", "mad24"):
        x, y = (sx(s, 24) if signed else ux(s, 24) for s in srcs[:2])
        p = x * y
        r = ux(p, 32) if "lo" in m else ux(p >> 16, 32)
        return ux(r + (val[2] if base == "mad24" else 0), 32)
    if base == "sad":
        return ux(abs(val[0] - val[1]) + val[2], w)
    if base in ("div", "rem"):
        if val[1] == 0:
            return None  # PTX ISA: division by zero gives an unspecified value
        q = trunc_div(val[0], val[1])
        return ux(q if base == "div" else val[0] - q * val[1], w)
    if base == "abs":
        return ux(abs(val[0]), w)
    if base == "neg":
        return ux(-val[0], w)
    if base in ("min", "max"):
        r = min(val[0], val[1]) if base == "min" else max(val[0], val[1])
        return ux(max(r, 0) if "relu" in m else r, w)
    return _int_bits(base, m, srcs, val, w, signed)


def _int_bits(base: str, m: set[str], srcs: list[int], val: list[int], w: int, signed: bool) -> int:
    """The bit-manipulating half of `int_op`."""
    if base == "and":
        return val[0] & val[1]
    if base == "or":
        return val[0] | val[1]
    if base == "xor":
        return val[0] ^ val[1]
    if base == "not":
        return ux(~val[0], w)
    if base == "cnot":
        return 1 if val[0] == 0 else 0
    if base == "shl":
        return ux(val[0] << min(srcs[1], w), w)
    if base == "shr":
        return ux(val[0] >> min(srcs[1], w), w)
    if base == "bfe":
        return bfe(ux(srcs[0], w), srcs[1], srcs[2], w, signed)
    if base == "bfi":
        return bfi(ux(srcs[0], w), ux(srcs[1], w), srcs[2], srcs[3], w)
    if base == "brev":
        return int(format(ux(srcs[0], w), f"0{w}b")[::-1], 2)
    if base == "clz":
        return w - ux(srcs[0], w).bit_length()
    if base == "popc":
        return ux(srcs[0], w).bit_count()
    if base == "bfind":
        return bfind(srcs[0], w, signed, "shiftamt" in m)
    raise KeyError(base)


def evaluate(text: str, ops: Operands, p0: bool) -> list[int | None]:
    """The expected bits of each result of one generated instruction (predicates as 0/1)."""
    if text.count(";") > 1:
        return evaluate_chain(text, ops)
    opcode, _, rest = text.rstrip(";").partition(" ")
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    args = [x.strip() for x in rest.replace("{", "").replace("}", "").split(",")]
    if base in ("set", "bmsk", "szext") or (base == "cvt" and "pack" in mods):
        return [misc_op(base, mods, [ops.reg(a) for a in args[1:] if "%p" not in a], args, p0)]
    if base == "mov":  # pack / unpack
        dsts = [x for x in args if x.startswith(("%h", "%r", "%rd")) and not x.startswith(("%rd_",))]
        srcs = [x for x in args if x not in dsts]
        total = int(mods[0][1:])
        if len(srcs) > 1:  # pack: first source is the low part
            part = total // len(srcs)
            return [sum(ops.reg(s) << (part * i) for i, s in enumerate(srcs))]
        v = ops.reg(srcs[0])
        part = total // len(dsts)
        return [(v >> (part * i)) & ((1 << part) - 1) for i in range(len(dsts))]
    ndst = 2 if "|" in rest else 1
    if "|" in rest:
        args = [x.strip() for x in rest.replace("|", ",").split(",")]
    dsts, srcs_t = args[:ndst], args[ndst:]
    if base in ("setp", "selp", "slct", "testp"):
        return setp_like(base, mods, srcs_t, ops, p0)
    srcs = [ops.reg(s) for s in srcs_t]
    t = mods[-1]
    if base == "cvt":
        width = 16 if text.split()[1].startswith("%h") else 64 if text.split()[1].startswith("%rd") else 32
        return [cvt(set(mods[:-2]), mods[-2], mods[-1], srcs, width)]
    if base == "prmt":
        return [prmt(srcs[0], srcs[1], srcs[2], mods[1] if len(mods) > 1 else "")]
    if base == "lop3":
        return [lop3(srcs[0], srcs[1], srcs[2], srcs[3])]
    if base == "shf":
        return [shf(srcs[0], srcs[1], srcs[2], mods[0] == "l", mods[1] == "wrap")]
    if base in ("dp4a", "dp2a"):
        sa, sb = mods[-2][0] == "s", mods[-1][0] == "s"
        if base == "dp4a":
            return [dp4a(srcs[0], srcs[1], srcs[2], sa, sb)]
        return [dp2a(srcs[0], srcs[1], srcs[2], sa, sb, mods[0] == "hi")]
    if t in FLOAT_TYPES:
        return [float_op(base, set(mods[:-1]), FLOAT_TYPES[t], srcs)]
    if t in ("f16x2", "bf16x2"):
        return [packed(FLOAT_TYPES[t[:-2]], srcs, base, set(mods[:-1]))]
    return [int_op(base, mods[:-1], t, srcs)]


def setp_like(base: str, mods: list[str], srcs_t: list[str], ops: Operands, p0: bool) -> list[int | None]:
    t = mods[-1]

    def pred(tok: str) -> bool:
        neg = tok.startswith("!")
        return (not p0) if neg else p0

    if base == "selp":
        return [ops.reg(srcs_t[0]) if p0 else ops.reg(srcs_t[1])]
    if base == "slct":
        ct = mods[-1]
        cbits = ops.reg(srcs_t[2])
        if ct == "f32":
            cbits = ftz_in(cbits, F32) if "ftz" in mods else cbits
            cv = decode(cbits, F32)
            take_a = not cv.is_nan and ((cv.is_inf and not cv.neg) or (not cv.is_inf and cv.x >= 0))
        else:
            take_a = sx(cbits, 32) >= 0
        return [ops.reg(srcs_t[0]) if take_a else ops.reg(srcs_t[1])]
    if base == "testp":
        f = FLOAT_TYPES[t]
        bits = ops.reg(srcs_t[0])
        return [int(testp(mods[0], decode(bits, f), bits, f))]
    cmp = mods[0]
    boolop = mods[1] if len(mods) > 2 and mods[1] in ("and", "or", "xor") else None
    a, b = ops.reg(srcs_t[0]), ops.reg(srcs_t[1])
    if t in ("f16x2", "bf16x2"):  # p from the low halves, q from the high halves
        f = FLOAT_TYPES[t[:-2]]
        lo = fcmp(cmp, decode(a & 0xFFFF, f), decode(b & 0xFFFF, f))
        hi = fcmp(cmp, decode(a >> 16 & 0xFFFF, f), decode(b >> 16 & 0xFFFF, f))
        return [int(lo), int(hi)]
    if t in FLOAT_TYPES:
        f = FLOAT_TYPES[t]
        if "ftz" in mods:
            a, b = ftz_in(a, f), ftz_in(b, f)
        r = fcmp(cmp, decode(a, f), decode(b, f))
    else:
        w, signed = int_type(t) if t[0] in "su" else (INT_WIDTH[t[1:]], False)
        x, y = (sx(a, w), sx(b, w)) if signed else (ux(a, w), ux(b, w))
        r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
             "lo": x < y, "ls": x <= y, "hi": x > y, "hs": x >= y}[cmp]  # fmt: skip
    if boolop is None:
        return [int(r), int(not r)]
    c = pred(srcs_t[2])

    def combine(u: bool) -> bool:
        return {"and": u and c, "or": u or c, "xor": u != c}[boolop]

    return [int(combine(r)), int(combine(not r))]


def evaluate_chain(text: str, ops: Operands) -> list[int | None]:
    """Instructions joined by `;` that pass the carry flag CC.CF (`.cc` writes it, `addc`/`subc`/`madc` read it).

    PTX ISA: `add.cc` sets CF to the carry out; `sub.cc` sets it to the borrow out and
    `subc` computes a - (b + CF); `madc` adds CF to c.
    """
    cf = 0
    out: list[int | None] = []
    for instr in [x.strip() for x in text.split(";") if x.strip()]:
        opcode, _, rest = instr.partition(" ")
        parts = opcode.split(".")
        base, t = parts[0], parts[-1]
        w = int(t[1:])
        srcs = [ops.reg(x) for x in [y.strip() for y in rest.split(",")][1:]]
        carry_in = cf if base.endswith("c") else 0
        name = base.removesuffix("c") if base in ("addc", "subc", "madc") else base
        if name == "add":
            r = ux(srcs[0], w) + ux(srcs[1], w) + carry_in
            new_cf = r >> w
        elif name == "sub":
            r = ux(srcs[0], w) - ux(srcs[1], w) - carry_in
            new_cf = 1 if r < 0 else 0
        else:  # mad.lo / mad.hi (madc.lo / madc.hi)
            p = ux(srcs[0], w) * ux(srcs[1], w)
            part = ux(p, w) if "lo" in parts else p >> w
            r = part + ux(srcs[2], w) + carry_in
            new_cf = r >> w
        if "cc" in parts:
            cf = new_cf
        out.append(ux(r, w))
    return out


def misc_op(base: str, mods: list[str], srcs: list[int], args: list[str], p0: bool) -> int | None:
    if base == "set":
        cmp, dt, st = mods[0], mods[-2], mods[-1]
        boolop = mods[1] if len(mods) > 3 else None
        if st in ("f16x2", "bf16x2"):
            f = FLOAT_TYPES[st[:-2]]
            out = 0
            for i in range(2):
                r = fcmp(cmp, decode(srcs[0] >> (16 * i) & 0xFFFF, f), decode(srcs[1] >> (16 * i) & 0xFFFF, f))
                one = 0xFFFF if dt[0] in "su" else encode(Fraction(1), FLOAT_TYPES[dt[:-2]], "rn")
                out |= (one if r else 0) << (16 * i)
            return out
        if st in FLOAT_TYPES:
            r = fcmp(cmp, decode(srcs[0], FLOAT_TYPES[st]), decode(srcs[1], FLOAT_TYPES[st]))
        else:
            w, signed = int_type(st)
            x, y = (sx(srcs[0], w), sx(srcs[1], w)) if signed else (ux(srcs[0], w), ux(srcs[1], w))
            r = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp]
        if boolop is not None:
            c = (not p0) if args[-1].startswith("!") else p0
            r = {"and": r and c, "or": r or c, "xor": r != c}[boolop]
        if dt == "f32":
            return 0x3F800000 if r else 0
        return 0xFFFFFFFF if r else 0
    if base == "bmsk":  # PTX ISA bmsk: a bit field of width b at position a
        pos, width = srcs
        if mods[0] == "clamp":
            pos, width = min(pos, 32), min(width, 32)
        else:
            pos, width = pos & 31, width & 31
        return ux(((1 << width) - 1) << pos, 32) if pos < 32 else 0
    if base == "szext":  # PTX ISA szext: sign- or zero-extend the low b bits of a
        n = min(srcs[1], 32) if mods[0] == "clamp" else srcs[1] & 31
        v = ux(srcs[0], n) if n else 0
        return ux(sx(v, n), 32) if mods[1] == "s32" and n else v
    # cvt.pack.sat: a and b saturated to the narrow type, a above b; for 8-bit types c's low half above
    dt = mods[2]
    w, signed = int_type(dt)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    a, b = (ux(clamp(sx(v, 32), lo, hi), w) for v in srcs[:2])
    packed_ab = a << w | b
    return packed_ab | (ux(srcs[2], 16) << 16 if w == 8 else 0)


# --- what silicon does where the PTX ISA is silent or says otherwise -----------------------
#
# Each rule below was read off the fixtures recorded on an H100 (sm_90, driver 580.159.04,
# 2026-11-25; docs/silicon.md lists them) and replaces the reference's answer only in the
# cases it names. `test_silicon_fixtures.py` checks both that the plain reference
# disagrees with silicon exactly in these classes and that the rules explain every case.

F64_DEFAULT_NAN = 0xFFF8000000000000
"""The NaN an invalid f64 operation (inf - inf, 0 * inf, 0 / 0, sqrt(-1)) returns: sign set, quiet."""

F64_NAN_ORDER = {"div": (0, 1), "fma": (1, 2, 0)}
"""f64 arithmetic returns one of its NaN operands, quieted, sign kept; with two NaN operands
`add sub mul min max` return b's, `div` a's, `fma` b's, then c's, then a's (presumably
the operand order of the SASS the JIT emitted; not inspected)."""


def quiet(bits: int, f: Fmt) -> int:
    return bits | 1 << (f.mbits - 1)


def nan_convert(bits: int, sf: Fmt, df: Fmt) -> int:
    """A NaN converted between formats keeps its sign and the top fraction bits, quieted."""
    pay = bits & ((1 << sf.mbits) - 1)
    pay = pay << (df.mbits - sf.mbits) if df.mbits >= sf.mbits else pay >> (sf.mbits - df.mbits)
    return (df.sign if bits & sf.sign else 0) | df.inf | pay | 1 << (df.mbits - 1)


def observed(text: str, ops: Operands, p0: bool, ref: list[int | None] | None = None) -> list[int | None]:
    """`evaluate` (or its result `ref`) with the observed H100 behaviour applied (see the rules above)."""
    ref = evaluate(text, ops, p0) if ref is None else ref
    if text.count(";") > 1:
        return ref
    opcode, _, rest = text.rstrip(";").partition(" ")
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    args = [x.strip() for x in rest.split(",")]
    srcs = [ops.reg(a) for a in args[1:] if a.startswith("%") and a[1] in "abcde" and "}" not in a]
    t = mods[-1] if mods else ""
    # rule: 64-bit bfe / bfi use the whole 32-bit position and length (PTX: & 0xff)
    if base == "bfe" and t.endswith("64"):
        return [bfe_unmasked(srcs[0], srcs[1], srcs[2], t[0] == "s")]
    if base == "bfi" and t == "b64":
        f = srcs[1]
        i = 0
        while i < srcs[3] and srcs[2] + i <= 63:
            f = (f & ~(1 << (srcs[2] + i))) | (((srcs[0] >> i) & 1) << (srcs[2] + i))
            i += 1
        return [f]
    # rule: integer division or remainder by zero gives all ones (PTX ISA: unspecified)
    if base in ("div", "rem") and t[0] in "su" and ux(srcs[1], int(t[1:])) == 0:
        return [(1 << int(t[1:])) - 1]
    # rule: testp.normal is true for +-0
    if base == "testp" and mods[0] == "normal":
        v = decode(srcs[0], FLOAT_TYPES[t])
        return [int(ref[0] == 1 or (v.kind == "num" and v.x == 0))]
    if base == "cvt":
        return [observed_cvt(set(mods[:-2]), mods[-2], mods[-1], srcs, ref[0])]
    if t in ("f32", "f16", "bf16", "f16x2", "bf16x2") and base in ("abs", "neg"):
        # rule: abs / neg of a NaN give the canonical NaN (not a sign-bit operation)
        f = FLOAT_TYPES[t.removesuffix("x2")]
        lanes = 2 if t.endswith("x2") else 1
        out = ref[0]
        assert out is not None
        for i in range(lanes):
            if decode((srcs[0] >> (16 * i)) & ((1 << f.width) - 1), f).is_nan:
                out = out & ~(((1 << f.width) - 1) << (16 * i)) | f.qnan << (16 * i)
        return [out]
    if t == "f64" and base in ("add", "sub", "mul", "fma", "div", "sqrt", "rcp", "abs", "neg", "min", "max"):
        order = F64_NAN_ORDER.get(base, (1, 0))
        nans = [srcs[i] for i in order if i < len(srcs) and decode(srcs[i], F64).is_nan]
        if nans and not (base in ("min", "max") and len(nans) < len(srcs)) and "approx" not in mods:
            return [quiet(nans[0], F64)]
        if not nans and ref[0] is not None and decode(ref[0], F64).is_nan and "approx" not in mods:
            return [F64_DEFAULT_NAN]  # rule: an invalid f64 operation gives the negative default NaN
    return ref


def bfe_unmasked(a: int, pos: int, ln: int, signed: bool) -> int:
    sbit = 0 if not signed or ln == 0 else (a >> min(pos + ln - 1, 63)) & 1
    d = 0
    for i in range(64):
        d |= ((a >> (pos + i)) & 1 if i < ln and pos + i <= 63 else sbit) << i
    return d


def observed_cvt(mods: set[str], dt: str, st: str, srcs: list[int], ref: int | None) -> int | None:
    if st in FLOAT_TYPES and not st.endswith("x2"):
        sf = FLOAT_TYPES[st]
        bits = srcs[0] & ((1 << sf.width) - 1)
        if decode(bits, sf).is_nan:
            if dt[0] in "su":
                # rule: NaN to a 64-bit integer, or any f64 NaN to an integer, gives the
                # destination's most negative bit pattern (1 << (w - 1)); PTX ISA: 0
                w, signed = int_type(dt)
                if w == 64 or st == "f64":
                    v = 1 << (w - 1)
                    return ux(sx(v, w), 16 if w <= 16 else w) if signed else v
                return ref
            if dt == "tf32":
                # rule: a NaN keeps its bits with the low 13 cleared, unrounded (a signalling
                # NaN whose payload lies in those bits becomes infinity)
                return bits & 0xFFFFE000
            if dt in FLOAT_TYPES and "sat" not in mods:
                df = FLOAT_TYPES[dt]
                if "ftz" in mods and st == "f32":
                    return nan_convert(F32.qnan, sf, df)  # rule: with .ftz the NaN is canonical first
                if st == "bf16" and dt == "f32":
                    return bits << 16  # rule: bf16 -> f32 is a plain shift (a signalling NaN stays signalling)
                if st == "f16" and dt == "f32":
                    return ref  # rule: f16 -> f32 gives the canonical NaN (f16 -> f64 keeps the payload)
                if st == "f64" or df.width > sf.width:
                    return nan_convert(bits, sf, df)  # rule: payload and sign kept, quieted
    return ref

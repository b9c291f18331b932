"""Value semantics of PTX instructions (xdsl_tmem/interpreter/ptx) against independent oracles:
exact rational arithmetic (`fractions.Fraction`) rounded by the IEEE 754 rounding-direction
rules, Python integers restating the PTX ISA's pseudo-code, and ml_dtypes' format tables."""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xdsl_tmem.interpreter.ptx import LANE_DTYPE, UnsupportedInstruction, decode

Lanes = np.ndarray[Any, Any]


@pytest.fixture(autouse=True)
def _quiet_fp() -> Iterator[None]:
    # numpy's FP warnings (inf - inf, 0/0, ...) say nothing about PTX semantics.
    with np.errstate(all="ignore"):
        yield


def run(op: str, mods: str, *xs: Lanes | int, **kw: Any) -> Any:
    return decode(op, tuple(mods.split(".")) if mods else (), **kw).fn(*xs)


# --------------------------------------------------------------------------------------
# the oracle: IEEE rounding of an exact rational to a binary format


@dataclass(frozen=True)
class Fmt:
    p: int  # significand bits, implicit bit included
    emin: int
    max: Fraction  # largest finite value
    inf: bool = True


F64 = Fmt(53, -1022, Fraction((2**53 - 1) * 2**971))
F32 = Fmt(24, -126, Fraction((2**24 - 1) * 2**104))
F16 = Fmt(11, -14, Fraction(65504))
BF16 = Fmt(8, -126, Fraction((2**8 - 1) * 2**120))
TF32 = Fmt(11, -126, Fraction((2**11 - 1) * 2**117))
E4M3 = Fmt(4, -6, Fraction(448), inf=False)
E5M2 = Fmt(3, -14, Fraction(57344))
E2M3 = Fmt(4, 0, Fraction(15, 2), inf=False)
E3M2 = Fmt(3, -2, Fraction(28), inf=False)
E2M1 = Fmt(2, 0, Fraction(6), inf=False)
INF = float("inf")


def ieee_round(x: Fraction, f: Fmt, mode: str) -> float | Fraction:
    """x rounded to f: .rn ties to even, .rna ties away, .rz toward 0, .rm toward -inf, .rp toward
    +inf; beyond the largest finite value: inf where the mode rounds away, else the largest."""
    if x == 0:
        return Fraction(0)
    neg = x < 0
    m = -x if neg else x
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    q = Fraction(2) ** (max(e, f.emin) - f.p + 1)
    n = m / q
    fl = math.floor(n)
    rem = n - fl
    up = {
        "rn": rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2 == 1),
        "rna": rem >= Fraction(1, 2),
        "rz": False,
        "rp": rem > 0 and not neg,
        "rm": rem > 0 and neg,
    }[mode]
    r = (fl + up) * q
    if r > f.max:
        away = mode in ("rn", "rna") or (mode == "rp" and not neg) or (mode == "rm" and neg)
        r = INF if away else f.max
    return -r if neg else r


def value(x: Any) -> float | Fraction:
    """A float lane as an exact rational (or ±inf)."""
    v = float(x)
    return v if math.isinf(v) else Fraction(v)


def same(got: Any, want: float | Fraction) -> bool:
    g = value(got)
    if want == 0:
        return g == 0
    return g == want


def f32(*xs: float | np.floating[Any]) -> Lanes:
    return np.array(xs, np.float32)


# edge values: zeros, the smallest subnormal and normal, values around 1, the largest finite,
# halfway cases, and a few irrational-looking ones
_EDGE = [
    0.0,
    -0.0,
    1.4e-45,
    -1.4e-45,
    1.1754942e-38,
    1.17549435e-38,
    1.0,
    -1.0,
    float(np.nextafter(np.float32(1), np.float32(2))),
    float(np.nextafter(np.float32(1), np.float32(0))),
    3.4028235e38,
    -3.4028235e38,
    1.5,
    0.1,
    -7.25,
    16777216.0,
    16777217.0,
    3.0,
    2.0**-24,
    1e30,
    -1e-30,
    float(np.float32(np.pi)),
]
EDGE32 = [float(np.float32(v)) for v in _EDGE]


def _fma(a: Fraction, b: Fraction, c: Fraction) -> Fraction:
    return a * b + c


def _div(a: Fraction, b: Fraction) -> Fraction:
    return a / b


EXACT: dict[str, Callable[..., Fraction]] = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "fma": _fma,
    "div": _div,
}


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_f32_directed_rounding_exhaustive_on_edges(op: str, mode: str) -> None:
    """IEEE 754 §4.3: the result is the exact result rounded in the rounding direction; every
    ordered pair of the edge set (subnormals, max, halfway cases) against Fraction arithmetic."""
    pairs = [(a, b) for a in EDGE32 for b in EDGE32 if not (op == "div" and b == 0)]
    a = f32(*(p[0] for p in pairs))
    b = f32(*(p[1] for p in pairs))
    got = run(op, f"{mode}.f32", a, b)
    assert got.dtype == np.float32
    for i, (x, y) in enumerate(pairs):
        want = ieee_round(EXACT[op](Fraction(x), Fraction(y)), F32, mode)
        assert same(got[i], want), (op, mode, x, y, float(got[i]), want)


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f32_sqrt_rcp_directed(mode: str) -> None:
    """sqrt.rnd.f32 and rcp.rnd.f32 round the exact root / reciprocal once: the result r and its
    float32 neighbours bracket the exact value as the direction says (checked with Fractions:
    r^2 against a for sqrt, r * a against 1 for rcp), incl. subnormal inputs and results."""
    x = np.array([v for v in EDGE32 if v > 0] + [2.0, 3.0, 5.0, 7.0, 1e-45, 8.5e37, 3e38], np.float32)

    def sq(r: Fraction, a: Fraction) -> Fraction:
        return r * r - a

    def rc(r: Fraction, a: Fraction) -> Fraction:
        return r * a - 1

    big = Fraction(2) ** 200  # stands in for the neighbour beyond the largest finite value
    for op, key in (("sqrt", sq), ("rcp", rc)):
        got = run(op, f"{mode}.f32", x)
        for i in range(x.size):
            a, r = Fraction(float(x[i])), got[i]
            if math.isinf(float(r)):
                continue  # rcp of a subnormal overflows; rounding of overflow is tested elsewhere
            nxt = float(np.nextafter(r, np.float32(np.inf)))
            up = big if math.isinf(nxt) else Fraction(nxt)
            down = Fraction(float(np.nextafter(r, np.float32(0))))
            fr = Fraction(float(r))
            if mode in ("rz", "rm"):
                assert key(fr, a) <= 0 < key(up, a), (op, mode, float(x[i]))
            elif mode == "rp":
                assert key(down, a) < 0 <= key(fr, a), (op, mode, float(x[i]))
            else:
                assert key((down + fr) / 2, a) <= 0 <= key((fr + up) / 2, a), (op, mode, float(x[i]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=96, max_size=96),
    st.sampled_from(["rn", "rz", "rm", "rp"]),
)
def test_f32_fma_random(xs: list[float], mode: str) -> None:
    """fma.rnd.f32: a * b + c computed "in infinite precision" and rounded once."""
    a, b, c = f32(*xs[:32]), f32(*xs[32:64]), f32(*xs[64:])
    got = run("fma", f"{mode}.f32", a, b, c)
    for i in range(32):
        want = ieee_round(EXACT["fma"](Fraction(xs[i]), Fraction(xs[32 + i]), Fraction(xs[64 + i])), F32, mode)
        assert same(got[i], want), (xs[i], xs[32 + i], xs[64 + i], mode)


def test_f32_fma_double_rounding_case() -> None:
    """fma rounds once: a*b + c = 1 + 2^-24 + 2^-70 lies just above the float32 halfway point
    1 + 2^-24, so .rn gives 1 + 2^-23, although the float64 sum (1 + 2^-24 exactly) would round
    to even (1.0) in a second rounding."""
    a = f32(1 - 2.0**-23)
    b = f32(-(1 + 2.0**-23) * 2.0**-24)  # a*b = -2^-24 + 2^-70
    c = f32(1 + 2.0**-23)
    exact = Fraction(float(a[0])) * Fraction(float(b[0])) + Fraction(float(c[0]))
    assert exact == 1 + Fraction(1, 2**24) + Fraction(1, 2**70)
    for mode in ("rn", "rz", "rm", "rp"):
        got = run("fma", f"{mode}.f32", a, b, c)
        assert same(got[0], ieee_round(exact, F32, mode)), mode
    assert run("fma", "rn.f32", a, b, c)[0] == np.float32(1 + 2.0**-23)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(min_value=-1e30, max_value=1e30, allow_nan=False), min_size=96, max_size=96),
    st.sampled_from(["rn", "rz", "rm", "rp"]),
)
def test_f64_rounding_random(xs: list[float], mode: str) -> None:
    """add/sub/mul/fma/div/sqrt .f64 in every rounding mode, against Fraction arithmetic (for sqrt:
    the rounded value r is checked by the bracketing r^2 vs a of the directed modes)."""
    a, b, c = (np.array(xs[i : i + 32], np.float64) for i in (0, 32, 64))
    for op in ("add", "sub", "mul", "fma", "div"):
        n = 3 if op == "fma" else 2
        got = run(op, f"{mode}.f64", *(a, b, c)[:n])
        for i in range(32):
            args = [Fraction(xs[i]), Fraction(xs[32 + i]), Fraction(xs[64 + i])][:n]
            if op == "div" and args[1] == 0:
                continue
            if op == "fma" and 0 < abs(args[0] * args[1]) < Fraction(2) ** -960:
                continue  # Dekker's product underflows: a documented limit of fma.f64 (rounding.py)
            assert same(got[i], ieee_round(EXACT[op](*args), F64, mode)), (op, mode, *args)
    r = run("sqrt", f"{mode}.f64", np.abs(a))
    for i in range(32):
        x, y = Fraction(abs(xs[i])), Fraction(float(r[i]))
        if x == 0:
            assert y == 0
            continue
        up = Fraction(float(np.nextafter(r[i], np.inf)))
        down = Fraction(float(np.nextafter(r[i], -np.inf)))
        if mode == "rz" or mode == "rm":
            assert y * y <= x < up * up
        elif mode == "rp":
            assert down * down < x <= y * y
        else:
            assert ((down + y) / 2) ** 2 <= x <= ((y + up) / 2) ** 2


def test_f64_directed_overflow() -> None:
    """.rz/.rm/.rp beyond the largest finite value: the largest finite value where the mode rounds
    toward zero, infinity where it rounds away (IEEE 754 §7.4)."""
    big = np.array([1.7e308, -1.7e308], np.float64)
    assert list(run("add", "rz.f64", big, big)) == [np.finfo(np.float64).max, -np.finfo(np.float64).max]
    assert list(run("add", "rm.f64", big, big)) == [np.finfo(np.float64).max, -np.inf]
    assert list(run("add", "rp.f64", big, big)) == [np.inf, -np.finfo(np.float64).max]
    assert list(run("add", "rn.f64", big, big)) == [np.inf, -np.inf]


@pytest.mark.parametrize(("ty", "fmt"), [("f16", F16), ("bf16", BF16)])
def test_half_types_rn(ty: str, fmt: Fmt) -> None:
    """add/sub/mul/fma .rn on f16 and bf16 (and their x2 packs, element-wise), every pair of a grid
    of values incl. subnormals, against exact rounding."""
    dt = LANE_DTYPE[ty]
    grid = np.array([0, 1, -1.5, 3.25, 1e-5, 6e-8, 60000, 1.0078125, 0.333, -(2.0**-14), 255.5, 1e30], np.float32)
    grid = grid.astype(dt)
    grid = grid[np.isfinite(grid)]
    even = grid.size**2 // 2 * 2  # x2 packs take pairs
    a = np.repeat(grid, grid.size)[:even]
    b = np.tile(grid, grid.size)[:even]
    for op in ("add", "sub", "mul"):
        got = run(op, f"rn.{ty}", a, b)
        packed = run(op, f"rn.{ty}x2", a.view(np.uint16).view(np.uint32), b.view(np.uint16).view(np.uint32))
        assert np.array_equal(packed.view(np.uint16), got.view(np.uint16))
        for i in range(a.size):
            want = ieee_round(EXACT[op](Fraction(float(a[i])), Fraction(float(b[i]))), fmt, "rn")
            assert same(got[i], want), (op, ty, float(a[i]), float(b[i]))
    got = run("fma", f"rn.{ty}", a, b, b[::-1].copy())
    for i in range(a.size):
        want = ieee_round(Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(b[::-1][i])), fmt, "rn")
        assert same(got[i], want)


def test_ftz_sat_relu_rules() -> None:
    """.ftz: "subnormal inputs and results are flushed to sign-preserving zero"; .sat: "clamps the
    result to [0.0, 1.0]; NaN results are flushed to +0.0"; .relu: negative results become 0."""
    tiny = np.float32(1e-40)
    assert np.signbit(run("mul", "rn.ftz.f32", f32(-1e-40), f32(1.0))[0])
    assert run("add", "rn.f32", np.array([tiny]), f32(0))[0] == tiny
    assert run("mul", "rn.ftz.f32", f32(1e-20), f32(1e-20))[0] == 0  # 1e-40 result flushed
    assert run("mul", "rn.f32", f32(1e-20), f32(1e-20))[0] != 0
    sat = run("add", "rn.sat.f32", f32(0.75, -3, np.nan, np.inf), f32(0.5, 1, 0, 0))
    assert sat.tolist() == [1.0, 0.0, 0.0, 1.0]
    assert not np.signbit(sat[2])
    h = np.array([-2.0, 3.0, np.nan], np.float16)
    relu = run("fma", "rn.relu.f16", h, np.ones(3, np.float16), np.zeros(3, np.float16))
    assert relu[0] == 0
    assert relu[1] == 3
    assert relu[2].view(np.uint16) == 0x7FFF


def test_nan_results_are_canonical() -> None:
    """A NaN result of an arithmetic instruction is the canonical NaN 0x7fffffff (f32), whatever
    the input payload (unverified on silicon; the fixtures decide)."""
    payload = np.array([0xFFC00123], np.uint32).view(np.float32)
    assert run("add", "rn.f32", payload, f32(1)).view(np.uint32)[0] == 0x7FFFFFFF
    assert run("mul", "rz.f32", f32(np.inf), f32(0)).view(np.uint32)[0] == 0x7FFFFFFF


def test_min_max_rules() -> None:
    """min/max: "if one input is NaN the result is the other; if both, canonical NaN"; -0.0 < +0.0;
    .NaN: "if either input is NaN, the result is canonical NaN"; .xorsign.abs: the magnitudes
    compared, the sign of the result is the XOR of the inputs' signs."""
    nan = np.float32(np.nan)
    a = f32(1, nan, nan, -0.0, 0.0, -3)
    b = f32(2, 5, nan, 0.0, -0.0, 2)
    mn, mx = run("min", "f32", a, b), run("max", "f32", a, b)
    assert mn[:2].tolist() == [1, 5]
    assert mx[:2].tolist() == [2, 5]
    assert mn.view(np.uint32)[2] == 0x7FFFFFFF
    assert np.signbit(mn[3])
    assert np.signbit(mn[4])
    assert not np.signbit(mx[3])
    assert not np.signbit(mx[4])
    assert run("min", "NaN.f32", a, b).view(np.uint32)[1] == 0x7FFFFFFF
    xs = run("max", "xorsign.abs.f32", a[5:], b[5:])
    assert xs[0] == -3  # |-3| > |2|, sign(-3) ^ sign(2) = negative
    three = run("max", "f32", f32(1), f32(7), f32(3))
    assert three[0] == 7


@pytest.mark.parametrize(
    "cmp", ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
)
def test_setp_float_ordered_and_unordered(cmp: str) -> None:
    """setp: ordered comparisons are false if either operand is NaN, the unordered (…u) ones true;
    num: both are numbers; nan: either is NaN. p|q gives q = !p; .and/.or/.xor combine with c."""
    vals = [0.0, -0.0, 1.0, -1.0, np.inf, np.nan]
    pairs = [(x, y) for x in vals for y in vals]
    a, b = f32(*(p[0] for p in pairs)), f32(*(p[1] for p in pairs))
    p, q = run("setp", f"{cmp}.f32", a, b, pair=True)
    ops: dict[str, Callable[[float, float], bool]] = {
        "eq": lambda x, y: x == y,
        "ne": lambda x, y: x != y,
        "lt": lambda x, y: x < y,
        "le": lambda x, y: x <= y,
        "gt": lambda x, y: x > y,
        "ge": lambda x, y: x >= y,
    }
    for i, (x, y) in enumerate(pairs):
        unordered = math.isnan(x) or math.isnan(y)
        if cmp == "num":
            want = not unordered
        elif cmp == "nan":
            want = unordered
        elif cmp.endswith("u"):
            want = unordered or ops[cmp[:-1]](x, y)
        else:
            want = not unordered and ops[cmp](x, y)
        assert p[i] == want, (cmp, x, y)
        assert q[i] == (not want), (cmp, x, y)
    c = np.array([True, False] * (len(pairs) // 2))
    assert np.array_equal(run("setp", f"{cmp}.and.f32", a, b, c), p & c)
    p2, q2 = run("setp", f"{cmp}.xor.f32", a, b, c, pair=True)
    assert np.array_equal(p2, p ^ c)
    assert np.array_equal(q2, ~p ^ c)


def test_setp_integer_and_f16x2() -> None:
    """Integer setp: lt/le/gt/ge signed on .s types; lo/ls/hi/hs unsigned. f16x2: p from the lower
    halves, q from the upper."""
    a = np.array([-1, 5], np.int32)
    b = np.array([1, 5], np.int32)
    assert run("setp", "lt.s32", a, b).tolist() == [True, False]
    assert run("setp", "lo.u32", a.view(np.uint32), b.view(np.uint32)).tolist() == [False, False]
    assert run("setp", "hs.u32", a.view(np.uint32), b.view(np.uint32)).tolist() == [True, True]
    h = np.array([1, 9, 4, 2], np.float16).view(np.uint32)
    k = np.array([2, 3, 4, 5], np.float16).view(np.uint32)
    p, q = run("setp", "lt.f16x2", h, k)
    assert p.tolist() == [True, False]
    assert q.tolist() == [False, True]


def test_selp_slct() -> None:
    """selp: d = c ? a : b; slct: d = (c >= 0) ? a : b (-0.0 >= 0)."""
    a, b = np.array([1, 2, 3], np.int32), np.array([7, 8, 9], np.int32)
    assert run("selp", "s32", a, b, np.array([True, False, True])).tolist() == [1, 8, 3]
    assert run("slct", "s32.s32", a, b, np.array([0, -1, 5], np.int32)).tolist() == [1, 8, 3]
    assert run("slct", "s32.f32", a, b, f32(-0.0, -1e-40, 1)).tolist() == [1, 8, 3]
    assert run("slct", "ftz.s32.f32", a, b, f32(-0.0, -1e-40, 1)).tolist() == [1, 2, 3]


def test_approx_functions_special_values() -> None:
    """ex2(-inf) = +0, ex2(+inf) = +inf; lg2(0) = -inf, lg2(x < 0) = NaN; rsqrt(+0) = +inf,
    rsqrt(-0) = -inf; sin(inf) = NaN; div.approx.f32: 2^126 < |b| < 2^128 gives 0 (NaN if a is inf)."""
    ex = run("ex2", "approx.f32", f32(-np.inf, np.inf, 3))
    assert ex.tolist() == [0.0, np.inf, 8.0]
    lg = run("lg2", "approx.f32", f32(0, -1, 8))
    assert lg[0] == -np.inf
    assert np.isnan(lg[1])
    assert lg[2] == 3
    rs = run("rsqrt", "approx.f32", f32(0.0, -0.0, 4))
    assert rs.tolist() == [np.inf, -np.inf, 0.5]
    assert np.isnan(run("sin", "approx.f32", f32(np.inf))[0])
    d = run("div", "approx.f32", f32(1, np.inf, 3), f32(2.0**127, 2.0**127, 2))
    assert d[0] == 0
    assert np.isnan(d[1])
    assert d[2] == 1.5
    # "d = a * (1/b)": two roundings; a subnormal b is scaled first (H100: 1e-8 / 2^-149 is
    # RN(1e-8 * 2^149), not inf)
    seventh = Fraction(float(np.float32(1 / 7)))  # RN(1/7)
    assert Fraction(float(run("div", "approx.f32", f32(3), f32(7))[0])) == ieee_round(3 * seventh, F32, "rn")
    assert run("div", "approx.f32", f32(3), f32(7))[0] != np.float32(3 / 7)  # not the rounded quotient
    tiny = run("div", "approx.f32", f32(1e-8), np.array([1], np.uint32).view(np.float32))
    assert tiny.view(np.uint32)[0] == 0x7CABCC77
    th = run("tanh", "approx.f16x2", np.array([0.5, -20], np.float16).view(np.uint32))
    assert th.view(np.float16).tolist() == [np.float16(math.tanh(0.5)), -1.0]


def test_abs_neg_copysign_testp() -> None:
    """abs/neg act on the sign bit (a NaN gives the canonical NaN on H100); copysign d, a, b: "copy
    sign of a into value of b" (a bit operation, NaN payloads kept); testp (H100: .normal is true
    for +-0, docs/silicon.md)."""
    x = f32(-2, 0.0, 1e-40, np.inf, np.nan)
    assert run("abs", "f32", x)[0] == 2
    assert run("neg", "f32", x)[1].view(np.uint32) == 0x80000000
    assert run("copysign", "f32", f32(-1, 1), f32(3, -4)).tolist() == [-3, 4]
    assert run("testp", "subnormal.f32", x).tolist() == [False, False, True, False, False]
    assert run("testp", "normal.f32", x).tolist() == [True, True, False, False, False]
    assert run("abs", "f32", f32(np.nan)).view(np.uint32)[0] == 0x7FFFFFFF
    payload = np.array([0xFFC00123], np.uint32).view(np.float32)
    assert run("copysign", "f32", f32(1), payload).view(np.uint32)[0] == 0x7FC00123
    assert run("testp", "notanumber.f32", x).tolist() == [False, False, False, False, True]
    assert run("testp", "finite.f32", x).tolist() == [True, True, True, False, False]


# --------------------------------------------------------------------------------------
# cvt


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@pytest.mark.parametrize(("dst", "fmt"), [("f16", F16), ("bf16", BF16)])
def test_cvt_f32_to_half_directed(dst: str, fmt: Fmt, mode: str) -> None:
    """cvt.rnd.{f16,bf16}.f32: one rounding of the f32 value, incl. subnormal results, overflow
    (the largest finite value under .rz, or toward zero), halfway cases."""
    rng = np.random.default_rng(7)
    bits = np.concatenate(
        [
            rng.integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32),
            # f16 halfway points and their neighbours
            (np.arange(-3, 4, dtype=np.int64) + (np.float32(1 + 2.0**-11).view(np.uint32))).astype(np.uint32),
            np.array([0x477FF000, 0x477FEFFF, 0x477FF001, 0x7F7FFFFF, 0x33000000, 0x33000001, 0x7F800000], np.uint32),
        ]
    )
    x = bits.view(np.float32)
    x = x[np.isfinite(x)]
    got = run("cvt", f"{mode}.{dst}.f32", x)
    assert got.dtype == LANE_DTYPE[dst]
    for i in range(x.size):
        assert same(got[i], ieee_round(Fraction(float(x[i])), fmt, mode)), (dst, mode, float(x[i]), float(got[i]))


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_cvt_f64_to_f32_and_int_to_float(mode: str) -> None:
    """cvt.rnd.f32.f64 and cvt.rnd.{f32,f64}.{s64,u64,s32}: the integer or double rounded once."""
    rng = np.random.default_rng(3)
    d = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-45, 39, 300), [1e39, -1e39, 2.0**-149 * 0.75]])
    got = run("cvt", f"{mode}.f32.f64", d)
    for i in range(d.size):
        assert same(got[i], ieee_round(Fraction(float(d[i])), F32, mode))
    ints = np.concatenate(
        [
            rng.integers(-(2**63), 2**63 - 1, 300, dtype=np.int64),
            [2**63 - 1, -(2**63), 2**53 + 1, 2**24 + 1, -(2**24) - 1],
        ]
    ).astype(np.int64)
    for dst, fmt in (("f32", F32), ("f64", F64), ("f16", F16)):
        got = run("cvt", f"{mode}.{dst}.s64", ints)
        for i in range(ints.size):
            assert same(got[i], ieee_round(Fraction(int(ints[i])), fmt, mode)), (dst, int(ints[i]))
        u = ints.view(np.uint64)
        got = run("cvt", f"{mode}.{dst}.u64", u)
        for i in range(u.size):
            assert same(got[i], ieee_round(Fraction(int(u[i])), fmt, mode)), (dst, int(u[i]))


@pytest.mark.parametrize("ty", ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"])
def test_cvt_float_to_int(ty: str) -> None:
    """cvt.irnd.ity.fty: rounded to an integer by .rni (nearest even) .rzi .rmi .rpi; the result
    saturates to the type's range (float-to-integer conversions always saturate). NaN: the ISA
    says 0, which H100 gives for f32 sources into <= 32 bits; an f64 NaN, or a NaN into 64 bits,
    gives the destination's sign bit alone (docs/silicon.md, H100 2026-11-25)."""
    info = np.iinfo(LANE_DTYPE[ty])
    x = np.array(
        [np.nan, np.inf, -np.inf, 2.5, -2.5, 3.5, -0.7, 0.7, 1e30, -1e30, 2.0**63, 2.0**64, 127.5, -128.5, 1e-40]
    )
    rounders = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}
    for rnd, fn in rounders.items():
        for src in ("f64", "f32"):
            got = run("cvt", f"{rnd}.{ty}.{src}", x.astype(LANE_DTYPE[src]))
            for i, v in enumerate(x.astype(LANE_DTYPE[src]).tolist()):
                if math.isnan(v):
                    width = LANE_DTYPE[ty].itemsize * 8
                    sign_bit = 1 << (width - 1)
                    if src == "f32" and width <= 32:
                        want = 0
                    else:
                        want = -sign_bit if ty[0] == "s" else sign_bit
                elif math.isinf(v):
                    want = info.max if v > 0 else info.min
                else:
                    want = min(max(fn(Fraction(v)), info.min), info.max)
                assert int(got[i]) == want, (rnd, ty, src, v)
    assert run("cvt", f"rpi.ftz.{ty}.f32", f32(1e-40))[0] == 0  # flushed before rounding


def test_cvt_integer_sat_and_wrap() -> None:
    """Integer-to-integer cvt truncates or sign/zero-extends; .sat clamps to the destination range."""
    a = np.array([-200, 200, 100, -1], np.int32)
    assert run("cvt", "s8.s32", a).tolist() == [56, -56, 100, -1]
    assert run("cvt", "sat.s8.s32", a).tolist() == [-128, 127, 100, -1]
    assert run("cvt", "sat.u8.s32", a).tolist() == [0, 200, 100, 0]
    assert run("cvt", "sat.u8.s32", np.array([300], np.int32)).tolist() == [255]
    assert run("cvt", "u32.s8", np.array([-1], np.int8)).tolist() == [0xFFFFFFFF]
    assert run("cvt", "sat.s32.u64", np.array([2**40, 5], np.uint64)).tolist() == [2**31 - 1, 5]


@pytest.mark.parametrize(
    ("dst", "fmt", "mldt"),
    [
        ("e4m3x2", E4M3, ml_dtypes.float8_e4m3fn),
        ("e5m2x2", E5M2, ml_dtypes.float8_e5m2),
        ("e2m3x2", E2M3, ml_dtypes.float6_e2m3fn),
        ("e3m2x2", E3M2, ml_dtypes.float6_e3m2fn),
        ("e2m1x2", E2M1, ml_dtypes.float4_e2m1fn),
    ],
)
def test_cvt_narrow_pairs(dst: str, fmt: Fmt, mldt: Any) -> None:
    """cvt.rn.satfinite.{e4m3x2,...}.f32 d, a, b: "a converted into the upper half of d, b into the
    lower"; .satfinite: beyond the largest finite value (infinity too) -> the signed largest finite
    value; values rounded to nearest even. Each result decoded through ml_dtypes' tables."""
    rng = np.random.default_rng(11)
    mx = float(fmt.max)
    x = np.concatenate(
        [rng.standard_normal(400) * mx / 3, [0, -0.0, np.inf, -np.inf, mx * 1.2, -mx * 1.01, mx, 1e-9, 0.3]]
    ).astype(np.float32)
    a, b = x, x[::-1].copy()
    got = run("cvt", f"rn.satfinite.{dst}.f32", a, b)
    if dst == "e2m1x2":
        hi, lo = got >> 4, got & 0xF
    else:
        lo, hi = got.view(np.uint8).reshape(-1, 2).T
    for i in range(x.size):
        for bits, v in ((hi[i], a[i]), (lo[i], b[i])):
            dec = float(np.array([bits], np.uint8).view(mldt)[0])
            ex = Fraction(float(np.clip(v, -mx, mx)))
            assert same(dec, ieee_round(ex, fmt, "rn")), (dst, float(v), dec)
    nan = run("cvt", f"rn.satfinite.{dst}.f32", f32(np.nan), f32(1.0))
    if dst in ("e4m3x2", "e5m2x2"):
        assert np.isnan(float(np.array([nan.view(np.uint8)[1]], np.uint8).view(mldt)[0]))
    relu = run("cvt", f"rn.satfinite.relu.{dst}.f32", f32(-3.0), f32(1.0))
    assert (relu >> 8 if dst != "e2m1x2" else relu >> 4)[0] == 0


@pytest.mark.parametrize("src", ["e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2"])
def test_cvt_unpack_narrow_exhaustive(src: str) -> None:
    """cvt.rn.f16x2.{e4m3x2,...} d, a: every element value (exhaustive) widened exactly into f16,
    the lower byte (nibble for e2m1x2) into the lower half."""
    mldt = {
        "e4m3x2": ml_dtypes.float8_e4m3fn,
        "e5m2x2": ml_dtypes.float8_e5m2,
        "e2m3x2": ml_dtypes.float6_e2m3fn,
        "e3m2x2": ml_dtypes.float6_e3m2fn,
        "e2m1x2": ml_dtypes.float4_e2m1fn,
    }[src]
    n = {"e4m3x2": 256, "e5m2x2": 256, "e2m3x2": 64, "e3m2x2": 64, "e2m1x2": 16}[src]
    codes = np.arange(n, dtype=np.uint8)
    if src == "e2m1x2":
        packed = (codes[::-1] << 4) | codes
    else:
        packed = np.stack([codes, codes[::-1]], axis=1).reshape(-1).view(np.uint16)
    got = run("cvt", f"rn.f16x2.{src}", packed).view(np.float16).reshape(-1, 2)
    for i in range(n):
        for half, code in ((0, codes[i]), (1, codes[::-1][i])):
            want = float(np.array([code], np.uint8).view(mldt)[0])
            g = float(got[i, half])
            assert (math.isnan(g) and math.isnan(want)) or (g == want and math.copysign(1, g) == math.copysign(1, want))


@pytest.mark.parametrize("mode", ["rna", "rn", "rz"])
def test_cvt_tf32(mode: str) -> None:
    """cvt.{rna,rn,rz}.tf32.f32: f32 rounded to 10 fraction bits (.rna: ties away from zero), kept in
    a .b32 whose 13 low bits are zero; NaN stays NaN."""
    rng = np.random.default_rng(5)
    bits = np.concatenate([rng.integers(0, 2**32, 1500, dtype=np.uint64).astype(np.uint32), [0x3F801000, 0xBF803000]])
    x = bits.astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    got = run("cvt", f"{mode}.tf32.f32", x)
    assert not np.any(got & 0x1FFF)
    for i in range(x.size):
        assert same(got[i : i + 1].view(np.float32)[0], ieee_round(Fraction(float(x[i])), TF32, mode))
    assert np.isnan(run("cvt", f"{mode}.tf32.f32", f32(np.nan)).view(np.float32)[0])


def test_cvt_f16x2_pack_order_and_relu() -> None:
    """cvt.rn.f16x2.f32 d, a, b: "the value converted from a is stored in the upper half of d and
    the value converted from b in the lower half"; .relu clamps negatives to 0."""
    d = run("cvt", "rn.f16x2.f32", f32(1.0), f32(2.0))
    assert d[0] == (0x3C00 << 16) | 0x4000
    r = run("cvt", "rn.relu.bf16x2.f32", f32(-1.0), f32(3.0)).view(ml_dtypes.bfloat16)
    assert float(r[1]) == 0
    assert float(r[0]) == 3


def test_mov_pack_unpack() -> None:
    """mov.b64 d, {a, b}: a is the low half; mov.b32 {a, b}, d splits it again."""
    lo, hi = np.array([0x11111111], np.uint32), np.array([0x22222222], np.uint32)
    d = run("mov", "b64", lo, hi, pack=2)
    assert d.tolist() == [0x2222222211111111]
    h = run("mov", "b32", np.array([0xAABBCCDD], np.uint32), unpack=4)
    assert [int(x[0]) for x in h] == [0xDD, 0xCC, 0xBB, 0xAA]
    p = run("mov", "b32", np.array([0x1234], np.uint16), np.array([0xABCD], np.uint16), pack=2)
    assert p.tolist() == [0xABCD1234]


# --------------------------------------------------------------------------------------
# integers

U32 = st.integers(0, 2**32 - 1)
U64 = st.integers(0, 2**64 - 1)


def s(v: int, w: int) -> int:
    """The w-bit pattern v read as a signed integer."""
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def u32s(xs: list[int]) -> Lanes:
    return np.array(xs, np.uint64).astype(np.uint32)


@settings(max_examples=40, deadline=None)
@given(st.lists(U64, min_size=64, max_size=64))
def test_mul_hi_wide_mad(xs: list[int]) -> None:
    """mul.hi: the upper half of the 2n-bit product; .wide: the whole 2n-bit product; mad.lo/hi add c."""
    a64, b64 = np.array(xs[:32], np.uint64), np.array(xs[32:], np.uint64)
    hi_u = run("mul", "hi.u64", a64, b64)
    hi_s = run("mul", "hi.s64", a64.view(np.int64), b64.view(np.int64))
    for i in range(32):
        x, y = xs[i], xs[32 + i]
        assert int(hi_u[i]) == (x * y) >> 64
        assert int(hi_s[i]) == (s(x, 64) * s(y, 64)) >> 64
    a32, b32 = u32s([x & 0xFFFFFFFF for x in xs[:32]]), u32s([x >> 32 for x in xs[32:]])
    wide = run("mul", "wide.s32", a32.view(np.int32), b32.view(np.int32))
    hi = run("mul", "hi.u32", a32, b32)
    mad = run("mad", "hi.u32", a32, b32, a32)
    sat = run("mad", "hi.sat.s32", a32.view(np.int32), b32.view(np.int32), np.full(32, 2**31 - 1, np.int32))
    for i in range(32):
        x, y = int(a32[i]), int(b32[i])
        assert int(wide[i]) == s(x, 32) * s(y, 32)
        assert int(hi[i]) == (x * y) >> 32
        assert int(mad[i]) == (((x * y) >> 32) + x) & 0xFFFFFFFF
        assert int(sat[i]) == min(max(((s(x, 32) * s(y, 32)) >> 32) + 2**31 - 1, -(2**31)), 2**31 - 1)


@settings(max_examples=30, deadline=None)
@given(st.lists(U32, min_size=64, max_size=64))
def test_mul24_sad_div_rem(xs: list[int]) -> None:
    """mul24.lo/.hi: the low 32 / the high 32 bits of the 48-bit product of the (signed) low 24
    bits; sad: c + |a - b|; div truncates toward zero, rem takes the dividend's sign."""
    a, b = u32s(xs[:32]), u32s(xs[32:])
    lo = run("mul24", "lo.s32", a.view(np.int32), b.view(np.int32))
    hi = run("mul24", "hi.u32", a, b)
    sad = run("sad", "s32", a.view(np.int32), b.view(np.int32), a.view(np.int32))
    bs = np.where(b == 0, 1, b).astype(np.uint32)
    dv = run("div", "s32", a.view(np.int32), bs.view(np.int32))
    rm = run("rem", "s32", a.view(np.int32), bs.view(np.int32))
    for i in range(32):
        x, y = int(a[i]), int(b[i])
        assert int(lo[i]) == s(s(x, 24) * s(y, 24), 32)
        assert int(hi[i]) == ((x & 0xFFFFFF) * (y & 0xFFFFFF)) >> 16
        assert int(sad[i]) == s(s(x, 32) + abs(s(x, 32) - s(y, 32)), 32)
        n, d = s(x, 32), s(int(bs[i]), 32)
        q = abs(n) // abs(d) * (1 if (n < 0) == (d < 0) else -1)
        assert int(dv[i]) == s(q, 32)
        assert int(rm[i]) == s(n - q * d, 32)
    assert run("div", "s32", np.array([-(2**31)], np.int32), np.array([-1], np.int32))[0] == -(2**31)


@settings(max_examples=30, deadline=None)
@given(st.lists(U32, min_size=128, max_size=128))
def test_carry_chain_128bit(xs: list[int]) -> None:
    """add.cc / addc.cc / addc and sub.cc / subc.cc / subc chain 32-bit limbs into 128-bit
    arithmetic (subc: d = a - (b + CC.CF), the flag a borrow); mad.lo.cc + madc.hi likewise."""
    a = [u32s(xs[i * 32 : (i + 1) * 32]) for i in range(2)]
    b = [u32s(xs[64 + i * 32 : 64 + (i + 1) * 32]) for i in range(2)]
    A = [a[0], a[1], b[0], b[1]]
    B = [b[1], a[0], a[1], b[0]]
    d0, c = run("add", "cc.u32", A[0], B[0])
    d1, c = run("addc", "cc.u32", A[1], B[1], c)
    d2, c = run("addc", "cc.u32", A[2], B[2], c)
    d3 = run("addc", "u32", A[3], B[3], c)
    e0, c = run("sub", "cc.u32", A[0], B[0])
    e1, c = run("subc", "cc.u32", A[1], B[1], c)
    e2, c = run("subc", "cc.u32", A[2], B[2], c)
    e3 = run("subc", "u32", A[3], B[3], c)
    for i in range(32):
        x = sum(int(A[k][i]) << (32 * k) for k in range(4))
        y = sum(int(B[k][i]) << (32 * k) for k in range(4))
        got = sum(int(d[i]) << (32 * k) for k, d in enumerate((d0, d1, d2, d3)))
        assert got == (x + y) % 2**128
        got = sum(int(d[i]) << (32 * k) for k, d in enumerate((e0, e1, e2, e3)))
        assert got == (x - y) % 2**128
    # 32x32 -> 64 product plus 64-bit addend by mad.lo.cc / madc.hi
    lo, c = run("mad", "lo.cc.u32", A[0], B[0], A[1])
    hi = run("madc", "hi.u32", A[0], B[0], B[1], c)
    for i in range(32):
        want = int(A[0][i]) * int(B[0][i]) + (int(B[1][i]) << 32 | int(A[1][i]))
        assert (int(hi[i]) << 32 | int(lo[i])) == want % 2**64


def _ref_bfe(a: int, pos: int, ln: int, w: int, signed: bool) -> int:
    """PTX ISA bfe pseudo-code, bit by bit (pos = b & 0xff, len = c & 0xff; H100 takes the whole
    32-bit values in the 64-bit forms, docs/silicon.md)."""
    if w == 32:
        pos, ln = pos & 0xFF, ln & 0xFF
    msb = w - 1
    sbit = ((a >> min(pos + ln - 1, msb)) & 1) if (signed and ln != 0) else 0
    d = 0
    for i in range(w):
        bit = ((a >> (pos + i)) & 1) if (i < ln and pos + i <= msb) else sbit
        d |= bit << i
    return d


def _ref_bfi(a: int, b: int, pos: int, ln: int, w: int) -> int:
    """PTX ISA bfi pseudo-code: f = b; for (i = 0; i < len && pos+i <= msb; i++) f[pos+i] = a[i]
    (the 8-bit fields of the ISA in the 32-bit form; H100 takes the whole values for .b64)."""
    if w == 32:
        pos, ln = pos & 0xFF, ln & 0xFF
    f = b
    i = 0
    while i < ln and pos + i <= w - 1:
        f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
        i += 1
    return f


@settings(max_examples=30, deadline=None)
@given(st.lists(U64, min_size=32, max_size=32), st.lists(st.integers(0, 300), min_size=64, max_size=64))
def test_bfe_bfi(xs: list[int], ps: list[int]) -> None:
    """bfe and bfi against the ISA's pseudo-code, positions and lengths up to 300 (& 0xff)."""
    pos, ln = u32s(ps[:32]), u32s(ps[32:])
    for ty, w in (("u32", 32), ("s32", 32), ("u64", 64), ("s64", 64)):
        a = np.array([x & ((1 << w) - 1) for x in xs], np.uint64).astype(LANE_DTYPE[f"u{w}"])
        got = run("bfe", ty, a.view(LANE_DTYPE[ty]), pos, ln).view(LANE_DTYPE[f"u{w}"])
        for i in range(32):
            assert int(got[i]) == _ref_bfe(int(a[i]), ps[i], ps[32 + i], w, ty[0] == "s"), (ty, ps[i], ps[32 + i])
        if ty[0] == "u":
            bfi = run("bfi", f"b{w}", a, a[::-1].copy(), pos, ln)
            for i in range(32):
                assert int(bfi[i]) == _ref_bfi(int(a[i]), int(a[::-1][i]), ps[i], ps[32 + i], w)


@settings(max_examples=30, deadline=None)
@given(st.lists(U64, min_size=32, max_size=32))
def test_bit_counts(xs: list[int]) -> None:
    """popc, clz, brev, bfind (position of the most significant non-sign bit, .shiftamt: its left
    shift amount, 0xffffffff if none)."""
    xs = [*xs[:28], 0, 1, 2**64 - 1, 2**63]
    a64 = np.array(xs, np.uint64)
    a32 = a64.astype(np.uint32)
    for w, a in ((32, a32), (64, a64)):
        vals = [int(v) for v in a]
        assert run("popc", f"b{w}", a).tolist() == [bin(v).count("1") for v in vals]
        assert run("clz", f"b{w}", a).tolist() == [w - v.bit_length() for v in vals]
        assert run("brev", f"b{w}", a).tolist() == [int(f"{v:0{w}b}"[::-1], 2) for v in vals]
        su = run("bfind", f"u{w}", a).tolist()
        ss = run("bfind", f"s{w}", a.view(LANE_DTYPE[f"s{w}"])).tolist()
        sh = run("bfind", f"shiftamt.u{w}", a).tolist()
        for i, v in enumerate(vals):
            assert su[i] == (v.bit_length() - 1 if v else 0xFFFFFFFF)
            sv = s(v, w)
            m = ~sv if sv < 0 else sv
            assert ss[i] == (m.bit_length() - 1 if m else 0xFFFFFFFF)
            assert sh[i] == (w - v.bit_length() if v else 0xFFFFFFFF)


def _ref_fns(mask: int, base: int, offset: int) -> int:
    """PTX ISA fns pseudo-code."""
    if offset == 0:
        return base if 0 <= base < 32 and (mask >> base) & 1 else 0xFFFFFFFF
    pos, count, inc = base, abs(offset) - 1, 1 if offset > 0 else -1
    while 0 <= pos < 32:
        if (mask >> pos) & 1:
            if count == 0:
                return pos
            count -= 1
        pos += inc
    return 0xFFFFFFFF


@settings(max_examples=30, deadline=None)
@given(
    st.lists(U32, min_size=32, max_size=32),
    st.lists(st.integers(0, 31), min_size=32, max_size=32),
    st.lists(st.integers(-33, 33), min_size=32, max_size=32),
)
def test_fns(masks: list[int], bases: list[int], offs: list[int]) -> None:
    got = run("fns", "b32", u32s(masks), u32s(bases), np.array(offs, np.int32))
    assert got.tolist() == [_ref_fns(m, b, o) for m, b, o in zip(masks, bases, offs, strict=True)]


def _ref_prmt(a: int, b: int, c: int, mode: str | None) -> int:
    """PTX ISA prmt: default mode per selector nibble (3-bit byte index, bit 3 = sign replicate);
    the other modes from the ISA's table of d.b3 d.b2 d.b1 d.b0 per c[1:0]."""
    src = [(a >> (8 * i)) & 0xFF for i in range(4)] + [(b >> (8 * i)) & 0xFF for i in range(4)]
    if mode is None:
        out = 0
        for j in range(4):
            nib = (c >> (4 * j)) & 0xF
            byte = src[nib & 7]
            if nib & 8:
                byte = 0xFF if byte & 0x80 else 0
            out |= byte << (8 * j)
        return out
    table = {
        "f4e": ["3210", "4321", "5432", "6543"],
        "b4e": ["5670", "6701", "7012", "0123"],
        "rc8": ["0000", "1111", "2222", "3333"],
        "ecl": ["3210", "3211", "3222", "3333"],
        "ecr": ["0000", "1110", "2210", "3210"],
        "rc16": ["1010", "3232", "1010", "3232"],
    }[mode][c & 3]
    return sum(src[int(table[3 - j])] << (8 * j) for j in range(4))


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt(mode: str | None) -> None:
    rng = np.random.default_rng(1)
    a, b, c = (rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    got = run("prmt", f"b32.{mode}" if mode else "b32", a, b, c)
    assert got.tolist() == [_ref_prmt(int(x), int(y), int(z), mode) for x, y, z in zip(a, b, c, strict=True)]
    # an immediate selector (a Python int): the same bytes
    for sel in (0x5410, 0x7632, 0x3276, 0x1054, 0x3210, 0x4321, 0x8880, 0xF9E1, 0, 1, 2, 3):
        got = run("prmt", f"b32.{mode}" if mode else "b32", a, b, sel)
        assert got.tolist() == [_ref_prmt(int(x), int(y), sel, mode) for x, y in zip(a, b, strict=True)], hex(sel)


def test_lop3_every_lut() -> None:
    """lop3: bit i of d is immLut bit (a_i << 2 | b_i << 1 | c_i) (ta = 0xF0, tb = 0xCC, tc = 0xAA)."""
    rng = np.random.default_rng(2)
    a, b, c = (rng.integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    fn = decode("lop3", ("b32",)).fn
    for lut in range(256):
        got = fn(a, b, c, lut)
        for i in range(0, 32, 7):
            x, y, z = int(a[i]), int(b[i]), int(c[i])
            want = sum(
                ((lut >> (((x >> k) & 1) << 2 | ((y >> k) & 1) << 1 | ((z >> k) & 1))) & 1) << k for k in range(32)
            )
            assert int(got[i]) == want, lut
    assert fn(np.array([0xF0], np.uint32), np.array([0xCC], np.uint32), np.array([0xAA], np.uint32), 0x96)[0] == 0x96


@settings(max_examples=30, deadline=None)
@given(st.lists(U32, min_size=64, max_size=64), st.lists(st.integers(0, 70), min_size=32, max_size=32))
def test_shifts(xs: list[int], ns: list[int]) -> None:
    """shl/shr: "shift amounts greater than the register width N are clamped to N"; shr.s is
    arithmetic; shf.l/.r: the 64-bit {b, a} shifted by min(c, 32) (.clamp) or c & 31 (.wrap)."""
    a, b, n = u32s(xs[:32]), u32s(xs[32:]), u32s(ns)
    shl, shru, shrs = run("shl", "b32", a, n), run("shr", "u32", a, n), run("shr", "s32", a.view(np.int32), n)
    for i in range(32):
        x, k = int(a[i]), min(ns[i], 32)
        assert int(shl[i]) == (x << k) & 0xFFFFFFFF
        assert int(shru[i]) == x >> k
        assert int(shrs[i]) == s(x, 32) >> k
    for d in ("l", "r"):
        for m in ("clamp", "wrap"):
            got = run("shf", f"{d}.{m}.b32", a, b, n)
            for i in range(32):
                k = min(ns[i], 32) if m == "clamp" else ns[i] & 31
                wide = int(b[i]) << 32 | int(a[i])
                want = ((wide << k) >> 32) & 0xFFFFFFFF if d == "l" else (wide >> k) & 0xFFFFFFFF
                assert int(got[i]) == want, (d, m, k)


def test_dp4a_dp2a_szext_misc() -> None:
    """dp4a: c + the four byte products; dp2a.lo/.hi: c + two 16-bit x byte products (bytes 0-1 or
    2-3 of b); szext: extend the low N bits (N = min(b, 32) or b mod 32; N = 0 -> 0); cnot; min.relu."""
    a = np.array([struct.unpack("<I", bytes([0xFF, 2, 3, 0x80]))[0]], np.uint32)
    b = np.array([struct.unpack("<I", bytes([1, 0xFE, 5, 7]))[0]], np.uint32)
    c = np.array([10], np.int32)
    assert run("dp4a", "s32.s32", a.view(np.int32), b.view(np.int32), c)[0] == 10 + (-1 * 1) + 2 * -2 + 3 * 5 + -128 * 7
    assert run("dp4a", "u32.u32", a, b, c.view(np.uint32))[0] == 10 + 255 * 1 + 2 * 254 + 3 * 5 + 128 * 7
    a2 = np.array([(0x8000 << 16) | 3], np.uint32)
    assert run("dp2a", "lo.s32.u32", a2.view(np.int32), b, c)[0] == 10 + 3 * 1 + -32768 * 254
    assert run("dp2a", "hi.u32.u32", a2, b, c.view(np.uint32))[0] == (10 + 3 * 5 + 32768 * 7) & 0xFFFFFFFF
    x = np.array([0xF0, 0xF0, 0xF0, 0xF0], np.uint32)
    n = np.array([8, 0, 40, 36], np.uint32)
    assert run("szext", "clamp.s32", x.view(np.int32), n).tolist() == [-16, 0, 0xF0, 0xF0]
    assert run("szext", "wrap.s32", x.view(np.int32), n).tolist() == [-16, 0, -16, 0]
    assert run("szext", "wrap.u32", x, n).tolist() == [0xF0, 0, 0xF0, 0]
    assert run("cnot", "b32", np.array([0, 5], np.uint32)).tolist() == [1, 0]
    assert run("max", "relu.s32", np.array([-5, 3], np.int32), np.array([-2, 1], np.int32)).tolist() == [0, 3]
    assert run("add", "sat.s32", np.array([2**31 - 1], np.int32), np.array([5], np.int32)).tolist() == [2**31 - 1]


@pytest.mark.parametrize(
    ("op", "mods", "fragment"),
    [
        ("add", "sat.u32", "sat"),
        ("cvt", "rn.s32.f32", "needs .rni"),
        ("cvt", "rni.f16.f32", ".rni"),
        ("fma", "f32", "rounding modifier"),
        ("mul", "u32", ".lo, .hi or .wide"),
        ("setp", "lo.s32", "unsigned"),
        ("shf", "l.b32", ".clamp or .wrap"),
        ("cvt", "rn.e4m3x2.f32", "satfinite"),
        ("ld", "global.b32", "not modelled"),
        ("add", "rn.rz.f32", "more than one rounding"),
        ("sin", "f32", "approx"),
    ],
)
def test_unsupported_spellings_are_named(op: str, mods: str, fragment: str) -> None:
    """A spelling PTX does not allow (or this model does not execute) is refused with the opcode,
    its modifiers and why."""
    with pytest.raises(UnsupportedInstruction) as info:
        decode(op, tuple(mods.split(".")))
    assert info.value.opcode == op
    assert info.value.modifiers == tuple(mods.split("."))
    assert fragment in str(info.value)
    assert f"{op}.{mods}" in str(info.value)


def bits64(*xs: int) -> Lanes:
    return np.array(xs, np.uint64).view(np.float64)


def test_h100_rules_where_the_isa_is_silent() -> None:
    """Results the PTX ISA leaves open or states differently, as an H100 computed them
    (docs/silicon.md, recorded 2026-11-25; each case below is one of the recorded ones)."""
    # integer division and remainder by zero: all ones, every width and signedness
    z32 = np.zeros(2, np.int32)
    assert run("div", "s32", np.array([-1, 7], np.int32), z32).tolist() == [-1, -1]
    assert run("rem", "u16", np.array([0, 5], np.uint16), np.zeros(2, np.uint16)).tolist() == [0xFFFF] * 2
    # 64-bit bfe/bfi use the whole 32-bit position and length: position 256 is beyond the width
    one = np.array([1], np.uint64)
    assert run("bfe", "u64", one, np.array([0x100], np.uint32), np.array([12], np.uint32)).tolist() == [0]
    bfi = run("bfi", "b64", np.array([0], np.uint64), np.array([3], np.uint64), u32s([0x80000000]), u32s([0x20]))
    assert bfi.tolist() == [3]
    # an exact zero sum under .rm is -0 (IEEE 754 §6.3); .sat and .relu turn -0 into +0
    assert np.signbit(run("add", "rm.f32", f32(1.0), f32(-1.0))[0])
    assert np.signbit(
        run("fma", "rm.f64", bits64(0x3FF0000000000000), bits64(0x3FE0000000000000), bits64(0xBFE0000000000000))[0]
    )
    assert not np.signbit(run("add", "rn.sat.f32", f32(-0.0), f32(-0.0))[0])
    assert run("cvt", "rn.relu.f16.f32", f32(-0.0)).view(np.uint16)[0] == 0
    assert run("cvt", "rn.satfinite.bf16.f32", f32(-0.0)).view(np.uint16)[0] == 0x8000
    # f64 NaNs: the NaN operand quieted, b's first for add (div: a's), invalid -> 0xFFF8...
    qa, qb = 0x7FF8000000000001, 0xFFF4000000000002
    add = run("add", "rn.f64", bits64(qa), bits64(qb)).view(np.uint64)[0]
    div = run("div", "rn.f64", bits64(qa), bits64(qb)).view(np.uint64)[0]
    assert (int(add), int(div)) == (0xFFFC000000000002, qa)
    inv = run("add", "rn.f64", bits64(0x7FF0000000000000), bits64(0xFFF0000000000000)).view(np.uint64)[0]
    assert int(inv) == 0xFFF8000000000000
    assert int(run("abs", "f64", bits64(0xFFF0000000000001)).view(np.uint64)[0]) == 0xFFF8000000000001
    # conversions of NaN
    assert int(run("cvt", "f64.f32", np.array([0x7FFFFFFF], np.uint32).view(np.float32)).view(np.uint64)[0]) == (
        0x7FFFFFFFE0000000
    )
    assert int(run("cvt", "f32.bf16", np.array([0x7F81], np.uint16).view(ml_dtypes.bfloat16)).view(np.uint32)[0]) == (
        0x7F810000
    )
    assert int(run("cvt", "f32.f16", np.array([0x7D00], np.uint16).view(np.float16)).view(np.uint32)[0]) == 0x7FFFFFFF
    assert int(run("cvt", "rn.f32.f64", bits64(0xFFF8000000000000 | (0x123 << 29))).view(np.uint32)[0]) == 0xFFC00123
    assert run("cvt", "rzi.s8.f64", bits64(0x7FFFFFFFFFFFFFFF)).tolist() == [-128]
    assert run("cvt", "rzi.u8.f64", bits64(0x7FFFFFFFFFFFFFFF)).tolist() == [128]
    assert run("cvt", "rni.s32.f32", f32(np.nan)).tolist() == [0]
    assert run("cvt", "rni.s64.f32", f32(np.nan)).view(np.uint64).tolist() == [0x8000000000000000]
    tf = run("cvt", "rna.tf32.f32", np.array([0x7F800001, 0x7FFFFFFF], np.uint32).view(np.float32))
    assert tf.tolist() == [0x7F800000, 0x7FFFE000]
    # testp.normal is true for zeros
    assert run("testp", "normal.f64", bits64(0, 0x8000000000000000)).tolist() == [True, True]


def test_f64_fma_subnormal_and_huge_operands() -> None:
    """fma.f64 with subnormal products and results, and operands near the largest finite value
    (where a plain Dekker product over- or underflows): one rounding of the exact a*b + c."""
    cases = [
        (0x3FF8000000000000, 0x8000000000000001, 0x8000000000000001),  # 1.5 * -tiny - tiny
        (0xC004000000000000, 0x000FFFFFFFFFFFFF, 0x8000000000000001),
        (0x7FEFFFFFFFFFFFFF, 0xBFB999999999999A, 0x4340000000000001),
        (0x7FEFFFFFFFFFFFFF, 0x81A56E1FC2F8F359, 0x0010000000000000),
        (0xBFB999999999999A, 0x3FF8000000000000, 0x0010000000000000),
        (0x7FEFFFFFFFFFFFFF, 0x000012688B70E62B, 0x0000000000000000),
    ]
    for mode in ("rn", "rz", "rm", "rp"):
        a, b, c = (bits64(*(x[i] for x in cases)) for i in range(3))
        got = run("fma", f"{mode}.f64", a, b, c)
        for i in range(len(cases)):
            exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
            assert same(got[i], ieee_round(exact, F64, mode)), (mode, [hex(v) for v in cases[i]])


def test_set_bmsk_cvt_pack() -> None:
    """set: the comparison as a value (all ones for .u32/.s32, 1.0 for .f32, per half for f16x2
    sources); bmsk: "a mask of width b starting at bit a", .clamp: a >= 32 gives 0, .wrap: a and b
    mod 32; cvt.pack.sat: a and b saturated, a above b (8-bit: c's low 16 bits on top)."""
    a, b = f32(1.0, 3.0, np.nan), f32(2.0, 2.0, 1.0)
    assert run("set", "lt.u32.f32", a, b).tolist() == [0xFFFFFFFF, 0, 0]
    assert run("set", "ltu.f32.f32", a, b).tolist() == [1.0, 0.0, 1.0]
    assert run("set", "gt.and.s32.f32", a, b, np.array([True, True, False])).tolist() == [0, -1, 0]
    h = np.array([1, 9], np.float16).view(np.uint32)
    k = np.array([2, 3], np.float16).view(np.uint32)
    assert run("set", "lt.u32.f16x2", h, k).tolist() == [0x0000FFFF]
    assert run("set", "lt.f16x2.f16x2", h, k).tolist() == [0x00003C00]
    pos, width = u32s([0, 4, 31, 33, 40]), u32s([3, 8, 4, 2, 36])
    assert run("bmsk", "clamp.b32", pos, width).tolist() == [0x7, 0xFF0, 0x80000000, 0, 0]
    assert run("bmsk", "wrap.b32", pos, width).tolist() == [0x7, 0xFF0, 0x80000000, 0x6, 0xF00]
    x, y = np.array([300, -5, 70000], np.int32), np.array([-300, 7, -70000], np.int32)
    assert run("cvt", "pack.sat.s16.s32", x, y).tolist() == [
        (300 << 16) | (-300 & 0xFFFF),
        (0xFFFB << 16) | 7,
        0x7FFF8000,
    ]
    c = u32s([0xABCD, 0x1234, 0])
    assert run("cvt", "pack.sat.u8.s32.b32", x, y, c).tolist() == [0xABCDFF00, 0x12340007, 0x0000FF00]
    assert run("cvt", "pack.sat.s8.s32.b32", x, y, c).tolist() == [0xABCD7F80, 0x1234FB07, 0x00007F80]


def test_rcp_approx_f64_upper_word() -> None:
    """rcp.approx.ftz.f64 on H100 (docs/silicon.md fixtures): the low 32 bits of the input are
    ignored and those of the result are zero; subnormals flush; NaN gives 0x7fffffff00000000."""
    x = bits64(0x4004000000000000, 0x4004000012345678, 0x000FFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0x7FF8000000000000)
    got = run("rcp", "approx.ftz.f64", x).view(np.uint64).tolist()
    assert got == [0x3FD9999900000000, 0x3FD9999900000000, 0x7FF0000000000000, 0, 0x7FFFFFFF00000000]

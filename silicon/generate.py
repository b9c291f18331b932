"""Generate the straight-line instruction-sequence programs run on silicon.

Each generated program is one kernel `gen_<family>(in, out)`: thread `t` (global index)
loads its operands from `in + t * IN_STRIDE`, runs every instruction of the family on
them, and stores each result to its own 8-byte slot at `out + (t * nslots + k) * 8`.
One thread is one case of every instruction, so a launch covers threads x slots cases.

Operand record of one thread (`IN_STRIDE` = 32 bytes, little-endian):

| bytes | name | registers loaded from it |
|---|---|---|
| 0-7 | a | `%a16` (bits 0-15), `%a32` (bits 0-31), `%a64` |
| 8-15 | b | `%b16`, `%b32`, `%b64` |
| 16-23 | c | `%c16`, `%c32`, `%c64` |
| 24-27 | d | `%d` (u32: shift amounts, bit positions, prmt selectors) |
| 28-31 | e | `%e` (u32: bit-field lengths) |

Results are stored with the width of their register (`st.global.b16/.b32/.b64`) into a
zero-filled output buffer; a predicate result is stored as the u32 0 or 1 (`selp`).
`%p0` holds `a < b` (`setp.lt` of the family's type) for `selp`.

The values are chosen deterministically (`random.Random(SEED)`): the pairs (a, b) cover
the family's edge-value pool exhaustively, c, d, e are drawn from their pools. The slot
table (`SLOTS`) and the input bytes go into the fixture, so a fixture is self-contained.

Run `python silicon/generate.py` to (re)write `silicon/programs/gen_*.ptx` and
`silicon/programs/gen_*.json` (the launch and inputs the runner uses).
"""

from __future__ import annotations

import base64
import json
import random
import struct
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

PROGRAMS = Path(__file__).resolve().parent / "programs"

PTX_VERSION = "8.6"
"""The lowest PTX ISA version that knows sm_100a (PTX ISA 8.6 release notes); ptxas 13
assembles it for sm_90a and sm_100a alike."""

IN_STRIDE = 32
SEED = 20261125

REG_WIDTH = {"b16": 16, "b32": 32, "b64": 64, "pred": 32}


@dataclass(frozen=True)
class Slot:
    """One instruction of a generated program.

    `text` is the instruction with `{d0}`, `{d1}` for its results and `%a32`, `%d`, ...
    for operands; `dsts` gives each result's register kind (b16, b32, b64, pred).
    """

    text: str
    dsts: tuple[str, ...]

    @property
    def opcode(self) -> str:
        return self.text.split()[0]


def s(text: str, *dsts: str) -> Slot:
    return Slot(text, dsts or ("b32",))


def binary(op: str, w: int, dst: str | None = None) -> Slot:
    return s(f"{op} {{d0}}, %a{w}, %b{w};", dst or f"b{w}")


def unary(op: str, w: int, dst: str | None = None) -> Slot:
    return s(f"{op} {{d0}}, %a{w};", dst or f"b{w}")


def ternary(op: str, w: int) -> Slot:
    return s(f"{op} {{d0}}, %a{w}, %b{w}, %c{w};", f"b{w}")


RND = ("rn", "rz", "rm", "rp")
IRND = ("rni", "rzi", "rmi", "rpi")
FCMP = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def float_slots(t: str) -> list[Slot]:
    """Arithmetic, comparison and conversion of f32 or f64 operands (`t`)."""
    w = 32 if t == "f32" else 64
    out: list[Slot] = []
    ftz = [".ftz"] if t == "f32" else []
    for op in ("add", "sub", "mul"):
        out += [binary(f"{op}.{r}.{t}", w) for r in RND]
        out += [binary(f"{op}.rn{f}.{t}", w) for f in ftz]
        if t == "f32":
            out += [binary(f"{op}.rn.sat.f32", w), binary(f"{op}.rn.ftz.sat.f32", w)]
    out += [ternary(f"fma.{r}.{t}", w) for r in RND]
    out += [ternary(f"fma.rn{f}.{t}", w) for f in ftz]
    if t == "f32":
        out += [ternary("fma.rn.sat.f32", w)]
    out += [binary(f"div.{r}.{t}", w) for r in RND]
    out += [unary(f"rcp.{r}.{t}", w) for r in RND]
    out += [unary(f"sqrt.{r}.{t}", w) for r in RND]
    if t == "f32":
        out += [binary("div.rn.ftz.f32", w), binary("div.approx.f32", w), binary("div.approx.ftz.f32", w)]
        out += [binary("div.full.f32", w), binary("div.full.ftz.f32", w)]
        out += [unary("rcp.approx.f32", w), unary("rcp.approx.ftz.f32", w), unary("rcp.rn.ftz.f32", w)]
        out += [unary("sqrt.approx.f32", w), unary("sqrt.approx.ftz.f32", w), unary("sqrt.rn.ftz.f32", w)]
        out += [unary("rsqrt.approx.f32", w), unary("rsqrt.approx.ftz.f32", w)]
        out += [unary(f"{op}.approx.f32", w) for op in ("ex2", "lg2", "sin", "cos", "tanh")]
        out += [unary(f"{op}.approx.ftz.f32", w) for op in ("ex2", "lg2", "sin", "cos")]
    else:
        out += [unary("rcp.approx.ftz.f64", w), unary("rsqrt.approx.f64", w)]
    out += [binary(f"min.{t}", w), binary(f"max.{t}", w)]
    if t == "f32":
        out += [binary("min.ftz.f32", w), binary("max.ftz.f32", w)]
        out += [binary("min.NaN.f32", w), binary("max.NaN.f32", w)]
        out += [binary("min.xorsign.abs.f32", w), binary("max.xorsign.abs.f32", w)]
    out += [unary(f"abs.{t}", w), unary(f"neg.{t}", w)]
    if t == "f32":
        out += [unary("abs.ftz.f32", w), unary("neg.ftz.f32", w)]
    out += [binary(f"copysign.{t}", w)]
    out += [s(f"testp.{k}.{t} {{d0}}, %a{w};", "pred") for k in TESTP]
    out += [s(f"setp.{c}.{t} {{d0}}, %a{w}, %b{w};", "pred") for c in FCMP]
    if t == "f32":
        out += [s("setp.lt.ftz.f32 {d0}, %a32, %b32;", "pred")]
    out += [s(f"setp.lt.{t} {{d0}}|{{d1}}, %a{w}, %b{w};", "pred", "pred")]
    out += [s(f"selp.{t} {{d0}}, %a{w}, %b{w}, %p0;", f"b{w}")]
    if t == "f32":
        out += [s("slct.f32.f32 {d0}, %a32, %b32, %c32;", "b32"), s("slct.ftz.s32.f32 {d0}, %a32, %b32, %c32;")]
    # conversions
    out += [unary(f"cvt.{r}.{t}.{t}", w) for r in IRND]
    if t == "f32":
        out += [unary("cvt.rni.ftz.f32.f32", w), unary("cvt.ftz.sat.f32.f32", w), unary("cvt.sat.f32.f32", w)]
        out += [unary("cvt.f64.f32", w, "b64"), unary("cvt.ftz.f64.f32", w, "b64")]
        out += [unary(f"cvt.{r}.f16.f32", w, "b16") for r in RND]
        out += [unary("cvt.rn.relu.f16.f32", w, "b16"), unary("cvt.rn.satfinite.f16.f32", w, "b16")]
        out += [unary(f"cvt.{r}.bf16.f32", w, "b16") for r in ("rn", "rz")]
        out += [unary("cvt.rn.relu.bf16.f32", w, "b16"), unary("cvt.rn.satfinite.bf16.f32", w, "b16")]
        out += [binary("cvt.rn.f16x2.f32", w, "b32"), binary("cvt.rz.f16x2.f32", w, "b32")]
        out += [binary("cvt.rn.relu.f16x2.f32", w, "b32")]
        out += [binary("cvt.rn.bf16x2.f32", w, "b32"), binary("cvt.rz.bf16x2.f32", w, "b32")]
        out += [binary("cvt.rn.satfinite.e4m3x2.f32", w, "b16"), binary("cvt.rn.satfinite.e5m2x2.f32", w, "b16")]
        out += [binary("cvt.rn.satfinite.relu.e4m3x2.f32", w, "b16")]
        out += [unary("cvt.rna.tf32.f32", w, "b32")]
        out += [unary(f"cvt.{r}.s32.f32", w, "b32") for r in IRND]
        out += [unary("cvt.rzi.ftz.s32.f32", w, "b32")]
    else:
        out += [unary(f"cvt.{r}.f32.f64", w, "b32") for r in RND]
        out += [unary("cvt.rn.ftz.f32.f64", w, "b32"), unary("cvt.rn.sat.f32.f64", w, "b32")]
        out += [unary("cvt.rn.f16.f64", w, "b16"), unary("cvt.rz.f16.f64", w, "b16")]
        out += [unary(f"cvt.{r}.s32.f64", w, "b32") for r in IRND]
    out += [unary(f"cvt.{r}.u32.{t}", w, "b32") for r in ("rni", "rzi")]
    out += [unary(f"cvt.{r}.s64.{t}", w, "b64") for r in ("rni", "rzi", "rmi", "rpi")]
    out += [unary(f"cvt.{r}.u64.{t}", w, "b64") for r in ("rni", "rzi")]
    out += [unary(f"cvt.rzi.{i}.{t}", w, "b16") for i in ("s16", "u16", "s8", "u8")]
    out += [unary(f"cvt.rni.sat.s32.{t}", w, "b32")]
    return out


def int_slots(w: int) -> list[Slot]:
    """Integer, bit and predicate instructions on 32- or 64-bit operands (and 16-bit ones in the 32-bit family)."""
    sd, ud, bd = f"s{w}", f"u{w}", f"b{w}"
    out: list[Slot] = []
    out += [binary(f"add.{sd}", w), binary(f"add.{ud}", w), binary(f"sub.{sd}", w)]
    if w == 32:
        out += [binary("add.sat.s32", w), binary("sub.sat.s32", w)]
    out += [binary(f"mul.lo.{sd}", w), binary(f"mul.hi.{sd}", w), binary(f"mul.hi.{ud}", w)]
    out += [ternary(f"mad.lo.{sd}", w), ternary(f"mad.hi.{sd}", w), ternary(f"mad.hi.{ud}", w)]
    if w == 32:
        out += [binary("mul.wide.s32", 32, "b64"), binary("mul.wide.u32", 32, "b64")]
        out += [s("mad.wide.s32 {d0}, %a32, %b32, %c64;", "b64"), s("mad.wide.u32 {d0}, %a32, %b32, %c64;", "b64")]
        out += [ternary("mad.hi.sat.s32", 32)]
        out += [binary("mul24.lo.s32", 32), binary("mul24.hi.u32", 32), binary("mul24.lo.u32", 32)]
        out += [ternary("mad24.lo.s32", 32), ternary("sad.s32", 32), ternary("sad.u32", 32)]
    out += [binary(f"div.{sd}", w), binary(f"div.{ud}", w), binary(f"rem.{sd}", w), binary(f"rem.{ud}", w)]
    out += [unary(f"abs.{sd}", w), unary(f"neg.{sd}", w)]
    out += [binary(f"min.{sd}", w), binary(f"min.{ud}", w), binary(f"max.{sd}", w), binary(f"max.{ud}", w)]
    if w == 32:
        out += [binary("min.relu.s32", 32), binary("max.relu.s32", 32)]
    out += [binary(f"and.{bd}", w), binary(f"or.{bd}", w), binary(f"xor.{bd}", w)]
    out += [unary(f"not.{bd}", w), unary(f"cnot.{bd}", w)]
    out += [s(f"shl.{bd} {{d0}}, %a{w}, %d;", bd), s(f"shr.{sd} {{d0}}, %a{w}, %d;", bd)]
    out += [s(f"shr.{ud} {{d0}}, %a{w}, %d;", bd), s(f"shr.{bd} {{d0}}, %a{w}, %d;", bd)]
    out += [s(f"bfe.{sd} {{d0}}, %a{w}, %d, %e;", bd), s(f"bfe.{ud} {{d0}}, %a{w}, %d, %e;", bd)]
    out += [s(f"bfi.{bd} {{d0}}, %a{w}, %b{w}, %d, %e;", bd)]
    out += [unary(f"brev.{bd}", w), unary(f"clz.{bd}", w, "b32"), unary(f"popc.{bd}", w, "b32")]
    out += [unary(f"bfind.{sd}", w, "b32"), unary(f"bfind.{ud}", w, "b32"), unary(f"bfind.shiftamt.{ud}", w, "b32")]
    out += [s(f"setp.{c}.{sd} {{d0}}, %a{w}, %b{w};", "pred") for c in ("eq", "ne", "lt", "le", "gt", "ge")]
    out += [s(f"setp.{c}.{ud} {{d0}}, %a{w}, %b{w};", "pred") for c in ("lo", "ls", "hi", "hs")]
    out += [s(f"setp.gt.and.{sd} {{d0}}, %a{w}, %b{w}, %p0;", "pred")]
    out += [s(f"setp.gt.xor.{sd} {{d0}}|{{d1}}, %a{w}, %b{w}, !%p0;", "pred", "pred")]
    out += [s(f"selp.{bd} {{d0}}, %a{w}, %b{w}, %p0;", bd), s(f"slct.{bd}.s32 {{d0}}, %a{w}, %b{w}, %c32;", bd)]
    out += [unary(f"cvt.{r}.f32.{sd}", w, "b32") for r in RND]
    out += [unary(f"cvt.{r}.f32.{ud}", w, "b32") for r in RND]
    out += [unary(f"cvt.{r}.f64.{sd}", w, "b64") for r in RND]
    out += [unary(f"cvt.rn.f64.{ud}", w, "b64"), unary(f"cvt.rz.f64.{ud}", w, "b64")]
    out += [unary(f"cvt.{r}.f16.{sd}", w, "b16") for r in ("rn", "rz")]
    out += [unary(f"cvt.rn.bf16.{sd}", w, "b16")] if w == 32 else []
    if w == 32:
        out += [
            s(f"prmt.b32{m} {{d0}}, %a32, %b32, %d;") for m in ("", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16")
        ]
        out += [s(f"lop3.b32 {{d0}}, %a32, %b32, %c32, {lut};") for lut in (0x96, 0xE8, 0xCA, 0x80, 0xFE, 0x01, 0x3C)]
        out += [s(f"shf.l.{m}.b32 {{d0}}, %a32, %b32, %d;") for m in ("wrap", "clamp")]
        out += [s(f"shf.r.{m}.b32 {{d0}}, %a32, %b32, %d;") for m in ("wrap", "clamp")]
        out += [ternary("dp4a.s32.s32", 32), ternary("dp4a.u32.u32", 32), ternary("dp4a.s32.u32", 32)]
        out += [ternary("dp2a.lo.s32.s32", 32), ternary("dp2a.hi.u32.u32", 32)]
        # 16-bit arithmetic on the low halves
        out += [binary("add.s16", 16), binary("sub.u16", 16), binary("mul.lo.s16", 16), binary("mul.hi.s16", 16)]
        out += [binary("mul.hi.u16", 16), binary("mul.wide.s16", 16, "b32"), binary("mul.wide.u16", 16, "b32")]
        out += [binary("min.s16", 16), binary("max.u16", 16), unary("abs.s16", 16), unary("neg.s16", 16)]
        out += [binary("div.s16", 16), binary("rem.u16", 16), s("shl.b16 {d0}, %a16, %d;", "b16")]
        out += [s("shr.s16 {d0}, %a16, %d;", "b16")]
        # integer conversions: truncation, sign/zero extension, saturation
        out += [unary(f"cvt.{d}.s32", 32, "b16") for d in ("s8", "u8", "s16", "u16")]
        out += [unary(f"cvt.sat.{d}.s32", 32, "b16") for d in ("s8", "u8", "s16", "u16")]
        out += [unary("cvt.sat.s8.u32", 32, "b16"), unary("cvt.sat.u16.u32", 32, "b16")]
        out += [unary(f"cvt.s32.{src}", 32, "b32") for src in ("s8", "u8", "s16", "u16")]
        out += [unary("cvt.sat.u32.s32", 32), unary("cvt.sat.s32.u32", 32)]
        out += [unary("cvt.s64.s32", 32, "b64"), unary("cvt.u64.u32", 32, "b64"), unary("cvt.s64.u32", 32, "b64")]
        # mov pack / unpack
        out += [s("mov.b64 {d0}, {%a32, %b32};", "b64"), s("mov.b32 {d0}, {%a16, %b16};", "b32")]
        out += [s("mov.b32 {{d0}, {d1}}, %a32;", "b16", "b16")]
    else:
        out += [unary(f"cvt.{d}.s64", 64, "b32") for d in ("s32", "u32")]
        out += [unary(f"cvt.sat.{d}.s64", 64, "b32") for d in ("s32", "u32")]
        out += [unary("cvt.sat.s32.u64", 64, "b32"), unary("cvt.sat.u32.u64", 64, "b32")]
        out += [unary("cvt.sat.s64.u64", 64, "b64"), unary("cvt.sat.u64.s64", 64, "b64")]
        out += [s("mov.b64 {{d0}, {d1}}, %a64;", "b32", "b32")]
        out += [s("mov.b64 {{d0}, {d1}, {d2}, {d3}}, %a64;", "b16", "b16", "b16", "b16")]
    return out


def half_slots(t: str) -> list[Slot]:
    """f16 / bf16 scalar and packed arithmetic, and their conversions (`t` is f16 or bf16)."""
    x2 = f"{t}x2"
    out: list[Slot] = []
    out += [binary(f"add.rn.{t}", 16), binary(f"sub.rn.{t}", 16), binary(f"mul.rn.{t}", 16)]
    out += [binary(f"add.rn.{x2}", 32), binary(f"mul.rn.{x2}", 32)]
    out += [ternary(f"fma.rn.{t}", 16), ternary(f"fma.rn.{x2}", 32), ternary(f"fma.rn.relu.{t}", 16)]
    out += [binary(f"min.{t}", 16), binary(f"max.{t}", 16), binary(f"min.NaN.{t}", 16), binary(f"max.NaN.{t}", 16)]
    out += [binary(f"min.{x2}", 32), binary(f"max.NaN.{x2}", 32)]
    out += [unary(f"abs.{t}", 16), unary(f"neg.{t}", 16), unary(f"neg.{x2}", 32)]
    out += [unary(f"cvt.f32.{t}", 16, "b32"), unary(f"cvt.f64.{t}", 16, "b64")]
    out += [unary(f"cvt.{r}.s32.{t}", 16, "b32") for r in ("rni", "rzi")]
    out += [s(f"setp.{c}.{t} {{d0}}, %a16, %b16;", "pred") for c in ("lt", "equ", "nan")]
    if t == "f16":
        out += [binary("add.f16", 16), binary("add.rn.ftz.f16", 16), binary("add.rn.sat.f16", 16)]
        out += [ternary("fma.rn.ftz.f16", 16), ternary("fma.rn.sat.f16", 16), ternary("fma.rn.sat.f16x2", 32)]
        out += [unary(f"cvt.{r}.f16.f16", 16, "b16") for r in IRND]
        out += [unary("ex2.approx.f16", 16, "b16"), unary("tanh.approx.f16", 16, "b16")]
        out += [unary("cvt.rn.satfinite.e4m3x2.f16x2", 32, "b16"), unary("cvt.rn.satfinite.e5m2x2.f16x2", 32, "b16")]
        out += [unary("cvt.rn.f16x2.e4m3x2", 16, "b32"), unary("cvt.rn.f16x2.e5m2x2", 16, "b32")]
        out += [unary("cvt.rn.relu.f16x2.e4m3x2", 16, "b32")]
    return out


def misc_slots() -> list[Slot]:
    """Carry chains (CC.CF across instructions), set, bmsk, szext, cvt.pack, f16x2 comparisons."""
    out: list[Slot] = [
        s("add.cc.u32 {d0}, %a32, %b32; addc.cc.u32 {d1}, %c32, %d; addc.u32 {d2}, %e, 0;", "b32", "b32", "b32"),
        s("sub.cc.u32 {d0}, %a32, %b32; subc.cc.u32 {d1}, %c32, %d; subc.u32 {d2}, %e, 0;", "b32", "b32", "b32"),
        s("add.cc.s32 {d0}, %a32, %b32; addc.s32 {d1}, %c32, %d;", "b32", "b32"),
        s(
            "mad.lo.cc.u32 {d0}, %a32, %b32, %c32; madc.hi.cc.u32 {d1}, %a32, %b32, %d; addc.u32 {d2}, %e, 0;",
            "b32",
            "b32",
            "b32",
        ),
        s("add.cc.u64 {d0}, %a64, %b64; addc.u64 {d1}, %c64, 0;", "b64", "b64"),
        s("sub.cc.u64 {d0}, %a64, %b64; subc.u64 {d1}, %c64, 0;", "b64", "b64"),
    ]
    out += [s(f"set.{c}.u32.f32 {{d0}}, %a32, %b32;") for c in ("lt", "equ", "nan")]
    out += [s("set.lt.f32.s32 {d0}, %a32, %b32;"), s("set.ne.s32.u32 {d0}, %a32, %b32;")]
    out += [s("set.gtu.and.u32.f32 {d0}, %a32, %b32, %p0;")]
    out += [s("set.lt.f16x2.f16x2 {d0}, %a32, %b32;"), s("set.lt.u32.f16x2 {d0}, %a32, %b32;")]
    out += [s("setp.lt.f16x2 {d0}|{d1}, %a32, %b32;", "pred", "pred")]
    out += [s(f"bmsk.{m}.b32 {{d0}}, %d, %e;") for m in ("clamp", "wrap")]
    out += [s(f"szext.{m}.{t} {{d0}}, %a32, %d;") for m in ("clamp", "wrap") for t in ("s32", "u32")]
    out += [s(f"cvt.pack.sat.{t}.s32.b32 {{d0}}, %a32, %b32, %c32;") for t in ("s8", "u8")]
    out += [s(f"cvt.pack.sat.{t}.s32 {{d0}}, %a32, %b32;") for t in ("s16", "u16")]
    return out


FP8_SLOTS = [
    unary("cvt.rn.f16x2.e4m3x2", 16, "b32"),
    unary("cvt.rn.f16x2.e5m2x2", 16, "b32"),
    unary("cvt.rn.relu.f16x2.e4m3x2", 16, "b32"),
]
"""fp8 pairs unpacked to f16x2, over every byte value (the `fp8` family's inputs are exhaustive)."""

FAMILIES: dict[str, list[Slot]] = {
    "f32": float_slots("f32"),
    "f64": float_slots("f64"),
    "int32": int_slots(32),
    "int64": int_slots(64),
    "f16": half_slots("f16"),
    "bf16": half_slots("bf16"),
    "fp8": FP8_SLOTS,
    "misc": misc_slots(),
}

PRED_SETUP = {
    "f32": "setp.lt.f32 %p0, %a32, %b32;",
    "f64": "setp.lt.f64 %p0, %a64, %b64;",
    "int32": "setp.lt.s32 %p0, %a32, %b32;",
    "int64": "setp.lt.s64 %p0, %a64, %b64;",
    "f16": "setp.lt.f16 %p0, %a16, %b16;",
    "bf16": "setp.lt.bf16 %p0, %a16, %b16;",
    "fp8": "setp.ne.b16 %p0, %a16, %b16;",
    "misc": "setp.lt.s32 %p0, %a32, %b32;",
}


# --- edge-value pools (bit patterns) ---------------------------------------------------


def f32b(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64b(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


F32_EDGES = [
    0x00000000, 0x80000000, f32b(1.0), f32b(-1.0), f32b(0.5), f32b(1.5), f32b(2.5), f32b(-2.5), f32b(3.0),
    f32b(1 / 3), f32b(-0.1), 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00800001, 0x7F7FFFFF, 0xFF7FFFFF,
    0x7F800000, 0xFF800000, 0x7FFFFFFF, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001, 0xFFA00005,
    f32b(2.0**31), f32b(-(2.0**31)), f32b(2.0**32), f32b(2.0**63), f32b(-(2.0**63)), f32b(2.0**64),
    f32b(16777216.0), f32b(0.49999997), f32b(65504.0), f32b(65520.0), f32b(1e-8), f32b(448.0), f32b(464.0),
    f32b(57344.0), 0x3F800001, f32b(2.0**-126 * 1.5), f32b(1e30), f32b(-1e-30), f32b(0.75), f32b(-0.5),
    f32b(6.1e-5), f32b(3.0e38),
]  # fmt: skip

F64_EDGES = [
    0, 1 << 63, f64b(1.0), f64b(-1.0), f64b(0.5), f64b(1.5), f64b(2.5), f64b(-2.5), f64b(1 / 3), f64b(-0.1),
    1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
    0x7FF0000000000000, 0xFFF0000000000000, 0x7FFFFFFFFFFFFFFF, 0x7FF8000000000000, 0xFFF8000000000000,
    0x7FF8000012345678, 0x7FF0000000000001, f64b(2.0**31), f64b(-(2.0**31) - 1), f64b(2.0**32), f64b(2.0**63),
    f64b(-(2.0**63)), f64b(2.0**64), f64b(2.0**53 + 2), f64b(3.4028235677973366e38), f64b(3.4028235677973362e38),
    f64b(1.401298464324817e-45), f64b(7.006492321624085e-46), f64b(1.1754943508222875e-38), f64b(1e300),
    f64b(-1e-300), f64b(65504.0), f64b(65520.0), f64b(4294967295.5), f64b(-0.5), f64b(0.49999999999999994),
    0x3FF0000000000001, f64b(1e-310),
]  # fmt: skip

I32_EDGES = [
    0, 1, 2, 3, 7, 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFF9, 0x7FFFFFFF, 0x80000000, 0x80000001, 0x7FFE, 0x7FFF, 0x8000,
    0x8001, 0xFFFF, 0x10000, 0xFFFF8000, 0x7F, 0x80, 0xFF, 0xFFFFFF80, 0x12345678, 0x9ABCDEF0, 0x00FF00FF,
    0x55555555, 0xAAAAAAAA, 0x01000001, 0xFEFFFFFF, 0x40000000, 0xC0000000, 33, 32, 0x0000FFFE, 0x7FFFFFC0,
]  # fmt: skip

I64_EDGES = [
    0, 1, 2, 3, (1 << 64) - 1, (1 << 64) - 2, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, 0x7FFFFFFF, 0x80000000,
    0xFFFFFFFF, 0x100000000, 0xFFFFFFFF80000000, 0xFFFFFFFF7FFFFFFF, 0x0123456789ABCDEF, 0xFEDCBA9876543210,
    (1 << 53) + 1, (1 << 24) + 1, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA, 0x0020000000000001, 64, 65, 63,
    0xFFFFFFFFFFFFFFC0, 0x7FFFFFFFFFFFFC00, 0x8000000000000400,
]  # fmt: skip

F16_EDGES = [
    0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x3E00, 0x4100, 0xC100, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF,
    0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7FFF, 0x7D00, 0x3555, 0x5F00, 0x5F40, 0x7A00, 0x3C01, 0x1400, 0x0200,
]  # fmt: skip
"""f16: ±0, ±1, 0.5, 1.5, ±2.5, ±min/max denormal, min normal, ±max, ±inf, NaNs (quiet, payload, signalling),
1/3, 448, 464, 49152, 1+ulp, 2^-10 ..."""

BF16_EDGES = [
    0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0x3FC0, 0x4020, 0xC020, 0x0001, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F,
    0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7FFF, 0x7F81, 0x3EAB, 0x43E0, 0x43E8, 0x3F81, 0x4780, 0x0040,
]  # fmt: skip

CONTROL = [0, 1, 2, 4, 7, 8, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65, 127, 128, 255, 256, 0x3210, 0x7654, 0x0123,
           0x4444, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x1F, 0x5, 0xC]  # fmt: skip


def pools(family: str) -> tuple[list[int], int]:
    """The edge pool of the family's operands and their width in bits."""
    return {
        "f32": (F32_EDGES, 32),
        "f64": (F64_EDGES, 64),
        "int32": (I32_EDGES, 32),
        "int64": (I64_EDGES, 64),
        "f16": (F16_EDGES, 16),
        "bf16": (BF16_EDGES, 16),
        "misc": (I32_EDGES, 32),
    }[family]


def operand(pool: list[int], width: int, rng: random.Random, i: int) -> int:
    """Pool value `i`, widened for the family: 16-bit families pair two pool values (packed x2 ops)."""
    v = pool[i % len(pool)]
    if width == 16:
        return v | (rng.choice(pool) << 16)
    return v


def make_inputs(family: str) -> tuple[int, bytes]:
    """(thread count, input bytes): every (a, b) pair of the pool once, then random fill to a multiple of 128."""
    rng = random.Random(f"{SEED}-{family}")
    if family == "fp8":
        # byte i low, byte i ^ 0xA5 high: every e4m3 / e5m2 encoding in both halves
        data = b"".join(struct.pack("<QQQII", i | (i ^ 0xA5) << 8, 0, 0, 0, 0) for i in range(256))
        return 256, data
    pool, width = pools(family)
    n = len(pool)
    threads = -(-n * n // 128) * 128
    mask = (1 << 64) - 1
    buf = bytearray()
    for t in range(threads):
        if t < n * n:
            ia, ib = divmod(t, n)
        else:
            ia, ib = rng.randrange(n), rng.randrange(n)
        a = operand(pool, width, rng, ia)
        b = operand(pool, width, rng, ib)
        c = operand(pool, width, rng, rng.randrange(n))
        if family.startswith("int") or family == "misc":
            # sign-extend 32-bit values so %a64 of the 32-bit family is a proper s64 too
            a, b, c = (x | (0xFFFFFFFF << 32) if width == 32 and x >> 31 else x for x in (a, b, c))
        d, e = rng.choice(CONTROL), rng.choice(CONTROL)
        buf += struct.pack("<QQQII", a & mask, b & mask, c & mask, d, e)
    return threads, bytes(buf)


# --- PTX text ----------------------------------------------------------------------------

REG_PREFIX = {"b16": "%h", "b32": "%r", "b64": "%rd", "pred": "%q"}


def program(family: str) -> tuple[str, list[dict[str, object]]]:
    """The PTX text of `gen_<family>` and its slot table."""
    slots = FAMILIES[family]
    counts = {k: 0 for k in REG_PREFIX}
    body: list[str] = []
    table: list[dict[str, object]] = []
    k = 0
    for slot in slots:
        names: list[str] = []
        for kind in slot.dsts:
            names.append(f"{REG_PREFIX[kind]}{counts[kind]}")
            counts[kind] += 1
        text = slot.text
        for i, n in enumerate(names):
            text = text.replace(f"{{d{i}}}", n)
        body.append(f"\t{text}")
        for kind, name in zip(slot.dsts, names, strict=True):
            if kind == "pred":
                r = f"%r{counts['b32']}"
                counts["b32"] += 1
                body.append(f"\tselp.u32 {r}, 1, 0, {name};")
                name, width = r, 32
            else:
                width = REG_WIDTH[kind]
            body.append(f"\tst.global.b{width} [%rd_out+{8 * k}], {name};")
            table.append({"out": k, "ptx": text, "opcode": slot.opcode, "dst": kind, "width": width})
            k += 1
    decls = [
        "\t.reg .b64 %rd_in, %rd_out, %rd_t;",
        "\t.reg .b32 %tx, %cx, %nx, %gtid;",
        "\t.reg .b16 %a16, %b16, %c16;",
        "\t.reg .b32 %a32, %b32, %c32, %d, %e;",
        "\t.reg .b64 %a64, %b64, %c64;",
        "\t.reg .pred %p0;",
    ]
    decls += [f"\t.reg .{'pred' if k == 'pred' else k} {REG_PREFIX[k]}<{max(counts[k], 1)}>;" for k in REG_PREFIX]
    head = [
        f".version {PTX_VERSION}",
        ".target sm_90",
        ".address_size 64",
        "",
        f"// generated by silicon/generate.py (family {family}, seed {SEED}): {len(table)} result slots per thread",
        f".visible .entry gen_{family}(",
        "\t.param .u64 in_ptr,",
        "\t.param .u64 out_ptr",
        ")",
        "{",
        *decls,
        "\tmov.u32 %tx, %tid.x;",
        "\tmov.u32 %cx, %ctaid.x;",
        "\tmov.u32 %nx, %ntid.x;",
        "\tmad.lo.u32 %gtid, %cx, %nx, %tx;",
        "\tld.param.u64 %rd_in, [in_ptr];",
        "\tld.param.u64 %rd_out, [out_ptr];",
        "\tcvta.to.global.u64 %rd_in, %rd_in;",
        "\tcvta.to.global.u64 %rd_out, %rd_out;",
        f"\tmul.wide.u32 %rd_t, %gtid, {IN_STRIDE};",
        "\tadd.u64 %rd_in, %rd_in, %rd_t;",
        f"\tmul.wide.u32 %rd_t, %gtid, {8 * len(table)};",
        "\tadd.u64 %rd_out, %rd_out, %rd_t;",
        "\tld.global.b64 %a64, [%rd_in+0];",
        "\tld.global.b64 %b64, [%rd_in+8];",
        "\tld.global.b64 %c64, [%rd_in+16];",
        "\tld.global.b32 %a32, [%rd_in+0];",
        "\tld.global.b32 %b32, [%rd_in+8];",
        "\tld.global.b32 %c32, [%rd_in+16];",
        "\tld.global.b16 %a16, [%rd_in+0];",
        "\tld.global.b16 %b16, [%rd_in+8];",
        "\tld.global.b16 %c16, [%rd_in+16];",
        "\tld.global.b32 %d, [%rd_in+24];",
        "\tld.global.b32 %e, [%rd_in+28];",
        f"\t{PRED_SETUP[family]}",
    ]
    return "\n".join([*head, *body, "\tret;", "}", ""]), table


BLOCK = 128


def write_all(families: list[str]) -> None:
    PROGRAMS.mkdir(exist_ok=True)
    for family in families:
        text, table = program(family)
        threads, data = make_inputs(family)
        name = f"gen_{family}"
        (PROGRAMS / f"{name}.ptx").write_text(text)
        spec: dict[str, object] = {
            "kernel": name,
            "ptx": f"{name}.ptx",
            "grid": [threads // BLOCK, 1, 1],
            "block": [BLOCK, 1, 1],
            "cluster": [1, 1, 1],
            "dynamic_smem": 0,
            "params": [
                {"name": "in_ptr", "buffer": {"dtype": "u8", "nbytes": len(data), "init": encode(data)}},
                {"name": "out_ptr", "buffer": {"dtype": "u64", "nbytes": threads * 8 * len(table), "init": ZEROS}},
            ],
            "outputs": ["out_ptr"],
            "generated": {"family": family, "seed": SEED, "in_stride": IN_STRIDE, "slots": table},
        }
        (PROGRAMS / f"{name}.json").write_text(json.dumps(spec, indent=1) + "\n")
        print(f"{name}: {threads} threads x {len(table)} slots = {threads * len(table)} cases")


ZEROS = {"encoding": "zeros"}


def encode(data: bytes) -> dict[str, str]:
    """Buffer bytes as stored in specs and fixtures: zlib-compressed, then base64."""
    return {"encoding": "zlib+base64", "data": base64.b64encode(zlib.compress(data, 9)).decode()}


def decode(blob: dict[str, str], nbytes: int) -> bytes:
    if blob["encoding"] == "zeros":
        return bytes(nbytes)
    if blob["encoding"] != "zlib+base64":
        raise ValueError(f"unknown buffer encoding {blob['encoding']!r}")
    data = zlib.decompress(base64.b64decode(blob["data"]))
    if len(data) != nbytes:
        raise ValueError(f"buffer holds {len(data)} bytes, expected {nbytes}")
    return data


if __name__ == "__main__":
    write_all(sys.argv[1:] or list(FAMILIES))

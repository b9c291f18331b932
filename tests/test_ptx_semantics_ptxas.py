"""The spellings `xdsl_tmem.interpreter.ptx.decode` accepts are PTX, and some it refuses are
not: ptxas (sm_100a) is the oracle.

Every spelling of `ACCEPTED` decodes, runs on 32 lanes with results of the declared dtypes,
and — written out as one instruction with registers of its operand types — assembles.
Every line of `REFUSED` is refused by both `decode` and ptxas.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from external import ToolFailed
from support import ptxas_assemble

from xdsl_tmem.interpreter.ptx import LANE_DTYPE, Semantics, UnsupportedInstruction, decode

# one spelling per line: opcode.modifiers [pair|pack=N|unpack=N]
ACCEPTED = """
add.s32 add.u64 add.s16 add.sat.s32 add.cc.u32 addc.cc.u32 addc.s64 sub.cc.s32 subc.u32 add.u16x2
mul.lo.s32 mul.hi.u32 mul.hi.s64 mul.wide.s32 mul.wide.u16 mad.lo.u32 mad.hi.sat.s32 mad.wide.u32
mad.lo.cc.u32 madc.hi.cc.u32 madc.lo.u64 mul24.lo.s32 mul24.hi.u32 mad24.hi.sat.s32 mad24.lo.u32
sad.u32 sad.s64 div.s32 div.u64 rem.s16 rem.u32 abs.s32 neg.s64 min.u32 max.s16 max.relu.s32
min.s16x2 popc.b32 popc.b64 clz.b32 clz.b64 bfind.u32 bfind.shiftamt.s64 fns.b32 brev.b32 brev.b64
bfe.u32 bfe.s64 bfi.b32 bfi.b64 szext.clamp.s32 szext.wrap.u32 bmsk.clamp.b32 dp4a.s32.u32
dp2a.lo.s32.s32 dp2a.hi.u32.u32 prmt.b32 prmt.b32.f4e prmt.b32.b4e prmt.b32.rc8 prmt.b32.ecl
prmt.b32.ecr prmt.b32.rc16 lop3.b32 shf.l.wrap.b32 shf.r.clamp.b32 shl.b32 shl.b64 shr.s32
shr.u16 shr.b64 and.b32 or.pred xor.b64 not.b16 cnot.b32
setp.lt.s32 setp.hs.u64 setp.ne.b32 setp.gtu.f32|pair setp.num.and.f64 setp.lt.or.ftz.f32
setp.eq.f16 setp.le.f16x2 setp.neu.bf16x2 setp.gt.xor.s32|pair
set.lt.u32.f32 set.gtu.and.s32.f64 set.ne.f32.s32 set.lt.f16x2.f16x2 set.lt.u32.f16x2
selp.b32 selp.f64 selp.s16 slct.u32.s32 slct.ftz.f32.f32
add.rn.f32 add.rz.ftz.sat.f32 sub.rm.f64 mul.rp.f32 add.rn.f16 add.rn.sat.f16x2 mul.rn.bf16
sub.rn.bf16x2 fma.rn.f32 fma.rz.ftz.sat.f32 fma.rp.f64 fma.rn.relu.f16x2 fma.rn.bf16 fma.rn.relu.bf16x2
mad.rn.f32 mad.rm.f64 div.rn.f32 div.approx.ftz.f32 div.full.f32 div.rp.f64 rcp.rn.f32
rcp.approx.ftz.f32 rcp.rz.f64 rcp.approx.ftz.f64 sqrt.approx.f32 sqrt.rm.ftz.f32 sqrt.rn.f64
rsqrt.approx.f32 rsqrt.approx.f64 ex2.approx.ftz.f32 ex2.approx.f16 ex2.approx.ftz.bf16x2
lg2.approx.f32 sin.approx.ftz.f32 cos.approx.f32 tanh.approx.f32 tanh.approx.f16x2 tanh.approx.bf16
min.f32 max.NaN.f32 min.ftz.NaN.f32 max.xorsign.abs.f32 min.f64 max.f16 min.NaN.f16x2
max.xorsign.abs.bf16 min.bf16x2 abs.f32 abs.ftz.f32 neg.f64 abs.f16 neg.bf16x2 copysign.f32
copysign.f64 testp.finite.f32 testp.subnormal.f64 testp.notanumber.f32
cvt.s8.s32 cvt.sat.u8.s32 cvt.u32.s16 cvt.sat.s32.u64 cvt.s64.s32 cvt.rni.s32.f32
cvt.rzi.ftz.u32.f32 cvt.rmi.s64.f64 cvt.rpi.u16.f16 cvt.rni.sat.s8.f32 cvt.rn.f32.s32
cvt.rz.f64.u64 cvt.rm.f16.s32 cvt.rp.f32.u64 cvt.rn.f32.f64 cvt.rz.ftz.f32.f64 cvt.f64.f32
cvt.ftz.f64.f32 cvt.f32.f16 cvt.f32.bf16 cvt.rn.f16.f32 cvt.rz.f16.f32 cvt.rn.bf16.f32
cvt.rn.relu.f16.f32 cvt.rn.satfinite.bf16.f32 cvt.rni.f32.f32 cvt.rzi.ftz.f32.f32 cvt.sat.f32.f32
cvt.rn.f16x2.f32 cvt.rn.relu.bf16x2.f32 cvt.rn.satfinite.e4m3x2.f32 cvt.rn.satfinite.relu.e5m2x2.f32
cvt.rn.satfinite.e4m3x2.f16x2 cvt.rn.f16x2.e4m3x2 cvt.rn.relu.f16x2.e5m2x2 cvt.rna.tf32.f32
cvt.rna.satfinite.tf32.f32 cvt.rn.satfinite.e2m1x2.f32 cvt.rn.satfinite.e2m3x2.f32
cvt.rn.satfinite.e3m2x2.f32 cvt.rn.f16x2.e2m1x2 cvt.rn.f16x2.e2m3x2 cvt.pack.sat.s16.s32
cvt.pack.sat.u8.s32.b32 mov.b32 mov.f32 mov.pred mov.b64|pack=2 mov.b32|pack=2 mov.b64|unpack=4
mov.b32|unpack=2
add.s16x2 min.relu.s16x2 ex2.approx.ftz.bf16 cvt.rn.satfinite.e2m1x2.f16x2 cvt.rn.relu.f16x2.e2m1x2
cvt.rn.f16x2.e3m2x2 cvt.sat.u32.s32 cvt.sat.s32.u32 cvt.sat.u64.s32 cvt.s32.s32 cvt.f32.f32
cvt.rz.relu.f16.f32 cvt.rn.relu.satfinite.f16.f32 cvt.rni.s32.bf16 cvt.rn.bf16.s32 cvt.rm.f16.u64
cvt.ftz.sat.f32.f32 cvt.sat.f16.f16 cvt.sat.f64.f64 cvt.rn.sat.f16.f32 cvt.rni.bf16.bf16 cvt.rn.bf16.f16
cvt.rz.bf16.f32 cvt.rn.bf16.f64 cvt.rz.satfinite.bf16x2.f32 cvt.rn.satfinite.relu.tf32.f32
cvt.rz.satfinite.tf32.f32 cvt.f64.bf16 cvt.ftz.f32.f16 rsqrt.approx.ftz.f64 div.full.ftz.f32
mul.rn.sat.f32 mad.rn.sat.f32 fma.rn.ftz.relu.f16 min.NaN.xorsign.abs.f16 max.ftz.NaN.xorsign.abs.f16x2
neg.ftz.f16x2 neg.s16 abs.s16 mul.lo.u16 mad.hi.u16 sad.s16 set.lt.bf16x2.bf16x2 set.lt.s32.s64
mov.b16 mov.b32|pack=4 mov.b64|unpack=4 add.cc.u64 mad.hi.cc.s64 dp2a.lo.u32.s32 slct.f64.s32
setp.lt.u16 setp.eq.b16 cnot.b64 not.pred shl.b16 shr.s16 and.b16 selp.u64
""".split()

REFUSED = [
    "add.sat.u32 %r1, %r2, %r3;",  # .sat is .s32 only
    "mul.u32 %r1, %r2, %r3;",  # integer mul needs .lo/.hi/.wide
    "mul.wide.u64 %rd1, %rd2, %rd3;",  # .wide on 64-bit
    "fma.f32 %f1, %f2, %f3, %f4;",  # fma needs a rounding modifier
    "cvt.rn.s32.f32 %r1, %f1;",  # float -> integer rounds with .rni/.rzi/...
    "cvt.rni.f16.f32 %rs1, %f1;",  # integer rounding on a narrowing float cvt
    "cvt.f16.f32 %rs1, %f1;",  # narrowing needs a rounding modifier
    "setp.lo.s32 %p1, %r1, %r2;",  # unsigned comparison on a signed type
    "sin.f32 %f1, %f2;",  # sin exists only as .approx
    "add.rn.rz.f32 %f1, %f2, %f3;",  # two rounding modifiers
    "shf.l.b32 %r1, %r2, %r3, %r4;",  # shf needs .clamp or .wrap
    "cvt.rn.e4m3x2.f32 %rs1, %f1, %f2;",  # e4m3x2 conversions are .satfinite
    "mad.f16 %rs1, %rs2, %rs3, %rs4;",  # no mad on halves (fma is)
    "abs.u32 %r1, %r2;",  # abs on signed types
    "rsqrt.f32 %f1, %f2;",  # rsqrt is .approx only
    "sub.s16x2 %r1, %r2, %r3;",  # only add/min/max have 16x2 integer forms
    "add.sat.s16x2 %r1, %r2, %r3;",
    "ex2.approx.bf16 %rs1, %rs2;",  # .bf16 needs .ftz
    "ex2.approx.ftz.f16 %rs1, %rs2;",  # .f16 takes no .ftz
    "tanh.approx.ftz.f32 %f1, %f2;",
    "div.f64 %fd1, %fd2, %fd3;",  # f64 div/rcp/sqrt need a rounding modifier
    "rcp.f64 %fd1, %fd2;",
    "sqrt.f64 %fd1, %fd2;",
    "sqrt.f32 %f1, %f2;",
    "sqrt.approx.ftz.f64 %fd1, %fd2;",
    "rcp.approx.f64 %fd1, %fd2;",  # needs .ftz
    "mad.f64 %fd1, %fd2, %fd3, %fd4;",
    "cvt.rn.satfinite.e2m3x2.f16x2 %rs1, %r2;",
    "cvt.rn.satfinite.e4m3x2.bf16x2 %rs1, %r2;",
    "cvt.rn.bf16x2.e4m3x2 %r1, %rs2;",
    "cvt.sat.s64.s32 %rd1, %r2;",  # .sat where nothing can overflow
    "cvt.sat.s16.s16 %rs1, %rs2;",
    "cvt.rn.f32.f32 %f1, %f2;",
    "cvt.rn.f64.f32 %fd1, %f2;",
    "cvt.rn.f32.f16 %f1, %rs2;",
    "cvt.relu.f16.f32 %rs1, %f2;",
    "cvt.rn.relu.bf16.f64 %rs1, %fd2;",
    "cvt.rn.satfinite.f16.f64 %rs1, %fd2;",
    "cvt.rna.relu.tf32.f32 %r1, %f2;",
    "cvt.rzi.ftz.s32.f16 %r1, %rs2;",
    "testp.normal.f16 %p1, %rs2;",
    "copysign.f16 %rs1, %rs2, %rs3;",
    "popc.b16 %r1, %rs2;",
    "brev.b16 %rs1, %rs2;",
    "setp.lt.b32 %p1, %r2, %r3;",
    "fma.rn.sat.bf16 %rs1, %rs2, %rs3, %rs4;",
    "add.rz.f16 %rs1, %rs2, %rs3;",
    "add.ftz.bf16 %rs1, %rs2, %rs3;",
    "min.ftz.bf16 %rs1, %rs2, %rs3;",
    "abs.ftz.bf16 %rs1, %rs2;",
]

# register file of the test kernel: PTX register type and name prefix per operand type
REG: dict[str, tuple[str, str]] = {
    "pred": ("pred", "p"),
    "b8": ("b8", "rc"),
    "u8": ("b16", "rs"),
    "s8": ("b16", "rs"),
    "b16": ("b16", "rs"),
    "u16": ("b16", "rs"),
    "s16": ("b16", "rs"),
    "f16": ("b16", "rs"),
    "bf16": ("b16", "rs"),
    "e4m3x2": ("b16", "rs"),
    "e5m2x2": ("b16", "rs"),
    "e2m3x2": ("b16", "rs"),
    "e3m2x2": ("b16", "rs"),
    "e2m1x2": ("b8", "rc"),
    "b32": ("b32", "r"),
    "u32": ("b32", "r"),
    "s32": ("b32", "r"),
    "f16x2": ("b32", "r"),
    "bf16x2": ("b32", "r"),
    "tf32": ("b32", "r"),
    "u16x2": ("b32", "r"),
    "s16x2": ("b32", "r"),
    "f32": ("f32", "f"),
    "b64": ("b64", "rd"),
    "u64": ("b64", "rd"),
    "s64": ("b64", "rd"),
    "f64": ("f64", "fd"),
}
HEADER = """.version 8.7
.target sm_100a
.address_size 64
.visible .entry k()
{
    .reg .pred %p<8>;
    .reg .b8 %rc<8>;
    .reg .b16 %rs<8>;
    .reg .b32 %r<8>;
    .reg .f32 %f<8>;
    .reg .b64 %rd<8>;
    .reg .f64 %fd<8>;
"""


@pytest.fixture(autouse=True)
def _quiet_fp() -> Iterator[None]:
    with np.errstate(all="ignore"):
        yield


def spelling(entry: str) -> tuple[str, tuple[str, ...], dict[str, Any]]:
    name, _, extra = entry.partition("|")
    op, *mods = name.split(".")
    kw: dict[str, Any] = {}
    if extra == "pair":
        kw["pair"] = True
    elif extra:
        key, value = extra.split("=")
        kw[key] = int(value)
    return op, tuple(mods), kw


def reg(ty: str, i: int) -> str:
    return f"%{REG[ty][1]}{i}"


def instruction(entry: str, sem: Semantics) -> str:
    """The PTX line of `entry`, its operands in registers of their types."""
    op, mods, kw = spelling(entry)
    results = [reg(t, i) for i, t in enumerate(sem.results) if t != "cc"]
    if kw.get("unpack"):
        dst = "{" + ", ".join(results) + "}"
    else:
        dst = "|".join(results)
    sources = [reg(t, 4 + i) for i, t in enumerate(sem.operands) if t != "cc"]
    if op == "lop3":
        sources[-1] = "0x96"
    if kw.get("pack"):
        sources = ["{" + ", ".join(sources) + "}"]
    return f"    {'.'.join((op, *mods))} {dst}, {', '.join(sources)};"


def lanes(ty: str, rng: np.random.Generator) -> Any:
    if ty in ("pred", "cc"):
        return rng.integers(0, 2, 32).astype(bool)
    dt = LANE_DTYPE[ty]
    return rng.integers(0, 256, 32 * dt.itemsize, dtype=np.uint64).astype(np.uint8).view(dt)


def test_accepted_spellings_run_and_assemble(ptxas: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    body: list[str] = []
    for entry in ACCEPTED:
        op, mods, kw = spelling(entry)
        sem = decode(op, mods, **kw)
        args = [0x96 if (op == "lop3" and i == 3) else lanes(t, rng) for i, t in enumerate(sem.operands)]
        out: np.ndarray[Any, Any] | tuple[np.ndarray[Any, Any], ...] = sem.fn(*args)
        values: tuple[np.ndarray[Any, Any], ...] = out if isinstance(out, tuple) else (out,)
        assert len(values) == len(sem.results), entry
        for value, ty in zip(values, sem.results, strict=True):
            want = LANE_DTYPE[ty]
            assert value.shape == (32,), entry
            assert value.dtype == want or (ty in ("s8", "u8") and value.dtype.itemsize == 1), (entry, value.dtype, ty)
        body.append(instruction(entry, sem))
    ptx = HEADER + "\n".join(body) + "\n    ret;\n}\n"
    try:
        ptxas_assemble(ptxas, ptx, tmp_path)
    except ToolFailed as e:
        numbered = "\n".join(f"{i + 1:4d} {line}" for i, line in enumerate(ptx.splitlines()))
        pytest.fail(f"{e}\n{numbered}")


@pytest.mark.parametrize("line", REFUSED)
def test_refused_spellings_are_not_ptx(line: str, ptxas: str, tmp_path: Path) -> None:
    op, *mods = line.split()[0].split(".")
    with pytest.raises(UnsupportedInstruction):
        decode(op, tuple(mods))
    with pytest.raises(ToolFailed):
        ptxas_assemble(ptxas, HEADER + "    " + line + "\n    ret;\n}\n", tmp_path)

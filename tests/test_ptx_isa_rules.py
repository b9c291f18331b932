"""The ptx dialect's verifiers against ptxas, rule by rule.

Each case is one PTX ISA rule: a valid instruction and one that breaks the rule, both
built as typed ptx ops. Our verifier must accept the first and reject the second with a
message naming the op, the bad value and what is allowed; ptxas (the independent
oracle) must assemble the printed valid line and reject the printed invalid one, each in
a tiny kernel. The printed lines come from the ops' derived mnemonics, so a wrong
mnemonic fails the ptxas half too.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from external import ToolFailed, run_tool
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, UnitAttr, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import BaseAttr
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.backend.printer import operand_text
from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.ptx import CmpOp, IntMode, MemSemantic, PtxType, Rounding, StateSpace
from xdsl_tmem.dialects.ptx import values as V

ARCH = "sm_100a"
VERSION = "8.8"
"""PTX ISA 8.8: the oldest version with every valid form below (256-bit `ld.global`)."""
KERNEL = """\
.version {version}
.target {arch}
.address_size 64
.shared .align 8 .b8 smem[64];
.visible .entry k(.param .u64 k_param_0)
{{
    .reg .pred %p<9>;
    .reg .b16 %rs<9>;
    .reg .b32 %r<9>;
    .reg .b64 %rd<9>;
{lines}
    ret;
}}
"""

T = PtxType
AOP = ptx.AtomicOperation
AT = ptx.AtomicType
ASP = ptx.AtomicSpace
CTA = nvvm.MemScopeKind.CTA
CLUSTER = nvvm.MemScopeKind.CLUSTER


def reg(kind: str, index: int = 1) -> SSAValue:
    return ptx.RegisterOp(ptx.RegisterType(kind, index)).result


def p(i: int = 1) -> SSAValue:
    return reg("pred", i)


def rs(i: int = 1) -> SSAValue:
    return reg("b16", i)


def r(i: int = 1) -> SSAValue:
    return reg("b32", i)


def rd(i: int = 1) -> SSAValue:
    return reg("b64", i)


def t(kind: str, index: int = 1) -> ptx.RegisterType:
    return ptx.RegisterType(kind, index)


def imm(value: int, width: int = 32) -> SSAValue:
    return ptx.ImmOp(IntegerAttr(value, IntegerType(width))).result


def fimm(value: float) -> SSAValue:
    return ptx.ImmOp(FloatAttr(value, f32)).result


def smem() -> SSAValue:
    return ptx.SymbolOp("smem").result


FT = V.FloatType
FR = V.FloatRounding
MM = V.MinMaxType
WT = V.WordType
BM = V.BitsMode
ST = V.SelectType
CT = V.CompareType
SR = V.SetResultType
IC = V.IntCvtType
FC = V.FloatCvtType
IR = V.IntRounding
SAT = V.Saturation
TR = V.TfRounding
PS = V.PackSatType
PF = ptx.PackedFloat
PT = ptx.PtxTypeAttr
CMP = ptx.CmpOpAttr
U = UnitAttr()
MODE_LO = ptx.IntModeAttr(IntMode.LO)
MODE_HI = ptx.IntModeAttr(IntMode.HI)
MODE_WIDE = ptx.IntModeAttr(IntMode.WIDE)
BOOL_AND = ptx.BoolOpAttr(ptx.BoolOp.AND)


def v(cls: type[V.SpelledOp], dest: str, *sources: SSAValue | None, **props: object) -> ptx.Instruction:
    """A values.py op: one destination register, the sources, the properties (enum values
    wrapped in their attribute)."""
    attrs: dict[str, Attribute] = {}
    for name, value in props.items():
        if not isinstance(value, Attribute):
            constr = cls.get_irdl_definition().properties[name].constr
            assert isinstance(constr, BaseAttr)
            attrs[name] = constr.attr(value)  # pyright: ignore[reportCallIssue]
        else:
            attrs[name] = value
    absent: list[None] = [None] * (len(cls.get_irdl_definition().results) - 1)  # optional results (setp's q)
    return cls.build(operands=[*sources, None], result_types=[t(dest), *absent], properties=attrs)


Build = Callable[[], ptx.Instruction]


@dataclass(frozen=True)
class Rule:
    id: str
    good: Build
    bad: Build
    says: tuple[str, ...]
    """Fragments of our message: the bad value and what is allowed."""


def _without(build: Build, prop: str) -> Build:
    """The op with one property removed (forms the typed constructors cannot build)."""

    def make() -> ptx.Instruction:
        op = build()
        del op.properties[prop]
        return op

    return make


def _wait(
    kind: ptx.MbarrierWaitKind = ptx.MbarrierWaitKind.TRY_WAIT,
    *,
    parity: bool = True,
    space: StateSpace | None = StateSpace.SHARED,
    order: ptx.Ordering | None = None,
) -> ptx.MbarrierWaitForm:
    return ptx.MbarrierWaitForm(kind, parity, space, order)


DROP = ptx.ArriveVariant(drop=True)
NO_COMPLETE = ptx.ArriveVariant(no_complete=True)
DROP_NO_COMPLETE = ptx.ArriveVariant(drop=True, no_complete=True)
MMA1 = ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F16)
MMA_TMEM = ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F16, a_tmem=True)
CP = nvvm.Tcgen05CpShape
MC = nvvm.Tcgen05CpMulticast
LDST = nvvm.Tcgen05LdStShape
TO_CTA = ptx.BulkTensorDirection.TO_SHARED_CTA
TO_CLUSTER = ptx.BulkTensorDirection.TO_SHARED_CLUSTER
TO_GLOBAL = ptx.BulkTensorDirection.TO_GLOBAL

RULES = [
    # ---- integer and floating-point arithmetic ----
    Rule("add-int-rounding", lambda: ptx.AddOp(T.S32, t("b32"), r(2), r(3)),
         lambda: ptx.AddOp(T.S32, t("b32"), r(2), r(3), rounding=Rounding.RN),
         ("rounding .rn on .s32", "only floating-point types round")),
    Rule("add-float-integral-rounding", lambda: ptx.AddOp(T.F32, t("b32"), r(2), r(3), rounding=Rounding.RZ),
         lambda: ptx.AddOp(T.F32, t("b32"), r(2), r(3), rounding=Rounding.RNI),
         ("rounding .rni", "add rounds with .rn/.rz/.rm/.rp")),
    Rule("add-bit-type", lambda: ptx.AddOp(T.U32, t("b32"), r(2), r(3)),
         lambda: ptx.AddOp(T.B32, t("b32"), r(2), r(3)), ("type .b32", "add takes .u16/.u32/.u64/.s16")),
    Rule("sub-no-pred", lambda: ptx.SubOp(T.F64, t("b64"), rd(2), rd(3), rounding=Rounding.RP),
         lambda: ptx.SubOp(T.PRED, t("pred"), p(2), p(1)), ("type .pred", "sub takes")),
    Rule("mul-int-needs-mode", lambda: ptx.MulOp(T.S32, t("b32"), r(2), r(3), mode=IntMode.LO),
         lambda: ptx.MulOp(T.S32, t("b32"), r(2), r(3)), ("mul.s32 without a mode", ".lo/.hi/.wide")),
    Rule("mul-float-no-mode", lambda: ptx.MulOp(T.F32, t("b32"), r(2), r(3), rounding=Rounding.RN),
         lambda: ptx.MulOp(T.F32, t("b32"), r(2), r(3), mode=IntMode.LO), (".lo on .f32", "only integer types")),
    Rule("mul-wide-64", lambda: ptx.MulOp(T.S32, t("b64"), r(2), r(3), mode=IntMode.WIDE),
         lambda: ptx.MulOp(T.S64, t("b64"), rd(2), rd(3), mode=IntMode.WIDE),
         (".wide on .s64", ".wide takes 16- and 32-bit types")),
    Rule("mul-wide-destination", lambda: ptx.MulOp(T.S32, t("b64"), r(2), r(3), mode=IntMode.WIDE),
         lambda: ptx.MulOp(T.S32, t("b32"), r(2), r(3), mode=IntMode.WIDE),
         ("destination a .b32 register (%r1)", "it must be a .b64 register")),
    Rule("mad-lo-integer-only", lambda: ptx.MadOp(T.S32, t("b32"), (r(2), r(3), r(4)), mode=IntMode.LO),
         lambda: ptx.MadOp(T.F32, t("b32"), (r(2), r(3), r(4)), mode=IntMode.LO, rounding=Rounding.RN),
         (".lo on .f32", "only integer types take .lo/.hi/.wide")),
    Rule("mad-float-needs-rounding",
         lambda: ptx.MadOp(T.F32, t("b32"), (r(2), r(3), r(4)), rounding=Rounding.RN),
         lambda: ptx.MadOp(T.F32, t("b32"), (r(2), r(3), r(4))), ("mad.f32 without rounding", ".rn/.rz/.rm/.rp")),
    Rule("fma-needs-rounding", lambda: ptx.FmaOp(T.F32, t("b32"), (r(2), r(3), r(4)), rounding=Rounding.RN),
         lambda: ptx.FmaOp(T.F32, t("b32"), (r(2), r(3), r(4))), ("fma.f32 without rounding", "it needs one of .rn")),
    Rule("fma-float-only", lambda: ptx.FmaOp(T.F64, t("b64"), (rd(2), rd(3), rd(4)), rounding=Rounding.RN),
         lambda: ptx.FmaOp(T.S32, t("b32"), (r(2), r(3), r(4)), rounding=Rounding.RN),
         ("type .s32", "fma takes .f16/.bf16/.f32/.f64")),
    Rule("div-float-needs-rounding", lambda: ptx.DivOp(T.F32, t("b32"), r(2), r(3), precision=ptx.DivPrecision.FULL),
         lambda: ptx.DivOp(T.F32, t("b32"), r(2), r(3)), ("div.f32 without rounding", ".rn/.rz/.rm/.rp")),
    Rule("div-approx-f32-only", lambda: ptx.DivOp(T.F32, t("b32"), r(2), r(3), precision=ptx.DivPrecision.APPROX),
         lambda: ptx.DivOp(T.F64, t("b64"), rd(2), rd(3), precision=ptx.DivPrecision.APPROX),
         (".approx on .f64", ".approx and .full are .f32 only")),
    Rule("div-approx-or-rounding", lambda: ptx.DivOp(T.F32, t("b32"), r(2), r(3), rounding=Rounding.RZ),
         lambda: ptx.DivOp(T.F32, t("b32"), r(2), r(3), rounding=Rounding.RN, precision=ptx.DivPrecision.APPROX),
         (".approx with .rn", "give a rounding mode or .approx/.full")),
    Rule("div-f64-needs-rounding", lambda: ptx.DivOp(T.F64, t("b64"), rd(2), rd(3), rounding=Rounding.RN),
         lambda: ptx.DivOp(T.F64, t("b64"), rd(2), rd(3)), ("div.f64 without rounding",)),
    Rule("div-int-no-rounding", lambda: ptx.DivOp(T.S32, t("b32"), r(2), r(3)),
         lambda: ptx.DivOp(T.S32, t("b32"), r(2), r(3), rounding=Rounding.RN), ("rounding .rn on .s32",)),
    Rule("rem-integer-only", lambda: ptx.RemOp(T.U64, t("b64"), rd(2), rd(3)),
         lambda: ptx.RemOp(T.F32, t("b32"), r(2), r(3)), ("type .f32", "rem takes .u16/.u32/.u64/.s16/.s32/.s64")),
    Rule("min-nan-not-f64", lambda: ptx.MinOp(T.F32, t("b32"), r(2), r(3), nan=True),
         lambda: ptx.MinOp(T.F64, t("b64"), rd(2), rd(3), nan=True), (".NaN on .f64", ".NaN takes .f16/.bf16/.f32")),
    Rule("max-no-bit-type", lambda: ptx.MaxOp(T.U16, t("b16"), rs(2), rs(3)),
         lambda: ptx.MaxOp(T.B32, t("b32"), r(2), r(3)), ("type .b32", "max takes")),
    Rule("neg-signed-or-float", lambda: ptx.NegOp(T.S32, t("b32"), r(2)),
         lambda: ptx.NegOp(T.U32, t("b32"), r(2)), ("type .u32", "neg takes .s16/.s32/.s64/.f16/.bf16/.f32/.f64")),
    # ---- logic and shift ----
    Rule("and-bit-types", lambda: ptx.AndOp(T.B32, t("b32"), r(2), r(3)),
         lambda: ptx.AndOp(T.U32, t("b32"), r(2), r(3)), ("type .u32", "and takes .pred/.b16/.b32/.b64")),
    Rule("or-bit-types", lambda: ptx.OrOp(T.PRED, t("pred"), p(2), p(1)),
         lambda: ptx.OrOp(T.S64, t("b64"), rd(2), rd(3)), ("type .s64", "or takes .pred/.b16/.b32/.b64")),
    Rule("xor-bit-types", lambda: ptx.XorOp(T.B16, t("b16"), rs(2), imm(1, 16)),
         lambda: ptx.XorOp(T.F32, t("b32"), r(2), r(3)), ("type .f32", "xor takes")),
    Rule("not-bit-types", lambda: ptx.NotOp(T.PRED, t("pred"), p(2)),
         lambda: ptx.NotOp(T.S32, t("b32"), r(2)), ("type .s32", "not takes .pred/.b16/.b32/.b64")),
    Rule("shl-bit-types", lambda: ptx.ShlOp(T.B32, t("b32"), r(2), imm(3)),
         lambda: ptx.ShlOp(T.U32, t("b32"), r(2), imm(3)), ("type .u32", "shl takes .b16/.b32/.b64")),
    Rule("shr-no-float", lambda: ptx.ShrOp(T.S16, t("b16"), rs(2), r(3)),
         lambda: ptx.ShrOp(T.F32, t("b32"), r(2), r(3)), ("type .f32", "shr takes")),
    Rule("shift-amount-u32", lambda: ptx.ShlOp(T.B64, t("b64"), rd(2), r(3)),
         lambda: ptx.ShlOp(T.B64, t("b64"), rd(2), rd(3)),
         ("shift amount a .b64 register (%rd3)", "it must be a .b32 register or an immediate")),
    # ---- moves, operands and immediates ----
    Rule("mov-types", lambda: ptx.MovOp(T.B16, t("b16"), rs(2)),
         lambda: ptx.MovOp(T.B8, t("b16"), rs(2)), ("type .b8", "mov takes .pred/.b16")),
    Rule("float-type-float-literal", lambda: ptx.MovOp(T.F32, t("b32"), fimm(1.0)),
         lambda: ptx.MovOp(T.F32, t("b32"), imm(1)), ("the immediate 1", "a .f32 operand takes a float literal")),
    Rule("int-type-int-literal", lambda: ptx.AddOp(T.S32, t("b32"), r(2), imm(1)),
         lambda: ptx.AddOp(T.S32, t("b32"), r(2), fimm(1.0)),
         ("the immediate 0f3F800000", "a .s32 operand takes an integer literal")),
    Rule("float-literal-width", lambda: ptx.MovOp(T.B32, t("b32"), fimm(1.0)),
         lambda: ptx.MovOp(T.B16, t("b16"), fimm(1.0)), ("the immediate 0f3F800000", "a .b16 operand takes a 16-bit")),
    Rule("operand-register-class", lambda: ptx.AddOp(T.S32, t("b32"), r(2), r(3)),
         lambda: ptx.AddOp(T.S32, t("b32"), rd(2), r(3)),
         ("operand a a .b64 register (%rd2)", "it must be a .b32 register")),
    Rule("destination-register-class", lambda: ptx.AddOp(T.S64, t("b64"), rd(2), rd(3)),
         lambda: ptx.AddOp(T.S32, t("b64"), r(2), r(3)), ("destination a .b64 register (%rd1)",)),
    # ---- comparison and selection ----
    Rule("selp-no-pred-type", lambda: ptx.SelpOp(T.B32, t("b32"), r(2), r(3), p(1)),
         lambda: ptx.SelpOp(T.PRED, t("pred"), p(2), p(1), p(2)), ("type .pred", "selp takes")),
    Rule("selp-selector-predicate", lambda: ptx.SelpOp(T.F32, t("b32"), r(2), r(3), p(1)),
         lambda: ptx.SelpOp(T.B32, t("b32"), r(2), r(3), r(4)),
         ("selector a .b32 register (%r4)", "it must be a .pred register")),
    Rule("setp-bit-eq-ne", lambda: ptx.SetpOp(CmpOp.EQ, T.B32, t("pred"), r(2), r(3)),
         lambda: ptx.SetpOp(CmpOp.LT, T.B32, t("pred"), r(2), r(3)),
         ("comparison .lt on .b32", ".b32 compares with .eq/.ne")),
    Rule("setp-lo-unsigned", lambda: ptx.SetpOp(CmpOp.LO, T.U32, t("pred"), r(2), r(3)),
         lambda: ptx.SetpOp(CmpOp.LO, T.S32, t("pred"), r(2), r(3)),
         ("comparison .lo on .s32", ".s32 compares with .eq/.ne/.lt/.le/.gt/.ge")),
    Rule("setp-unordered-float", lambda: ptx.SetpOp(CmpOp.EQU, T.F32, t("pred"), r(2), r(3)),
         lambda: ptx.SetpOp(CmpOp.EQU, T.U32, t("pred"), r(2), r(3)), ("comparison .equ on .u32",)),
    Rule("setp-lo-not-float", lambda: ptx.SetpOp(CmpOp.NAN, T.F64, t("pred"), rd(2), rd(3)),
         lambda: ptx.SetpOp(CmpOp.LO, T.F32, t("pred"), r(2), r(3)), ("comparison .lo on .f32",)),
    Rule("setp-predicate-result", lambda: ptx.SetpOp(CmpOp.NE, T.B16, t("pred"), rs(2), rs(3)),
         lambda: ptx.SetpOp(CmpOp.EQ, T.B32, t("b32"), r(2), r(3)),
         ("destination a .b32 register (%r1)", "it must be a .pred register")),
    # ---- cvt ----
    Rule("cvt-float-to-int-integral", lambda: ptx.CvtOp(T.S32, T.F32, t("b32"), r(2), Rounding.RZI),
         lambda: ptx.CvtOp(T.S32, T.F32, t("b32"), r(2)), ("cvt.s32.f32 without rounding", ".rni/.rzi/.rmi/.rpi")),
    Rule("cvt-float-to-int-not-rn", lambda: ptx.CvtOp(T.U16, T.F16, t("b16"), rs(2), Rounding.RNI),
         lambda: ptx.CvtOp(T.S32, T.F32, t("b32"), r(2), Rounding.RN),
         ("rounding .rn on .s32.f32", ".s32.f32 takes .rni/.rzi/.rmi/.rpi")),
    Rule("cvt-int-to-float-rounding", lambda: ptx.CvtOp(T.F32, T.S32, t("b32"), r(2), Rounding.RN),
         lambda: ptx.CvtOp(T.F64, T.S32, t("b64"), r(2)), ("cvt.f64.s32 without rounding", ".rn/.rz/.rm/.rp")),
    Rule("cvt-int-to-float-not-integral", lambda: ptx.CvtOp(T.F16, T.S32, t("b16"), r(2), Rounding.RZ),
         lambda: ptx.CvtOp(T.F32, T.S32, t("b32"), r(2), Rounding.RZI), ("rounding .rzi on .f32.s32",)),
    Rule("cvt-narrowing-float", lambda: ptx.CvtOp(T.F32, T.F64, t("b32"), rd(2), Rounding.RN),
         lambda: ptx.CvtOp(T.F16, T.F32, t("b16"), r(2)), ("cvt.f16.f32 without rounding",)),
    Rule("cvt-widening-float", lambda: ptx.CvtOp(T.F32, T.F16, t("b32"), rs(2)),
         lambda: ptx.CvtOp(T.F64, T.F32, t("b64"), r(2), Rounding.RN), ("rounding .rn on .f64.f32", "takes none")),
    Rule("cvt-same-float-integral", lambda: ptx.CvtOp(T.F32, T.F32, t("b32"), r(2), Rounding.RZI),
         lambda: ptx.CvtOp(T.F32, T.F32, t("b32"), r(2), Rounding.RN), (".f32.f32 takes .rni/.rzi/.rmi/.rpi",)),
    Rule("cvt-int-no-rounding", lambda: ptx.CvtOp(T.U32, T.U64, t("b32"), rd(2)),
         lambda: ptx.CvtOp(T.U32, T.U64, t("b32"), rd(2), Rounding.RZI), ("rounding .rzi on .u32.u64", "takes none")),
    Rule("cvt-no-bit-types", lambda: ptx.CvtOp(T.S16, T.S8, t("b16"), rs(2)),
         lambda: ptx.CvtOp(T.B32, T.U64, t("b32"), rd(2)), ("destination type .b32", "cvt converts .u8")),
    Rule("cvt-source-width", lambda: ptx.CvtOp(T.U16, T.U32, t("b16"), rd(2)),
         lambda: ptx.CvtOp(T.U32, T.U32, t("b32"), rs(2)), ("source a .b16 register (%rs2)", ".b32 (or wider)")),
    # ---- ld / st / cvta / mapa ----
    Rule("ld-types", lambda: ptx.LdOp(StateSpace.SHARED, T.U8, [t("b32")], r(2)),
         lambda: ptx.LdOp(StateSpace.SHARED, T.PRED, [t("pred")], r(2)), ("type .pred", "ld takes .b8")),
    Rule("ld-destination-width", lambda: ptx.LdOp(StateSpace.SHARED, T.F32, [t("b64")], r(2)),
         lambda: ptx.LdOp(StateSpace.SHARED, T.B64, [t("b32")], r(2)),
         ("destination a .b32 register (%r1)", ".b64 (or wider)")),
    Rule("ld-256-bit-global-only",
         lambda: ptx.LdOp(StateSpace.GLOBAL, T.B64, [t("b64", i) for i in (1, 2, 3, 4)], rd(5)),
         lambda: ptx.LdOp(StateSpace.SHARED, T.B64, [t("b64", i) for i in (1, 2, 3, 4)], r(2)),
         (".v4.b64 (256 bits)", "256-bit accesses are .global")),
    Rule("ld-vector-width", lambda: ptx.LdOp(StateSpace.SHARED, T.B32, [t("b32", i) for i in (1, 2, 3, 4)], r(5)),
         lambda: ptx.LdOp(StateSpace.SHARED, T.B32, [t("b32", i) for i in (1, 2, 3)], r(5)),
         ("a vector of 3", ".v2/.v4")),
    Rule("ld-global-64-bit-address", lambda: ptx.LdOp(StateSpace.GLOBAL, T.B32, [t("b32")], rd(2)),
         lambda: ptx.LdOp(StateSpace.GLOBAL, T.B32, [t("b32")], r(2)),
         ("address a .b32 register (%r2)", "a .global address is .b64")),
    Rule("st-not-const", lambda: ptx.StOp(StateSpace.GLOBAL, T.B32, rd(2), [r(1)]),
         lambda: ptx.StOp(StateSpace.CONST, T.B32, rd(2), [r(1)]),
         ("state space .const", "it takes .global/.local/.shared/.shared::cta/.shared::cluster/.param/.param::func")),
    Rule("st-not-kernel-param", lambda: ptx.StOp(StateSpace.SHARED, T.B32, smem(), [r(1)]),
         lambda: ptx.StOp(StateSpace.PARAM, T.B32, ptx.SymbolOp("k_param_0").result, [r(1)]),
         ("state space .param",)),
    Rule("st-float-literal", lambda: ptx.StOp(StateSpace.SHARED, T.F32, r(2), [fimm(1.0)]),
         lambda: ptx.StOp(StateSpace.SHARED, T.F32, r(2), [imm(1)]), ("source the immediate 1",)),
    Rule("st-no-pred", lambda: ptx.StOp(StateSpace.SHARED, T.U8, r(2), [r(1)]),
         lambda: ptx.StOp(StateSpace.SHARED, T.PRED, r(2), [p(1)]), ("type .pred", "st takes")),
    Rule("cvta-u64", lambda: ptx.CvtaOp(StateSpace.SHARED, t("b64"), rd(2)),
         lambda: ptx.CvtaOp(StateSpace.SHARED, t("b32"), r(2), type=T.U32),
         ("type .u32", "cvta (with .address_size 64) takes .u64")),
    Rule("cvta-registers", lambda: ptx.CvtaOp(StateSpace.GLOBAL, t("b64"), rd(2), to_generic=True),
         lambda: ptx.CvtaOp(StateSpace.SHARED, t("b32"), rd(2)), ("destination a .b32 register (%r1)",)),
    Rule("mapa-cluster-space", lambda: ptx.MapaOp(StateSpace.SHARED_CLUSTER, T.U32, t("b32"), r(2), r(3)),
         lambda: ptx.MapaOp(StateSpace.SHARED_CTA, T.U32, t("b32"), r(2), r(3)),
         ("state space .shared::cta", "it takes .shared::cluster")),
    Rule("mapa-rank-32-bit", lambda: ptx.MapaOp(None, T.U64, t("b64"), rd(2), r(3)),
         lambda: ptx.MapaOp(None, T.U64, t("b64"), rd(2), rd(3)), ("rank a .b64 register (%rd3)",)),
    # ---- barriers and fences ----
    Rule("bar-number", lambda: ptx.BarSyncOp(imm(15)), lambda: ptx.BarSyncOp(imm(16)),
         ("barrier number 16", "barriers are numbered 0..15")),
    Rule("bar-thread-count", lambda: ptx.BarSyncOp(imm(0), imm(64)), lambda: ptx.BarSyncOp(imm(0), imm(33)),
         ("thread count 33", "multiple of the warp size")),
    Rule("bar-operand-32-bit", lambda: ptx.BarSyncOp(r(1)), lambda: ptx.BarSyncOp(rd(1)),
         ("barrier number a .b64 register (%rd1)",)),
    Rule("bar-arrive-count", lambda: ptx.BarArriveOp(imm(1), imm(32)), lambda: ptx.BarArriveOp(imm(1), imm(31)),
         ("thread count 31",)),
    Rule("bar-red-popc-result",
         lambda: ptx.BarRedOp(nvvm.BarrierReduction.POPC, t("b32"), imm(0), None, p(1)),
         lambda: ptx.BarRedOp(nvvm.BarrierReduction.POPC, t("pred"), imm(0), None, p(1)),
         ("destination a .pred register (%p1)", "it must be a .b32 register")),
    Rule("bar-red-predicate", lambda: ptx.BarRedOp(nvvm.BarrierReduction.AND, t("pred"), imm(0), imm(64), p(2)),
         lambda: ptx.BarRedOp(nvvm.BarrierReduction.OR, t("pred"), imm(0), None, r(2)),
         ("predicate operand a .b32 register (%r2)",)),
    Rule("bar-warp-sync-mask", lambda: ptx.BarWarpSyncOp(r(1)), lambda: ptx.BarWarpSyncOp(rd(1)),
         ("member mask a .b64 register (%rd1)",)),
    Rule("elect-predicate", lambda: ptx.ElectSyncOp(t("pred"), imm(-1)), lambda: ptx.ElectSyncOp(t("b32"), imm(-1)),
         ("destination a .b32 register (%r1)", "it must be a .pred register")),
    Rule("barrier-cluster-wait-sem",
         lambda: ptx.BarrierClusterOp(ptx.BarrierClusterKind.WAIT, sem=MemSemantic.ACQUIRE, aligned=True),
         lambda: ptx.BarrierClusterOp(ptx.BarrierClusterKind.WAIT, sem=MemSemantic.RELAXED),
         (".relaxed on barrier.cluster.wait", "it takes .acquire")),
    Rule("barrier-cluster-arrive-sem",
         lambda: ptx.BarrierClusterOp(ptx.BarrierClusterKind.ARRIVE, sem=MemSemantic.RELAXED),
         lambda: ptx.BarrierClusterOp(ptx.BarrierClusterKind.ARRIVE, sem=MemSemantic.ACQUIRE),
         (".acquire on barrier.cluster.arrive", "it takes .relaxed/.release")),
    Rule("fence-sem", lambda: ptx.FenceOp(MemSemantic.ACQ_REL, nvvm.MemScopeKind.GPU),
         lambda: ptx.FenceOp(MemSemantic.RELAXED, nvvm.MemScopeKind.GPU),
         ("semantics .relaxed", "fence takes .acquire/.release/.acq_rel/.sc")),
    Rule("fence-proxy-shared-space",
         lambda: ptx.FenceProxyOp(nvvm.ProxyKind.ASYNC_SHARED, nvvm.SharedSpace.CLUSTER),
         lambda: ptx.FenceProxyOp(nvvm.ProxyKind.ASYNC_SHARED), ("without ::cta/::cluster", "the space is required")),
    Rule("fence-proxy-kind", lambda: ptx.FenceProxyOp(nvvm.ProxyKind.ASYNC_GLOBAL),
         lambda: ptx.FenceProxyOp(nvvm.ProxyKind.TENSORMAP), ("proxy kind .tensormap", "fence.proxy takes .alias")),
    Rule("fence-proxy-space-only-shared", lambda: ptx.FenceProxyOp(nvvm.ProxyKind.ALIAS),
         lambda: ptx.FenceProxyOp(nvvm.ProxyKind.ALIAS, nvvm.SharedSpace.CTA), ("space ::cta on .alias",)),
    # ---- mbarrier ----
    Rule("mbarrier-init-space", lambda: ptx.MbarrierInitOp(StateSpace.SHARED_CTA, r(1), imm(1)),
         lambda: ptx.MbarrierInitOp(StateSpace.SHARED_CLUSTER, r(1), imm(1)),
         ("state space .shared::cluster", "it takes .shared/.shared::cta or none")),
    Rule("mbarrier-init-generic-address", lambda: ptx.MbarrierInitOp(None, rd(1), r(2)),
         lambda: ptx.MbarrierInitOp(None, r(1), imm(1)), ("generic address %r1", ".b64 register")),
    Rule("mbarrier-init-count", lambda: ptx.MbarrierInitOp(StateSpace.SHARED, r(1), r(2)),
         lambda: ptx.MbarrierInitOp(StateSpace.SHARED, r(1), rd(2)), ("count a .b64 register (%rd2)",)),
    Rule("mbarrier-inval-space", lambda: ptx.MbarrierInvalOp(StateSpace.SHARED, r(1)),
         lambda: ptx.MbarrierInvalOp(StateSpace.SHARED_CLUSTER, r(1)), ("state space .shared::cluster",)),
    Rule("mbarrier-arrive-cluster-sink",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CLUSTER, r(1), imm(1)),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CLUSTER, r(1), state=t("b64")),
         ("state register !ptx.reg<b64, 1>", "the .shared::cluster form writes the sink _")),
    Rule("mbarrier-arrive-sem",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), state=t("b64"), order=ptx.Ordering(
             MemSemantic.RELAXED, CTA)),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), state=t("b64"), order=ptx.Ordering(
             MemSemantic.ACQUIRE, CTA)),
         ("semantics .acquire", "it takes .relaxed/.release")),
    Rule("mbarrier-arrive-scope",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), state=t("b64"), order=ptx.Ordering(
             MemSemantic.RELEASE, CLUSTER)),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), state=t("b64"), order=ptx.Ordering(
             MemSemantic.RELEASE, nvvm.MemScopeKind.GPU)),
         ("scope .gpu", "mbarrier scopes are .cta/.cluster")),
    Rule("mbarrier-arrive-sem-needs-scope",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), state=t("b64"), order=ptx.Ordering(
             MemSemantic.RELEASE, CTA)),
         _without(lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), state=t("b64"), order=ptx.Ordering(
             MemSemantic.RELEASE, CTA)), "scope"),
         (".release alone", "semantics and scope are given together")),
    Rule("mbarrier-arrive-expect-tx-count",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), imm(16), t("b64"), expect_tx=True),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), None, t("b64"), expect_tx=True),
         (".expect_tx without a count", "transaction count")),
    Rule("mbarrier-arrive-state-64-bit", lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), r(2), t("b64")),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED, r(1), r(2), t("b32")),
         ("state a .b32 register (%r1)", "it must be a .b64 register")),
    Rule("mbarrier-arrive-nocomplete-count",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), imm(1), t("b64"), variant=NO_COMPLETE),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), None, t("b64"), variant=NO_COMPLETE),
         (".noComplete without a count", "it takes the arrival count")),
    Rule("mbarrier-arrive-drop-nocomplete-count",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), r(2), t("b64"), variant=DROP_NO_COMPLETE),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), None, t("b64"), variant=DROP_NO_COMPLETE),
         (".noComplete without a count",)),
    Rule("mbarrier-arrive-nocomplete-release-cta",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), r(2), t("b64"), variant=NO_COMPLETE,
                                      order=ptx.Ordering(MemSemantic.RELEASE, CTA)),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), r(2), t("b64"), variant=NO_COMPLETE,
                                      order=ptx.Ordering(MemSemantic.RELEASE, CLUSTER)),
         (".noComplete with .cluster", "it takes .release.cta or no ordering")),
    Rule("mbarrier-arrive-nocomplete-not-relaxed",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), r(2), t("b64"), variant=DROP_NO_COMPLETE,
                                      order=ptx.Ordering(MemSemantic.RELEASE, CTA)),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), r(2), t("b64"), variant=NO_COMPLETE,
                                      order=ptx.Ordering(MemSemantic.RELAXED, CTA)),
         (".noComplete with .relaxed",)),
    Rule("mbarrier-arrive-nocomplete-not-cluster-space",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CLUSTER, r(1), r(2), variant=DROP),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CLUSTER, r(1), r(2), variant=NO_COMPLETE),
         (".noComplete on .shared::cluster", "neither .expect_tx nor .shared::cluster")),
    Rule("mbarrier-arrive-nocomplete-not-expect-tx",
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), imm(8), t("b64"), variant=DROP, expect_tx=True),
         lambda: ptx.MbarrierArriveOp(StateSpace.SHARED_CTA, r(1), imm(8), t("b64"), variant=NO_COMPLETE,
                                      expect_tx=True),
         (".noComplete with .expect_tx",)),
    Rule("mbarrier-pending-count-state-64-bit", lambda: ptx.MbarrierPendingCountOp(t("b32"), rd(1)),
         lambda: ptx.MbarrierPendingCountOp(t("b32"), r(2)),
         ("state a .b32 register (%r2)", "it must be a .b64 register")),
    Rule("mbarrier-pending-count-32-bit", lambda: ptx.MbarrierPendingCountOp(t("b32"), rd(1)),
         lambda: ptx.MbarrierPendingCountOp(t("b64", 2), rd(1)), ("destination a .b64 register (%rd2)",)),
    Rule("redux-sync-arithmetic-type", lambda: ptx.ReduxSyncOp(ptx.ReduxKind.ADD, T.U32, t("b32"), r(2), imm(-1)),
         lambda: ptx.ReduxSyncOp(ptx.ReduxKind.ADD, T.B32, t("b32"), r(2), imm(-1)),
         ("type .b32", "redux.sync.add takes .u32/.s32")),
    Rule("redux-sync-bitwise-type", lambda: ptx.ReduxSyncOp(ptx.ReduxKind.XOR, T.B32, t("b32"), imm(5), r(3)),
         lambda: ptx.ReduxSyncOp(ptx.ReduxKind.AND, T.U32, t("b32"), r(2), imm(-1)),
         ("type .u32", "redux.sync.and takes .b32")),
    Rule("redux-sync-32-bit", lambda: ptx.ReduxSyncOp(ptx.ReduxKind.MIN, T.S32, t("b32"), r(2), imm(-1)),
         lambda: ptx.ReduxSyncOp(ptx.ReduxKind.MAX, T.S32, t("b32"), rd(2), imm(-1)),
         ("source a .b64 register (%rd2)",)),
    Rule("mbarrier-tx-relaxed-only",
         lambda: ptx.MbarrierExpectTxOp(ptx.MbarrierTxKind.COMPLETE_TX, StateSpace.SHARED, r(1), imm(16),
                                        order=ptx.Ordering(MemSemantic.RELAXED, CTA)),
         lambda: ptx.MbarrierExpectTxOp(ptx.MbarrierTxKind.EXPECT_TX, StateSpace.SHARED, r(1), imm(16),
                                        order=ptx.Ordering(MemSemantic.RELEASE, CTA)),
         ("semantics .release", "it takes .relaxed")),
    Rule("mbarrier-tx-count-32-bit",
         lambda: ptx.MbarrierExpectTxOp(ptx.MbarrierTxKind.EXPECT_TX, StateSpace.SHARED_CLUSTER, r(1), r(2),
                                        order=ptx.Ordering(MemSemantic.RELAXED, CLUSTER)),
         lambda: ptx.MbarrierExpectTxOp(ptx.MbarrierTxKind.EXPECT_TX, StateSpace.SHARED, r(1), rd(2)),
         ("transaction count a .b64 register (%rd2)",)),
    Rule("mbarrier-wait-parity-phase", lambda: ptx.MbarrierWaitOp(_wait(), t("pred"), r(1), r(2), r(3)),
         lambda: ptx.MbarrierWaitOp(_wait(), t("pred"), r(1), rd(2)), ("phase parity a .b64 register (%rd2)",)),
    Rule("mbarrier-wait-state", lambda: ptx.MbarrierWaitOp(_wait(parity=False), t("pred"), r(1), rd(2)),
         lambda: ptx.MbarrierWaitOp(_wait(parity=False), t("pred"), r(1), r(2)),
         ("state a .b32 register (%r2)", "it must be a .b64 register")),
    Rule("mbarrier-test-wait-no-hint",
         lambda: ptx.MbarrierWaitOp(_wait(ptx.MbarrierWaitKind.TEST_WAIT), t("pred"), r(1), r(2)),
         lambda: ptx.MbarrierWaitOp(_wait(ptx.MbarrierWaitKind.TEST_WAIT), t("pred"), r(1), r(2), r(3)),
         ("a time hint on test_wait", "only try_wait takes suspendTimeHint")),
    Rule("mbarrier-wait-sem",
         lambda: ptx.MbarrierWaitOp(_wait(order=ptx.Ordering(MemSemantic.ACQUIRE, CLUSTER)), t("pred"), r(1), r(2)),
         lambda: ptx.MbarrierWaitOp(_wait(order=ptx.Ordering(MemSemantic.RELEASE, CLUSTER)), t("pred"), r(1), r(2)),
         ("semantics .release", "it takes .relaxed/.acquire")),
    Rule("mbarrier-wait-space",
         lambda: ptx.MbarrierWaitOp(_wait(space=StateSpace.SHARED_CTA), t("pred"), r(1), imm(0)),
         lambda: ptx.MbarrierWaitOp(_wait(space=StateSpace.SHARED_CLUSTER), t("pred"), r(1), imm(0)),
         ("state space .shared::cluster", "it takes .shared/.shared::cta or none")),
    Rule("mbarrier-wait-predicate", lambda: ptx.MbarrierWaitOp(_wait(space=None), t("pred"), rd(1), r(2)),
         lambda: ptx.MbarrierWaitOp(_wait(), t("b32"), r(1), r(2)), ("destination a .b32 register (%r1)",)),
    # ---- tcgen05 ----
    Rule("tcgen05-alloc-power-of-two", lambda: ptx.Tcgen05AllocOp(1, True, r(1), imm(512)),
         lambda: ptx.Tcgen05AllocOp(1, True, r(1), imm(48)), ("ncols 48", "a power of two in [32, 512]")),
    Rule("tcgen05-alloc-range", lambda: ptx.Tcgen05AllocOp(2, True, smem(), imm(32)),
         lambda: ptx.Tcgen05AllocOp(1, True, r(1), imm(1024)), ("ncols 1024",)),
    Rule("tcgen05-dealloc-multiple-of-32", lambda: ptx.Tcgen05DeallocOp(1, r(1), imm(96)),
         lambda: ptx.Tcgen05DeallocOp(1, r(1), imm(48)), ("ncols 48", "a positive multiple of 32")),
    Rule("tcgen05-dealloc-taddr", lambda: ptx.Tcgen05DeallocOp(1, r(1), r(2)),
         lambda: ptx.Tcgen05DeallocOp(1, rd(1), imm(32)), ("tensor memory address a .b64 register (%rd1)",)),
    Rule("tcgen05-commit-mask-b16", lambda: ptx.Tcgen05CommitOp(1, r(1), rs(1)),
         lambda: ptx.Tcgen05CommitOp(1, r(1), r(2)), ("multicast mask a .b32 register (%r2)", ".b16 register")),
    Rule("tcgen05-ld-offset-only-16x32bx2", lambda: ptx.Tcgen05LdOp(LDST.SHAPE_16X32BX2, [t("b32")], r(2), imm(2)),
         lambda: ptx.Tcgen05LdOp(LDST.SHAPE_32X32B, [t("b32")], r(2), imm(2)),
         ("an offset on .32x32b", "only .16x32bx2 takes one")),
    Rule("tcgen05-ld-16x32bx2-needs-offset", lambda: ptx.Tcgen05LdOp(LDST.SHAPE_32X32B, [t("b32")], r(2)),
         lambda: ptx.Tcgen05LdOp(LDST.SHAPE_16X32BX2, [t("b32")], r(2)),
         (".16x32bx2 without its offset", "immediate half-split offset")),
    Rule("tcgen05-st-data-b32", lambda: ptx.Tcgen05StOp(LDST.SHAPE_16X64B, r(2), [r(1)]),
         lambda: ptx.Tcgen05StOp(LDST.SHAPE_16X64B, r(2), [rd(1)]), ("data register a .b64 register (%rd1)",)),
    Rule("tcgen05-ld-taddr", lambda: ptx.Tcgen05LdOp(LDST.SHAPE_16X128B, [t("b32", 1), t("b32", 2)], r(3)),
         lambda: ptx.Tcgen05LdOp(LDST.SHAPE_32X32B, [t("b32")], rd(2)), ("tensor memory address a .b64",)),
    Rule("tcgen05-mma-ashift-tmem", lambda: ptx.Tcgen05MmaOp(
        ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F16, a_tmem=True, ashift=True), r(1), r(3), rd(2), r(2), p(1)),
         lambda: ptx.Tcgen05MmaOp(ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F16, ashift=True), r(1), rd(1), rd(2),
                                  r(2), p(1)),
         (".ashift with A in shared memory", ".ashift needs A in tensor memory")),
    Rule("tcgen05-mma-mask-lanes",
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), p(1), mask=[r(3), r(4), r(5), r(6)]),
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), p(1), mask=[r(3), r(4), r(5), r(6)] * 2),
         ("a disable-output-lane vector of 8", ".cta_group::1 takes 4 .b32 registers")),
    Rule("tcgen05-mma-scale-kind",
         lambda: ptx.Tcgen05MmaOp(ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.TF32), r(1), rd(1), rd(2), r(2), p(1),
                                  scale=imm(3)),
         lambda: ptx.Tcgen05MmaOp(ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F8F6F4), r(1), rd(1), rd(2), r(2), p(1),
                                  scale=imm(3)),
         ("scale-input-d with .kind::f8f6f4",)),
    Rule("tcgen05-mma-scale-range",
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), p(1), scale=imm(15)),
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), p(1), scale=imm(16)),
         ("scale-input-d 16", "it must be in [0, 15]")),
    Rule("tcgen05-mma-enable-predicate", lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), imm(5), imm(1)),
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), r(3)),
         ("enable-input-d a .b32 register (%r3)", "it must be a .pred register")),
    Rule("tcgen05-mma-a-descriptor", lambda: ptx.Tcgen05MmaOp(MMA_TMEM, r(1), r(2), rd(2), r(2), p(1)),
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), r(2), rd(2), r(2), p(1)), ("A descriptor a .b32 register (%r2)",)),
    Rule("tcgen05-mma-b-descriptor", lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), p(1)),
         lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), r(2), r(2), p(1)), ("B descriptor a .b32 register (%r2)",)),
    Rule("tcgen05-mma-d-tmem", lambda: ptx.Tcgen05MmaOp(MMA1, r(1), rd(1), rd(2), r(2), p(1)),
         lambda: ptx.Tcgen05MmaOp(MMA1, rd(1), rd(1), rd(2), r(2), p(1)), ("tensor memory address a .b64",)),
    Rule("tcgen05-cp-64x128b-warpx2", lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_64X128B, MC.WARPX2_02_13, None, r(1), rd(1)),
         lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_64X128B, MC.NONE, None, r(1), rd(1)),
         ("multicast none with .64x128b", "that shape takes warpx2::02_13, warpx2::01_23")),
    Rule("tcgen05-cp-128x256b-none", lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_128X256B, MC.NONE, None, r(1), rd(1)),
         lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_128X256B, MC.WARPX4, None, r(1), rd(1)),
         ("multicast warpx4 with .128x256b", "that shape takes none")),
    Rule("tcgen05-cp-32x128b-warpx4", lambda: ptx.Tcgen05CpOp(2, CP.SHAPE_32X128B, MC.WARPX4, None, r(1), rd(1)),
         lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_32X128B, MC.WARPX2_01_23, None, r(1), rd(1)),
         ("multicast warpx2::01_23 with .32x128b", "that shape takes warpx4")),
    Rule("tcgen05-cp-descriptor", lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_4X256B, MC.NONE, None, r(1), rd(1)),
         lambda: ptx.Tcgen05CpOp(1, CP.SHAPE_4X256B, MC.NONE, None, r(1), r(2)),
         ("shared memory descriptor a .b32 register (%r2)",)),
    Rule("tcgen05-shift-taddr", lambda: ptx.Tcgen05ShiftOp(1, r(1)), lambda: ptx.Tcgen05ShiftOp(1, rd(1)),
         ("tensor memory address a .b64 register (%rd1)",)),
    # ---- issue 13: the PTX client kernels use ----
    Rule("mov-pack-part-width", lambda: ptx.MovPackOp(T.B64, t("b64"), [rs(1), rs(2), rs(3), rs(4)]),
         lambda: ptx.MovPackOp(T.B64, t("b64"), [rs(1), rs(2)]), ("part a .b16 register (%rs1)", ".b32 register")),
    Rule("mov-pack-bits-only", lambda: ptx.MovPackOp(T.B32, t("b32"), [rs(1), rs(2)]),
         lambda: ptx.MovPackOp(T.U32, t("b32"), [rs(1), rs(2)]), ("mov.u32", "into .b32/.b64")),
    Rule("mov-unpack-not-all-sinks", lambda: ptx.MovUnpackOp(T.B64, [None, t("b32", 2)], rd(1)),
         lambda: ptx.MovUnpackOp(T.B64, [None, None], rd(1)), ("an unpack into sinks only",)),
    Rule("mov-unpack-part-width", lambda: ptx.MovUnpackOp(T.B32, [t("b16", 1), t("b16", 2)], r(1)),
         lambda: ptx.MovUnpackOp(T.B64, [t("b16", 1), None, None, t("b32", 2)], rd(1)),
         ("destination a .b32 register (%r2)", "it must be a .b16 register")),
    Rule("bfe-types", lambda: ptx.BfeOp(T.U32, t("b32"), (r(2), imm(4), imm(15))),
         lambda: ptx.BfeOp(T.B32, t("b32"), (r(2), imm(4), imm(15))), ("type .b32", "bfe takes .u32/.u64/.s32/.s64")),
    Rule("bfe-position-u32", lambda: ptx.BfeOp(T.S64, t("b64"), (rd(2), r(3), r(4))),
         lambda: ptx.BfeOp(T.U64, t("b64"), (rd(2), rd(3), r(4))), ("start position b a .b64 register (%rd3)",)),
    Rule("bfi-types", lambda: ptx.BfiOp(T.B32, t("b32"), (r(2), r(3), imm(4), imm(5))),
         lambda: ptx.BfiOp(T.U32, t("b32"), (r(2), r(3), imm(4), imm(5))), ("type .u32", "bfi takes .b32/.b64")),
    Rule("prmt-b32", lambda: ptx.PrmtOp(t("b32"), (r(2), r(3), r(4)), ptx.PrmtMode.F4E),
         lambda: ptx.PrmtOp(t("b64"), (r(2), r(3), r(4))), ("destination a .b64 register (%rd1)",)),
    Rule("lop3-immediate-lut", lambda: ptx.Lop3Op(t("b32"), (r(2), r(3), r(4)), imm(0x96)),
         lambda: ptx.Lop3Op(t("b32"), (r(2), r(3), r(4)), r(5)), ("truth table a .b32 register (%r5)", "immediate")),
    Rule("shf-amount-b32", lambda: ptx.ShfOp(ptx.ShfDirection.L, ptx.ShfMode.WRAP, t("b32"), (r(2), r(3), r(4))),
         lambda: ptx.ShfOp(ptx.ShfDirection.R, ptx.ShfMode.CLAMP, t("b32"), (r(2), r(3), rd(4))),
         ("shift amount c a .b64 register (%rd4)",)),
    Rule("brev-types", lambda: ptx.BrevOp(T.B32, t("b32"), r(2)), lambda: ptx.BrevOp(T.U32, t("b32"), r(2)),
         ("type .u32", "brev takes .b32/.b64")),
    Rule("clz-count-u32", lambda: ptx.ClzOp(T.B64, t("b32"), rd(2)), lambda: ptx.ClzOp(T.B64, t("b64"), rd(2)),
         ("destination a .b64 register (%rd1)", "it must be a .b32 register")),
    Rule("popc-types", lambda: ptx.PopcOp(T.B32, t("b32"), r(2)), lambda: ptx.PopcOp(T.U32, t("b32"), r(2)),
         ("type .u32", "popc takes .b32/.b64")),
    Rule("bfind-types", lambda: ptx.BfindOp(T.S64, t("b32"), rd(2), shiftamt=True),
         lambda: ptx.BfindOp(T.B32, t("b32"), r(2)), ("type .b32", "bfind takes .u32/.u64/.s32/.s64")),
    Rule("add-f32x2-rounding", lambda: ptx.AddF32x2Op(t("b64"), rd(2), rd(3), rounding=Rounding.RN, ftz=True),
         lambda: ptx.AddF32x2Op(t("b64"), rd(2), rd(3), rounding=Rounding.RNI),
         ("rounding .rni", "add.f32x2 rounds with .rn/.rz/.rm/.rp")),
    Rule("sub-f32x2-b64", lambda: ptx.SubF32x2Op(t("b64"), rd(2), rd(3)),
         lambda: ptx.SubF32x2Op(t("b32"), r(2), r(3)), ("destination a .b32 register (%r1)", ".b64 register")),
    Rule("mul-f32x2-b64", lambda: ptx.MulF32x2Op(t("b64"), rd(2), rd(3), rounding=Rounding.RZ),
         lambda: ptx.MulF32x2Op(t("b64"), rd(2), r(3)), ("operand b a .b32 register (%r3)",)),
    Rule("fma-f32x2-needs-rounding", lambda: ptx.FmaF32x2Op(t("b64"), (rd(2), rd(3), rd(4))),
         lambda: ptx.FmaF32x2Op(t("b64"), (rd(2), rd(3), rd(4)), rounding=None),
         ("fma.f32x2 without rounding", "it needs one of .rn/.rz/.rm/.rp")),
    Rule("barrier-arrive-count", lambda: ptx.BarrierOp(ptx.BarrierKind.ARRIVE, imm(1), imm(64)),
         lambda: ptx.BarrierOp(ptx.BarrierKind.ARRIVE, imm(1)), ("barrier.arrive without a thread count",)),
    Rule("barrier-number", lambda: ptx.BarrierOp(ptx.BarrierKind.SYNC, imm(15), imm(64), aligned=True),
         lambda: ptx.BarrierOp(ptx.BarrierKind.SYNC, imm(16)), ("barrier number 16", "0..15")),
    Rule("setmaxnreg-multiple-of-8", lambda: ptx.SetmaxnregOp(ptx.SetmaxnregAction.DEC, imm(24)),
         lambda: ptx.SetmaxnregOp(ptx.SetmaxnregAction.INC, imm(100)),
         ("register count 100", "a multiple of 8 in [24, 256]")),
    Rule("setmaxnreg-immediate", lambda: ptx.SetmaxnregOp(ptx.SetmaxnregAction.INC, imm(256)),
         lambda: ptx.SetmaxnregOp(ptx.SetmaxnregAction.INC, r(1)), ("register count a .b32 register (%r1)",)),
    Rule("shfl-b32", lambda: ptx.ShflSyncOp(ptx.ShflMode.IDX, t("b32"), (r(2), imm(0), imm(31)), imm(-1), t("pred")),
         lambda: ptx.ShflSyncOp(ptx.ShflMode.UP, t("b64"), (rd(2), imm(0), imm(31)), imm(-1)),
         ("destination a .b64 register (%rd1)", "it must be a .b32 register")),
    Rule("vote-ballot-b32", lambda: ptx.VoteSyncOp(ptx.VoteMode.BALLOT, t("b32"), p(2), imm(-1), negate=True),
         lambda: ptx.VoteSyncOp(ptx.VoteMode.BALLOT, t("pred"), p(2), imm(-1)),
         ("destination a .pred register (%p1)", "it must be a .b32 register")),
    Rule("vote-uni-pred", lambda: ptx.VoteSyncOp(ptx.VoteMode.UNI, t("pred"), p(2), r(1)),
         lambda: ptx.VoteSyncOp(ptx.VoteMode.UNI, t("b32"), p(2), imm(-1)),
         ("destination a .b32 register (%r1)", "it must be a .pred register")),
    Rule("match-any-no-predicate",
         lambda: ptx.MatchSyncOp(ptx.MatchMode.ALL, T.B64, t("b32"), rd(2), imm(-1), t("pred")),
         lambda: ptx.MatchSyncOp(ptx.MatchMode.ANY, T.B32, t("b32"), r(2), imm(-1), t("pred")),
         ("a predicate destination on match.any", "only match.all writes one")),
    Rule("activemask-b32", lambda: ptx.ActivemaskOp(t("b32")), lambda: ptx.ActivemaskOp(t("b64")),
         ("destination a .b64 register (%rd1)",)),
    Rule("nanosleep-u32", lambda: ptx.NanosleepOp(r(1)), lambda: ptx.NanosleepOp(rd(1)),
         ("time a .b64 register (%rd1)",)),
    Rule("prefetch-tensormap-space", lambda: ptx.PrefetchOp(StateSpace.CONST, rd(1), tensormap=True),
         lambda: ptx.PrefetchOp(StateSpace.GLOBAL, rd(1), tensormap=True),
         ("state space .global", "it takes .const/.param or none")),
    Rule("prefetch-level-space", lambda: ptx.PrefetchOp(StateSpace.GLOBAL, rd(1), level=ptx.CacheLevel.L2),
         lambda: ptx.PrefetchOp(StateSpace.SHARED, rd(1), level=ptx.CacheLevel.L1),
         ("state space .shared", "it takes .global/.local or none")),
    Rule("ld-nc-global",
         lambda: ptx.LdOp(StateSpace.GLOBAL, T.B32, [t("b32", i) for i in (1, 2, 3, 4)], rd(5), nc=True),
         lambda: ptx.LdOp(StateSpace.SHARED, T.B32, [t("b32")], r(2), nc=True), (".nc on .shared", ".global only")),
    Rule("tcgen05-mma-default-collector-d-tmem",
         lambda: ptx.Tcgen05MmaOp(ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F16, None), r(1), rd(1), rd(2), r(2), p(1)),
         lambda: ptx.Tcgen05MmaOp(ptx.Tcgen05MmaForm(1, nvvm.Tcgen05MMAKind.F16, None), rd(1), rd(1), rd(2), r(2),
                                  p(1)), ("tensor memory address a .b64",)),
    Rule("elect-lane-b32", lambda: ptx.ElectSyncOp(t("pred"), imm(-1), t("b32")),
         lambda: ptx.ElectSyncOp(t("pred"), imm(-1), t("b64")), ("lane destination a .b64 register (%rd1)",)),
    Rule("cp-async-cg-16-bytes", lambda: ptx.CpAsyncOp(ptx.CacheOperator.CA, r(1), rd(1), imm(8)),
         lambda: ptx.CpAsyncOp(ptx.CacheOperator.CG, r(1), rd(1), imm(8)), ("cp-size 8 with .cg", "immediate 16")),
    Rule("cp-async-src-size-b32", lambda: ptx.CpAsyncOp(ptx.CacheOperator.CG, r(1), rd(1), imm(16), r(2)),
         lambda: ptx.CpAsyncOp(ptx.CacheOperator.CA, r(1), rd(1), imm(16), rd(2)),
         ("src-size a .b64 register (%rd2)",)),
    Rule("cp-async-wait-group-read-bulk-only", lambda: ptx.CpAsyncWaitGroupOp(imm(0), bulk=True, read=True),
         lambda: ptx.CpAsyncWaitGroupOp(imm(0), read=True), (".read on cp.async.wait_group",)),
    Rule("cp-async-wait-group-immediate", lambda: ptx.CpAsyncWaitGroupOp(imm(2)),
         lambda: ptx.CpAsyncWaitGroupOp(r(1)), ("group count a .b32 register (%r1)", "integer immediate")),
    Rule("cp-async-bulk-tensor-store-no-mbarrier",
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_GLOBAL, tile=True), r(1), rd(1), [r(2), r(3)],
                                         policy=rd(2)),
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_GLOBAL), r(1), rd(1), [r(2), r(3)], r(4)),
         ("an mbarrier on a tensor store",)),
    Rule("cp-async-bulk-tensor-coordinates",
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_CLUSTER, tile=True, cta_group=2), r(1), rd(1),
                                         [r(2), r(3), r(5)], r(4), cta_mask=rs(1), policy=rd(3)),
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_CTA), r(1), rd(1), [r(i) for i in range(2, 8)], r(4)),
         ("6 tensor coordinates", "1 to 5 dimensions")),
    Rule("cp-async-bulk-tensor-policy-b64",
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_CTA, tile=True), r(1), rd(1), [r(2), r(3)], r(4),
                                         policy=rd(2), offset=1024),
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_CTA), r(1), rd(1), [r(2), r(3)], r(4), policy=r(2)),
         ("cache policy a .b32 register (%r2)", ".b64 register")),
    Rule("cp-async-bulk-tensor-mbarrier-offset",
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_CLUSTER), r(1), rd(1), [r(2), r(3)], (r(4), 56)),
         lambda: ptx.CpAsyncBulkTensorOp(ptx.BulkTensorForm(TO_CLUSTER), r(1), rd(1), [r(2), r(3)], (r(4), 56),
                                         policy=r(2)),
         ("cache policy a .b32 register (%r2)",)),
    Rule("cp-async-bulk-load-mbarrier",
         lambda: ptx.CpAsyncBulkOp(TO_CLUSTER, r(1), rd(1), imm(256), r(2), offset=128, mbar_offset=72),
         lambda: ptx.CpAsyncBulkOp(TO_CLUSTER, r(1), rd(1), imm(256)), ("a bulk load without an mbarrier",)),
    Rule("cp-async-bulk-store-no-mbarrier", lambda: ptx.CpAsyncBulkOp(TO_GLOBAL, rd(1), r(1), r(2), src_offset=128),
         lambda: ptx.CpAsyncBulkOp(TO_GLOBAL, rd(1), r(1), r(2), r(3)), ("an mbarrier on a bulk store",)),
    Rule("cp-async-bulk-size-multiple-of-16", lambda: ptx.CpAsyncBulkOp(TO_CTA, r(1), rd(1), imm(48), r(2)),
         lambda: ptx.CpAsyncBulkOp(TO_CTA, r(1), rd(1), imm(40), r(2)), ("size 40", "a multiple of 16")),
    Rule("cp-async-bulk-size-b32", lambda: ptx.CpAsyncBulkOp(TO_GLOBAL, rd(1), r(1), r(2)),
         lambda: ptx.CpAsyncBulkOp(TO_GLOBAL, rd(1), r(1), rd(2)), ("size a .b64 register (%rd2)",)),
    Rule("cp-reduce-async-bulk-tensor-coordinates",
         lambda: ptx.CpReduceAsyncBulkTensorOp(nvvm.TMAReduxKind.INC, r(1), rd(1), [r(i) for i in range(2, 7)],
                                               tile=True, policy=rd(2)),
         lambda: ptx.CpReduceAsyncBulkTensorOp(nvvm.TMAReduxKind.ADD, r(1), rd(1), [r(i) for i in range(2, 8)]),
         ("6 tensor coordinates", "1 to 5 dimensions")),
    Rule("cp-reduce-async-bulk-tensor-policy-b64",
         lambda: ptx.CpReduceAsyncBulkTensorOp(nvvm.TMAReduxKind.XOR, r(1), rd(1), [r(2)], offset=16),
         lambda: ptx.CpReduceAsyncBulkTensorOp(nvvm.TMAReduxKind.MIN, r(1), rd(1), [r(2)], policy=r(3)),
         ("cache policy a .b32 register (%r3)", ".b64 register")),
    Rule("ldmatrix-shared-only", lambda: ptx.LdmatrixOp([t("b32", i) for i in (1, 2, 3, 4)], r(5), offset=512),
         lambda: ptx.LdmatrixOp([t("b32", 1), t("b32", 2)], rd(5), space=StateSpace.GLOBAL, trans=True),
         ("state space .global", "it takes .shared/.shared::cta or none")),
    Rule("ldmatrix-b32-destinations", lambda: ptx.LdmatrixOp([t("b32")], rd(5), space=None),
         lambda: ptx.LdmatrixOp([t("b64")], r(5)), ("destination a .b64 register (%rd1)",)),
    Rule("abs-signed-only", lambda: ptx.AbsOp(T.S32, t("b32"), r(2)), lambda: ptx.AbsOp(T.U32, t("b32"), r(2)),
         ("abs.u32", "type .u32 is not allowed")),
    Rule("abs-ftz-not-f64", lambda: ptx.AbsOp(T.F32, t("b32"), r(2), ftz=True),
         lambda: ptx.AbsOp(T.F64, t("b64"), rd(2), ftz=True), ("abs.ftz.f64",)),
    Rule("rcp-approx-f64-needs-ftz", lambda: ptx.RcpOp(T.F64, t("b64"), rd(2), approx=True, ftz=True),
         lambda: ptx.RcpOp(T.F64, t("b64"), rd(2), approx=True), ("rcp.approx.f64", "needs .ftz")),
    Rule("sqrt-f64-rounding", lambda: ptx.SqrtOp(T.F64, t("b64"), rd(2), rounding=Rounding.RN),
         lambda: ptx.SqrtOp(T.F64, t("b64"), rd(2), approx=True), ("sqrt.approx.f64",)),
    Rule("sqrt-f32-needs-mode", lambda: ptx.SqrtOp(T.F32, t("b32"), r(2), approx=True, ftz=True),
         lambda: ptx.SqrtOp(T.F32, t("b32"), r(2)), ("sqrt.f32", "needs one of .approx")),
    Rule("copysign-f32-f64", lambda: ptx.CopysignOp(T.F64, t("b64"), rd(2), rd(3)),
         lambda: ptx.CopysignOp(T.F16, t("b16"), rs(2), rs(3)), ("copysign.f16", "copysign takes .f32 or .f64")),
    Rule("testp-types", lambda: ptx.TestpOp(ptx.TestpKind.FINITE, T.F32, t("pred"), r(2)),
         lambda: ptx.TestpOp(ptx.TestpKind.NORMAL, T.F16, t("pred"), rs(2)), ("testp.normal.f16",)),
    Rule("cvt-pack-narrow-satfinite",
         lambda: ptx.CvtPackOp(ptx.PackedFloat.E4M3X2, t("b16"), r(2), r(3), satfinite=True, relu=True),
         lambda: ptx.CvtPackOp(ptx.PackedFloat.E4M3X2, t("b16"), r(2), r(3)),
         ("cvt.rn.e4m3x2.f32", "cvt.rn.satfinite{.relu}")),
    Rule("cvt-pack-half-rounding",
         lambda: ptx.CvtPackOp(ptx.PackedFloat.BF16X2, t("b32"), r(2), r(3), rounding=Rounding.RZ, relu=True,
                               satfinite=True),
         lambda: ptx.CvtPackOp(ptx.PackedFloat.F16X2, t("b32"), r(2), r(3), rounding=Rounding.RM),
         ("cvt.rm.f16x2.f32", "modifier .rm is not allowed")),
    Rule("cvt-pack-destination-width",
         lambda: ptx.CvtPackOp(ptx.PackedFloat.F16X2, t("b32"), r(2), r(3)),
         lambda: ptx.CvtPackOp(ptx.PackedFloat.E5M2X2, t("b32"), r(2), r(3), satfinite=True),
         ("destination a .b32 register (%r1)", "it must be a .b16 register")),
    Rule("setp-bool-needs-c",
         lambda: ptx.SetpBoolOp(CmpOp.LT, T.U32, (t("pred", 1), t("pred", 2)), r(1), r(2), p(3),
                                bool_op=ptx.BoolOp.AND, c_negated=True),
         lambda: ptx.SetpBoolOp(CmpOp.LT, T.U32, (t("pred", 1), None), r(1), r(2), p(3)),
         ("a predicate c without a .BoolOp", "combines with c")),
    Rule("setp-bool-pair-cmp",
         lambda: ptx.SetpBoolOp(CmpOp.LO, T.U32, (None, t("pred", 2)), r(1), imm(0xFFFFFFFF)),
         lambda: ptx.SetpBoolOp(CmpOp.LO, T.S32, (t("pred", 1), t("pred", 2)), r(1), r(2)),
         ("comparison .lo on .s32", ".s32 compares with")),
    Rule("ld-sink-vector-width",
         lambda: ptx.LdSinkOp(StateSpace.SHARED, T.U32, [t("b32", 1), None, t("b32", 3), None], smem(), offset=16),
         lambda: ptx.LdSinkOp(StateSpace.SHARED, T.U64, [t("b64", 1), None, None, t("b64", 4)], smem()),
         (".v4.u64 (256 bits)", "256-bit accesses are .global")),
    Rule("ld-sink-not-all-sinks", lambda: ptx.LdSinkOp(StateSpace.GLOBAL, T.F32, [None, t("b32", 2)], rd(1)),
         lambda: ptx.LdSinkOp(StateSpace.GLOBAL, T.F32, [None, None], rd(1)),
         ("only sinks", "at least one element is a register")),
    Rule("mov-offset-symbol-only", lambda: ptx.MovOp(T.U64, t("b64"), smem(), offset=8),
         lambda: ptx.MovOp(T.U32, t("b32"), ptx.SpecialOp("%tid.x").result, offset=8),
         ("offset +8 on %tid.x", "only a variable's address takes an offset")),
    # ex2: `.f32` and the half types (ex2.approx.f16 since PTX 7.0, sm_75), never `.f64`
    Rule("ex2-types", lambda: ptx.Ex2Op(T.F16, t("b16"), rs(2)), lambda: ptx.Ex2Op(T.F64, t("b64"), rd(2)),
         ("ex2.approx.f64", "ex2 takes .f32")),
    # ---- values.py: the extended value instructions (their legal spellings: the semantics') ----
    Rule("add-ext-sat-f64", lambda: v(V.AddExtOp, "b32", r(2), r(3), type=FT.F32, rounding=FR.RN, sat=U),
         lambda: v(V.AddExtOp, "b64", rd(2), rd(3), type=FT.F64, rounding=FR.RN, sat=U), ("add.rn.sat.f64",)),
    Rule("sub-ext-ftz-f64", lambda: v(V.SubExtOp, "b32", r(2), r(3), type=FT.F16X2, rounding=FR.RN, ftz=U),
         lambda: v(V.SubExtOp, "b64", rd(2), rd(3), type=FT.F64, ftz=U), ("sub.ftz.f64",)),
    Rule("mul-ext-bf16x2-sat", lambda: v(V.MulExtOp, "b32", r(2), r(3), type=FT.BF16X2, rounding=FR.RN),
         lambda: v(V.MulExtOp, "b32", r(2), r(3), type=FT.BF16X2, rounding=FR.RN, sat=U), ("mul.rn.sat.bf16x2",)),
    Rule("fma-ext-bf16-sat", lambda: v(V.FmaExtOp, "b16", rs(2), rs(3), rs(4), type=FT.BF16, rounding=FR.RN, relu=U),
         lambda: v(V.FmaExtOp, "b16", rs(2), rs(3), rs(4), type=FT.BF16, rounding=FR.RN, sat=U),
         ("fma.rn.sat.bf16",)),
    Rule("min-ext-bf16-ftz", lambda: v(V.MinExtOp, "b32", r(2), r(3), type=MM.F32, xorsign_abs=U),
         lambda: v(V.MinExtOp, "b16", rs(2), rs(3), type=MM.BF16, ftz=U), ("min.ftz.bf16",)),
    Rule("max-ext-relu-ints", lambda: v(V.MaxExtOp, "b32", r(2), r(3), type=MM.S32, relu=U),
         lambda: v(V.MaxExtOp, "b32", r(2), r(3), type=MM.F16X2, relu=U), ("max.relu.f16x2",)),
    Rule("neg-ext-ftz-f64", lambda: v(V.NegExtOp, "b32", r(2), type=FT.F16X2, ftz=U),
         lambda: v(V.NegExtOp, "b64", rd(2), type=FT.F64, ftz=U), ("neg.ftz.f64",)),
    Rule("rsqrt-destination", lambda: v(V.RsqrtOp, "b64", rd(2), type=FT.F64),
         lambda: v(V.RsqrtOp, "b64", r(2), type=FT.F32), ("destination",)),
    Rule("tanh-f64", lambda: v(V.TanhOp, "b16", rs(2), type=FT.F16), lambda: v(V.TanhOp, "b64", rd(2), type=FT.F64),
         ("tanh.approx.f64",)),
    Rule("lg2-f64", lambda: v(V.Lg2Op, "b32", r(2), type=FT.F32, ftz=U), lambda: v(V.Lg2Op, "b64", rd(2), type=FT.F64),
         ("lg2.approx.f64",)),
    Rule("sin-f64", lambda: v(V.SinOp, "b32", r(2), type=FT.F32, ftz=U), lambda: v(V.SinOp, "b64", rd(2), type=FT.F64),
         ("sin.approx.f64",)),
    Rule("cos-f64", lambda: v(V.CosOp, "b32", r(2), type=FT.F32), lambda: v(V.CosOp, "b64", rd(2), type=FT.F64),
         ("cos.approx.f64",)),
    Rule("div-ftz-destination", lambda: v(V.DivFtzOp, "b32", r(2), r(3), precision=ptx.DivPrecisionAttr(
         ptx.DivPrecision.FULL)), lambda: v(V.DivFtzOp, "b64", r(2), r(3), rounding=FR.RN), ("destination",)),
    Rule("add-sat-destination", lambda: v(V.AddSatOp, "b32", r(2), r(3)), lambda: v(V.AddSatOp, "b64", r(2), r(3)),
         ("destination",)),
    Rule("sub-sat-operand", lambda: v(V.SubSatOp, "b32", r(2), imm(7)), lambda: v(V.SubSatOp, "b32", rd(2), r(3)),
         ("operand a",)),
    Rule("mad-sat-destination", lambda: v(V.MadSatOp, "b32", r(2), r(3), r(4)),
         lambda: v(V.MadSatOp, "b64", r(2), r(3), r(4)), ("destination",)),
    Rule("mul24-32-bit", lambda: v(V.Mul24Op, "b32", r(2), r(3), mode=MODE_HI, type=WT.U32),
         lambda: v(V.Mul24Op, "b64", rd(2), rd(3), mode=MODE_LO, type=WT.U64), ("mul24.lo.u64",)),
    Rule("mad24-32-bit", lambda: v(V.Mad24Op, "b32", r(2), r(3), r(4), mode=MODE_LO, type=WT.S32),
         lambda: v(V.Mad24Op, "b64", rd(2), rd(3), rd(4), mode=MODE_HI, type=WT.S64), ("mad24.hi.s64",)),
    Rule("sad-integers", lambda: v(V.SadOp, "b32", r(2), r(3), r(4), type=PT(T.U32)),
         lambda: v(V.SadOp, "b32", r(2), r(3), r(4), type=PT(T.F32)), ("sad.f32",)),
    Rule("dp4a-32-bit", lambda: v(V.Dp4aOp, "b32", r(2), r(3), r(4), atype=WT.S32, btype=WT.U32),
         lambda: v(V.Dp4aOp, "b64", rd(2), rd(3), rd(4), atype=WT.U64, btype=WT.U32), ("dp4a.u64.u32",)),
    Rule("dp2a-mode", lambda: v(V.Dp2aOp, "b32", r(2), r(3), r(4), mode=MODE_HI, atype=WT.U32, btype=WT.S32),
         lambda: v(V.Dp2aOp, "b32", r(2), r(3), r(4), mode=MODE_WIDE, atype=WT.U32, btype=WT.U32),
         ("dp2a.wide.u32.u32",)),
    Rule("bmsk-b32", lambda: v(V.BmskOp, "b32", r(2), r(3), mode=BM.CLAMP, type=PT(T.B32)),
         lambda: v(V.BmskOp, "b64", rd(2), r(3), mode=BM.WRAP, type=PT(T.B64)), ("bmsk.wrap.b64",)),
    Rule("szext-32-bit", lambda: v(V.SzextOp, "b32", r(2), r(3), mode=BM.WRAP, type=WT.S32),
         lambda: v(V.SzextOp, "b64", rd(2), r(3), mode=BM.CLAMP, type=WT.U64), ("szext.clamp.u64",)),
    Rule("cnot-bits", lambda: v(V.CnotOp, "b16", rs(2), type=PT(T.B16)),
         lambda: v(V.CnotOp, "b32", r(2), type=PT(T.F32)), ("cnot.f32",)),
    Rule("slct-destination", lambda: v(V.SlctOp, "b32", r(2), r(3), r(4), ftz=U, dtype=PT(T.F32), ctype=ST.F32),
         lambda: v(V.SlctOp, "b64", r(2), r(3), r(4), dtype=PT(T.B32), ctype=ST.S32), ("destination",)),
    Rule("set-cmp-signed", lambda: v(V.SetOp, "b32", r(2), r(3), cmp=CMP(CmpOp.LT), dtype=SR.U32, stype=CT.F16X2),
         lambda: v(V.SetOp, "b32", r(2), r(3), cmp=CMP(CmpOp.LO), dtype=SR.U32, stype=CT.S32), ("set.lo.u32.s32",)),
    Rule("set-bool-cmp-int",
         lambda: v(V.SetBoolOp, "b32", r(2), r(3), p(1), cmp=CMP(CmpOp.GTU), bool_op=BOOL_AND, dtype=SR.U32,
                   stype=CT.F32),
         lambda: v(V.SetBoolOp, "b32", r(2), r(3), p(1), cmp=CMP(CmpOp.LTU), bool_op=BOOL_AND, dtype=SR.U32,
                   stype=CT.S32), ("set.ltu.and.u32.s32",)),
    Rule("setp-ext-cmp-float",
         lambda: V.SetpExtOp.build(operands=[r(2), r(3), None], result_types=[t("pred", 1), t("pred", 2)],
                                   properties={"cmp": CMP(CmpOp.LT), "type": V.FloatTypeAttr(FT.F16X2)}),
         lambda: v(V.SetpExtOp, "pred", r(2), r(3), cmp=CMP(CmpOp.LO), ftz=U, type=FT.F32), ("setp.lo.ftz.f32",)),
    Rule("cvt-int-sat-source", lambda: v(V.CvtIntSatOp, "b16", r(2), dtype=IC.S8, stype=IC.U32),
         lambda: v(V.CvtIntSatOp, "b32", r(2), dtype=IC.S32, stype=IC.S64), ("operand a", ".b64 register")),
    Rule("cvt-float-int-ftz-f32-only",
         lambda: v(V.CvtFloatIntOp, "b32", rd(2), rounding=IR.RNI, sat=U, dtype=IC.S32, stype=FC.F64),
         lambda: v(V.CvtFloatIntOp, "b32", rd(2), rounding=IR.RNI, ftz=U, dtype=IC.S32, stype=FC.F64),
         ("cvt.rni.ftz.s32.f64",)),
    Rule("cvt-float-relu-half-only",
         lambda: v(V.CvtFloatOp, "b16", r(2), rounding=ptx.RoundingAttr(Rounding.RN), saturation=SAT.RELU,
                   dtype=FC.BF16, stype=FC.F32),
         lambda: v(V.CvtFloatOp, "b32", rd(2), rounding=ptx.RoundingAttr(Rounding.RN), saturation=SAT.RELU,
                   dtype=FC.F32, stype=FC.F64), ("cvt.rn.relu.f32.f64",)),
    Rule("cvt-tf32-destination", lambda: v(V.CvtTf32Op, "b32", r(2), rounding=TR.RNA),
         lambda: v(V.CvtTf32Op, "b64", r(2), rounding=TR.RNA), ("destination",)),
    Rule("cvt-packed-rn", lambda: v(V.CvtPackedOp, "b32", rs(2), rounding=FR.RN, dtype=PF.F16X2, stype=PF.E4M3X2),
         lambda: v(V.CvtPackedOp, "b32", rs(2), rounding=FR.RZ, dtype=PF.F16X2, stype=PF.E4M3X2),
         ("cvt.rz.f16x2.e4m3x2",)),
    Rule("cvt-pack-sat-bytes", lambda: v(V.CvtPackSatOp, "b32", r(2), r(3), r(4), dtype=PS.S8),
         lambda: v(V.CvtPackSatOp, "b32", r(2), r(3), r(4), dtype=PS.S16), ("cvt.pack.sat.s16.s32.b32",)),
    Rule("add-cc-destination", lambda: v(V.AddCcOp, "b64", rd(2), rd(3), type=WT.U64),
         lambda: v(V.AddCcOp, "b64", r(2), r(3), type=WT.U32), ("destination",)),
    Rule("sub-cc-operand", lambda: v(V.SubCcOp, "b32", r(2), imm(1), type=WT.S32),
         lambda: v(V.SubCcOp, "b32", rd(2), r(3), type=WT.U32), ("operand a",)),
    Rule("addc-destination", lambda: v(V.AddcOp, "b32", r(2), r(3), type=WT.S32, cc=U),
         lambda: v(V.AddcOp, "b32", rd(2), rd(3), type=WT.U64), ("destination",)),
    Rule("subc-destination", lambda: v(V.SubcOp, "b64", rd(2), rd(3), type=WT.U64),
         lambda: v(V.SubcOp, "b64", r(2), r(3), type=WT.U32, cc=U), ("destination",)),
    Rule("mad-cc-wide", lambda: v(V.MadCcOp, "b64", rd(2), rd(3), rd(4), mode=MODE_LO, type=WT.U64),
         lambda: v(V.MadCcOp, "b64", r(2), r(3), rd(4), mode=MODE_WIDE, type=WT.U32), ("mad.wide.cc.u32",)),
    Rule("madc-wide", lambda: v(V.MadcOp, "b32", r(2), r(3), r(4), mode=MODE_HI, type=WT.S32, cc=U),
         lambda: v(V.MadcOp, "b64", r(2), r(3), rd(4), mode=MODE_WIDE, type=WT.U32), ("madc.wide.u32",)),
    # ---- bar.red spellings, barrier.cta, atomics, st.async ----
    Rule("bar-red-aligned-spelled-on-barrier",
         lambda: ptx.BarRedOp(nvvm.BarrierReduction.POPC, t("b32"), imm(0), None, p(1), negate=True,
                              spelling=ptx.BarRedSpelling(barrier=True, cta=True, aligned=True)),
         lambda: ptx.BarRedOp(nvvm.BarrierReduction.POPC, t("b32"), imm(0), None, p(1),
                              spelling=ptx.BarRedSpelling(aligned=True)),
         (".aligned on bar.red", "bar.red is aligned")),
    Rule("barrier-cta-number", lambda: ptx.BarrierOp(ptx.BarrierKind.SYNC, imm(0), aligned=True, cta=True),
         lambda: ptx.BarrierOp(ptx.BarrierKind.SYNC, imm(16), cta=True), ("barrier number 16",)),
    Rule("atom-inc-u32", lambda: ptx.AtomOp(AOP.INC, AT.U32, t("b32"), rd(2), imm(5), space=ASP.GLOBAL),
         lambda: ptx.AtomOp(AOP.INC, AT.S32, t("b32"), rd(2), imm(5), space=ASP.GLOBAL),
         ("type .s32", "atom.inc takes .u32")),
    Rule("atom-and-bits", lambda: ptx.AtomOp(AOP.AND, AT.B32, t("b32"), rd(2), imm(5), space=ASP.GLOBAL),
         lambda: ptx.AtomOp(AOP.AND, AT.U32, t("b32"), rd(2), imm(5), space=ASP.GLOBAL),
         ("type .u32", "atom.and takes .b32/.b64")),
    Rule("atom-add-types", lambda: ptx.AtomOp(AOP.ADD, AT.F32, t("b32"), rd(2), r(3), space=ASP.GLOBAL),
         lambda: ptx.AtomOp(AOP.ADD, AT.S64, t("b64"), rd(2), imm(1, 64), space=ASP.GLOBAL),
         ("type .s64", "atom.add takes .u32/.u64/.s32/.f32/.f64")),
    Rule("atom-min-integers", lambda: ptx.AtomOp(AOP.MIN, AT.U64, t("b64"), rd(2), imm(1, 64), space=ASP.GLOBAL),
         lambda: ptx.AtomOp(AOP.MIN, AT.F32, t("b32"), rd(2), r(3), space=ASP.GLOBAL),
         ("type .f32", "atom.min takes")),
    Rule("atom-semantics",
         lambda: ptx.AtomOp(AOP.MAX, AT.S64, t("b64"), rd(2), rd(3), space=ASP.GLOBAL,
                 order=ptx.AtomicOrder(MemSemantic.ACQUIRE, nvvm.MemScopeKind.GPU)),
         lambda: ptx.AtomOp(AOP.MAX, AT.S64, t("b64"), rd(2), rd(3), space=ASP.GLOBAL,
                 order=ptx.AtomicOrder(MemSemantic.SC, nvvm.MemScopeKind.GPU)),
         ("semantics .sc", "atom.max takes .relaxed/.acquire/.release/.acq_rel")),
    Rule("atom-cas-bits", lambda: ptx.AtomCasOp(AT.B32, t("b32"), rd(2), imm(5), imm(6), space=ASP.GLOBAL),
         lambda: ptx.AtomCasOp(AT.U32, t("b32"), rd(2), imm(5), imm(6), space=ASP.GLOBAL),
         ("type .u32", "atom.cas takes .b32/.b64")),
    Rule("atom-global-address-64",
         lambda: ptx.AtomOp(AOP.ADD, AT.U32, t("b32"), r(2), imm(1), space=ASP.SHARED_CLUSTER,
                            order=ptx.AtomicOrder(MemSemantic.RELAXED, CLUSTER)),
         lambda: ptx.AtomOp(AOP.ADD, AT.U32, t("b32"), r(2), imm(1), space=ASP.GLOBAL),
         ("address a .b32 register (%r2)", "a .global address is .b64")),
    Rule("red-semantics",
         lambda: ptx.RedOp(AOP.ADD, AT.U32, rd(2), imm(1), space=ASP.GLOBAL,
                 order=ptx.AtomicOrder(MemSemantic.RELEASE, nvvm.MemScopeKind.GPU)),
         lambda: ptx.RedOp(AOP.ADD, AT.U32, rd(2), imm(1), space=ASP.GLOBAL,
                 order=ptx.AtomicOrder(MemSemantic.ACQUIRE, nvvm.MemScopeKind.GPU)),
         ("semantics .acquire", "red.add takes .relaxed/.release")),
    Rule("red-no-exch", lambda: ptx.RedOp(AOP.XOR, AT.B32, rd(2), imm(1), space=ASP.GLOBAL),
         lambda: ptx.RedOp(AOP.EXCH, AT.B32, rd(2), imm(1), space=ASP.GLOBAL), ("operation .exch",)),
    Rule("red-source-register", lambda: ptx.RedOp(AOP.ADD, AT.U64, r(2), rd(1), space=ASP.SHARED),
         lambda: ptx.RedOp(AOP.ADD, AT.U64, r(2), r(1), space=ASP.SHARED),
         ("source a .b32 register (%r1)", "it must be a .b64 register")),
    Rule("st-async-vector", lambda: ptx.StAsyncOp(T.B64, r(1), [rd(1), rd(2)], r(3)),
         lambda: ptx.StAsyncOp(T.B64, r(1), [rd(1), rd(2), rd(3), rd(4)], r(3)),
         ("4 elements of .b64", "st.async stores one, .v2 or (32-bit types) .v4")),
    Rule("st-async-type", lambda: ptx.StAsyncOp(T.U32, r(1), [r(2)], r(3)),
         lambda: ptx.StAsyncOp(T.U16, r(1), [rs(1)], r(3)), ("type .u16", "st.async takes")),
]  # fmt: skip


def kernel(line: str) -> str:
    return KERNEL.format(version=VERSION, arch=ARCH, lines=f"    {line}")


def assemble(ptxas: str, text: str) -> str | None:
    """None if ptxas accepts `text`, else its message."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "k.ptx"
        source.write_text(text)
        try:
            run_tool([ptxas, f"-arch={ARCH}", str(source), "-o", str(Path(tmp) / "k.cubin")])
        except ToolFailed as e:
            return str(e)
    return None


@pytest.fixture(scope="module")
def ptxas_verdicts(ptxas: str) -> dict[str, tuple[str | None, str | None]]:
    """(ptxas on the valid line, ptxas on the invalid line) per rule, two at a time."""

    def verdicts(rule: Rule) -> tuple[str | None, str | None]:
        good, bad = rule.good().ptx_line(operand_text), rule.bad().ptx_line(operand_text)
        return assemble(ptxas, kernel(good)), assemble(ptxas, kernel(bad))

    with ThreadPoolExecutor(2) as pool:
        return dict(zip((rule.id for rule in RULES), pool.map(verdicts, RULES), strict=True))


def test_rule_ids_are_unique() -> None:
    assert len({rule.id for rule in RULES}) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_ptx_verifier_agrees_with_ptxas(rule: Rule, ptxas_verdicts: dict[str, tuple[str | None, str | None]]) -> None:
    good, bad = rule.good(), rule.bad()
    good.verify()
    with pytest.raises(VerifyException) as caught:
        bad.verify()
    message = str(caught.value)
    assert message.startswith(f"{bad.name}: "), message
    assert "PTX ISA 9.0" in message, message
    for fragment in rule.says:
        assert fragment in message, (fragment, message)
    on_good, on_bad = ptxas_verdicts[rule.id]
    assert on_good is None, f"ptxas rejects the valid {good.ptx_line(operand_text)}:\n{on_good}"
    assert on_bad is not None, f"ptxas accepts {bad.ptx_line(operand_text)}, which our verifier rejects: {message}"


def test_every_instruction_has_a_rule_case() -> None:
    """Every typed instruction with operands or qualifiers to check has at least one
    rule checked against ptxas (the operand-less fixed forms have nothing to get wrong)."""
    checked = {rule.bad().name for rule in RULES} | {"ptx.brx_idx"}  # test_brx_idx_agrees_with_ptxas
    checked |= {"ptx.call", "ptx.call_indirect"}  # test_ptx_calls.py::test_call_rules_agree_with_ptxas
    fixed = {"ptx.ret", "ptx.bra", "ptx.fence_mbarrier_init", "ptx.tcgen05_relinquish_alloc_permit",
             "ptx.tcgen05_fence", "ptx.tcgen05_wait", "ptx.trap",
             "ptx.cp_async_commit_group", "ptx.cp_async_wait_all"}  # fmt: skip
    # `ptx.inst` holds a parsed instruction as written (opcode and modifiers are PTX's
    # text); ptxas checks it when the module is assembled.
    instructions = {op.name for op in ptx.PTX.operations if issubclass(op, ptx.Instruction)} - {ptx.InstOp.name}
    missing = instructions - checked - fixed
    assert not missing, sorted(missing)


def test_every_string_property_is_a_label() -> None:
    """No free-string qualifier remains on a typed instruction: the only `StringAttr`
    properties of the typed ptx instructions are label names (PTX's own free text: a
    branch target, a `.branchtargets` list, a called `.func`, a `.callprototype`); the
    generic `ptx.inst` keeps a parsed instruction's opcode as written."""
    from xdsl.dialects.builtin import StringAttr
    from xdsl.irdl import BaseAttr

    strings = {
        (op.name, name)
        for op in ptx.PTX.operations
        if issubclass(op, ptx.Instruction) and op is not ptx.InstOp
        for name, definition in op.get_irdl_definition().properties.items()
        if isinstance(definition.constr, BaseAttr) and definition.constr.attr is StringAttr
    }
    assert strings == {
        ("ptx.bra", "target"),
        ("ptx.brx_idx", "targets"),
        ("ptx.call", "callee"),
        ("ptx.call_indirect", "prototype"),
    }


def test_fixed_forms_print_their_isa_spelling() -> None:
    """The operand-less instructions derive the mnemonics ptxas accepts (checked
    against ptxas through the examples in test_ptx_backend; here the spelling)."""
    assert ptx.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.LOAD).mnemonic() == "tcgen05.wait::ld.sync.aligned"
    assert ptx.Tcgen05FenceOp(nvvm.Tcgen05FenceKind.AFTER).mnemonic() == "tcgen05.fence::after_thread_sync"
    assert ptx.Tcgen05RelinquishOp(2).mnemonic() == "tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned"
    assert ptx.FenceMbarrierInitOp().mnemonic() == "fence.mbarrier_init.release.cluster"
    assert ptx.SubOp(T.F32, t("b32"), r(2), r(3), rounding=Rounding.RM).mnemonic() == "sub.rm.f32"
    assert ptx.MadOp(T.S32, t("b64"), (r(2), r(3), rd(4)), mode=IntMode.WIDE).mnemonic() == "mad.wide.s32"


BRX_KERNEL = """\
.version {version}
.target {arch}
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{{
    .reg .b32 %r<9>;
    .reg .b64 %rd<9>;
ts: .branchtargets A, B;
    {line}
A:
B:
    ret;
}}
"""


def test_brx_idx_agrees_with_ptxas(ptxas: str) -> None:
    """`brx.idx` needs a `.branchtargets` list, which the one-line kernel above lacks:
    its rule (a `.b32` index) checked here, both ways."""
    good = ptx.BrxIdxOp(r(1), "ts", uniform=True)
    bad = ptx.BrxIdxOp(rd(1), "ts")
    good.verify()
    with pytest.raises(VerifyException, match=r"^ptx.brx_idx: index a .b64 register \(%rd1\) is not allowed"):
        bad.verify()
    assert good.ptx_line(operand_text) == "brx.idx.uni %r1, ts;"
    for op, accepted in ((good, True), (bad, False)):
        text = BRX_KERNEL.format(version=VERSION, arch=ARCH, line=op.ptx_line(operand_text))
        assert (assemble(ptxas, text) is None) == accepted, op.ptx_line(operand_text)

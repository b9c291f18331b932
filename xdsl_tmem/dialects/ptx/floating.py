"""Packed single precision (`.f32x2`), `ex2`, the float ops whose legal spellings the
value semantics decide, and conversions that pack two values (PTX ISA 9.0,
Floating-Point Instructions; Data Movement and Conversion Instructions)."""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Commutative

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.arith import FLOAT_RULE, INTEGER_RULE, MOVE_RULE, TypedOp, typed_properties
from xdsl_tmem.dialects.ptx.base import (
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    WritesOnlyRegisters,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    FLOAT_ROUNDING,
    PackedFloat,
    PackedFloatAttr,
    PtxType,
    Rounding,
    RoundingAttr,
    TestpKind,
    TestpKindAttr,
    check_only_register,
    check_operand,
    check_semantics,
    reject,
    spell,
)

# ---- packed single precision: add/sub/mul/fma .f32x2 --------------------------------------------


class _F32x2Op(Instruction, ABC):
    """`op[.rnd][.ftz].f32x2 d, a, b[, c]`: two `.f32` lanes in `.b64` registers (PTX ISA
    9.0, Floating-Point Instructions, sm_100 and up). Rounding `.rn .rz .rm .rp`
    (required for `fma`, the default `.rn` otherwise); no `.sat` (ptxas: "Illegal
    modifier")."""

    traits = traits_def(WritesOnlyRegisters())
    MNEMONIC: ClassVar[str]
    ROUNDING_REQUIRED: ClassVar[bool] = False
    rounding = opt_prop_def(RoundingAttr)
    ftz = opt_prop_def(UnitAttr)
    res = result_def(Reg)

    def rule(self) -> str:
        return f"{FLOAT_RULE}: {self.MNEMONIC}"

    def mnemonic(self) -> str:
        rounding = "" if self.rounding is None else f".{self.rounding.data.value}"
        return f"{self.MNEMONIC}{rounding}{'.ftz' if self.ftz else ''}.f32x2"

    def sources(self) -> list[SSAValue]:
        return [v for v in self.operands if v is not self.guard]

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), *(name(v) for v in self.sources())]

    def verify_(self) -> None:
        rounding = None if self.rounding is None else self.rounding.data
        allowed = [r for r in Rounding if r in FLOAT_ROUNDING]
        if rounding is not None and rounding not in FLOAT_ROUNDING:
            raise reject(self, f"rounding .{rounding.value}", f"{self.MNEMONIC}.f32x2 rounds with {spell(allowed)}",
                         self.rule())  # fmt: skip
        if rounding is None and self.ROUNDING_REQUIRED:
            raise reject(self, f"{self.MNEMONIC}.f32x2 without rounding", f"it needs one of {spell(allowed)}",
                         self.rule())  # fmt: skip
        values = [self.res, *self.sources()]
        for role, value in zip(
            ("destination", "operand a", "operand b", "operand c")[: len(values)], values, strict=True
        ):
            check_only_register(self, role, value, "b64", self.rule())


class _F32x2BinaryOp(_F32x2Op, ABC):
    lhs = operand_def(Reg)
    rhs = operand_def(Reg)

    def __init__(
        self, res: RegisterType, lhs: SSAValue, rhs: SSAValue, *, rounding: Rounding | None = None, ftz: bool = False
    ):
        props: dict[str, Attribute] = {}
        if rounding is not None:
            props["rounding"] = RoundingAttr(rounding)
        if ftz:
            props["ftz"] = UnitAttr()
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=props)


@irdl_op_definition
class AddF32x2Op(_F32x2BinaryOp):
    traits = traits_def(WritesOnlyRegisters(), Commutative())
    name = "ptx.add_f32x2"
    MNEMONIC: ClassVar[str] = "add"


@irdl_op_definition
class SubF32x2Op(_F32x2BinaryOp):
    name = "ptx.sub_f32x2"
    MNEMONIC: ClassVar[str] = "sub"


@irdl_op_definition
class MulF32x2Op(_F32x2BinaryOp):
    traits = traits_def(WritesOnlyRegisters(), Commutative())
    name = "ptx.mul_f32x2"
    MNEMONIC: ClassVar[str] = "mul"


@irdl_op_definition
class FmaF32x2Op(_F32x2Op):
    name = "ptx.fma_f32x2"
    MNEMONIC: ClassVar[str] = "fma"
    ROUNDING_REQUIRED: ClassVar[bool] = True
    a = operand_def(Reg)
    b = operand_def(Reg)
    c = operand_def(Reg)

    def __init__(
        self,
        res: RegisterType,
        abc: tuple[SSAValue, SSAValue, SSAValue],
        *,
        rounding: Rounding | None = Rounding.RN,
        ftz: bool = False,
    ):
        props: dict[str, Attribute] = {}
        if rounding is not None:
            props["rounding"] = RoundingAttr(rounding)
        if ftz:
            props["ftz"] = UnitAttr()
        super().__init__(operands=[*abc, None], result_types=[res], properties=props)


@irdl_op_definition
class Ex2Op(TypedOp):
    """`ex2.approx[.ftz].type d, a` = 2^a, approximately (`.approx` is required): `.f32`,
    and the half types (PTX ISA 9.0, ex2: `ex2.approx.atype` with `.f16`/`.f16x2` since PTX
    7.0 on sm_75, and `ex2.approx.ftz.btype` with `.bf16`/`.bf16x2`);
    which combinations are legal is the value semantics' (`check_semantics`). The packed
    `.f16x2`/`.bf16x2` forms are not a `PtxType`: they stay generic."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.ex2"
    MNEMONIC: ClassVar[str] = "ex2"
    TYPES: ClassVar[frozenset[PtxType]] = frozenset(PtxType)  # (check_semantics decides)
    RULE: ClassVar[str] = FLOAT_RULE
    ftz = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, src: SSAValue, *, ftz: bool = False):
        super().__init__(
            operands=[src, None], result_types=[res], properties=typed_properties(type, ftz=UnitAttr() if ftz else None)
        )

    def modifiers(self) -> list[str]:
        return ["approx", *(["ftz"] if self.ftz else [])]

    def verify_(self) -> None:
        check_semantics(self, self.mnemonic(), self.rule())
        self.verify_operands()

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


# ---- float unary/binary ops whose legal spellings the value semantics decide ----------------------


class _DecodedOp(TypedOp, ABC):
    """An op whose legal type/modifier combinations are the value semantics' decoder's
    (`check_semantics`): one list of them, shared by the verifier and the interpreter."""

    TYPES: ClassVar[frozenset[PtxType]] = frozenset(PtxType)  # (check_semantics decides)

    def verify_(self) -> None:
        check_semantics(self, self.mnemonic(), self.rule())
        self.verify_operands()


@irdl_op_definition
class AbsOp(_DecodedOp):
    """`abs[.ftz].type d, a`: signed integers `.s16 .s32 .s64`, floats (`.ftz` on `.f32`/`.f16`)."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.abs"
    MNEMONIC: ClassVar[str] = "abs"
    RULE: ClassVar[str] = f"{INTEGER_RULE} / {FLOAT_RULE}"
    ftz = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, src: SSAValue, *, ftz: bool = False):
        props = typed_properties(type, ftz=UnitAttr() if ftz else None)
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        return ["ftz"] if self.ftz else []

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


class _RcpSqrtOp(_DecodedOp, ABC):
    """`op{.approx|.rnd}[.ftz].type d, a` (`.f32`: `.approx` or a rounding; `.f64` a
    rounding, or `rcp.approx.ftz.f64`)."""

    traits = traits_def(WritesOnlyRegisters())
    RULE: ClassVar[str] = FLOAT_RULE
    rounding = opt_prop_def(RoundingAttr)
    approx = opt_prop_def(UnitAttr)
    ftz = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(
        self,
        type: PtxType,
        res: RegisterType,
        src: SSAValue,
        *,
        rounding: Rounding | None = None,
        approx: bool = False,
        ftz: bool = False,
    ):
        props = typed_properties(
            type,
            rounding=None if rounding is None else RoundingAttr(rounding),
            approx=UnitAttr() if approx else None,
            ftz=UnitAttr() if ftz else None,
        )
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        how = ["approx"] if self.approx else []
        how += [] if self.rounding is None else [self.rounding.data.value]
        return how + (["ftz"] if self.ftz else [])

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


@irdl_op_definition
class RcpOp(_RcpSqrtOp):
    name = "ptx.rcp"
    MNEMONIC: ClassVar[str] = "rcp"


@irdl_op_definition
class SqrtOp(_RcpSqrtOp):
    name = "ptx.sqrt"
    MNEMONIC: ClassVar[str] = "sqrt"


@irdl_op_definition
class CopysignOp(_DecodedOp):
    """`copysign.type d, a, b`: `b` with the sign of `a` (`.f32`/`.f64`)."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.copysign"
    MNEMONIC: ClassVar[str] = "copysign"
    RULE: ClassVar[str] = FLOAT_RULE
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=typed_properties(type))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]


@irdl_op_definition
class TestpOp(_DecodedOp):
    """`testp.op.type p, a`: whether `a` is finite, infinite, a number, NaN, normal or
    subnormal (`.f32`/`.f64`)."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.testp"
    MNEMONIC: ClassVar[str] = "testp"
    RULE: ClassVar[str] = FLOAT_RULE
    test = prop_def(TestpKindAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, test: TestpKind, type: PtxType, res: RegisterType, src: SSAValue):
        props = typed_properties(type, test=TestpKindAttr(test))
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        return [self.test.data.value]

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]

    def verify_operands(self) -> None:
        check_operand(self, "operand a", self.src, self.ptx_type, self.rule())
        check_operand(self, "destination", self.res, PtxType.PRED, self.rule())


@irdl_op_definition
class CvtPackOp(Instruction):
    """`cvt.rnd{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b` and
    `cvt.rn.satfinite{.relu}.{e4m3x2,...}.f32 d, a, b`: `a` and `b` converted and packed,
    `a` in the upper half (PTX ISA 9.0, cvt). The modifier order is the ISA's syntax for
    each family; which combinations are legal is the value semantics' (`check_semantics`)."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.cvt_pack"
    dtype = prop_def(PackedFloatAttr)
    rounding = prop_def(RoundingAttr)
    relu = opt_prop_def(UnitAttr)
    satfinite = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    a = operand_def(Reg)
    b = operand_def(Reg)

    RULE: ClassVar[str] = f"{MOVE_RULE}: cvt"

    def __init__(
        self,
        dtype: PackedFloat,
        res: RegisterType,
        a: SSAValue,
        b: SSAValue,
        *,
        rounding: Rounding = Rounding.RN,
        relu: bool = False,
        satfinite: bool = False,
    ):
        props: dict[str, Attribute] = {"dtype": PackedFloatAttr(dtype), "rounding": RoundingAttr(rounding)}
        if relu:
            props["relu"] = UnitAttr()
        if satfinite:
            props["satfinite"] = UnitAttr()
        super().__init__(operands=[a, b, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        relu, sat = ["relu"] if self.relu else [], ["satfinite"] if self.satfinite else []
        flags = relu + sat if self.dtype.data.half else sat + relu
        return ".".join(["cvt", self.rounding.data.value, *flags, self.dtype.data.value, "f32"])

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b)]

    def verify_(self) -> None:
        check_semantics(self, self.mnemonic(), self.RULE)
        check_only_register(self, "destination", self.res, f"b{self.dtype.data.width}", self.RULE)
        check_operand(self, "operand a", self.a, PtxType.F32, self.RULE)
        check_operand(self, "operand b", self.b, PtxType.F32, self.RULE)

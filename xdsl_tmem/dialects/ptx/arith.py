"""Arithmetic, logic, comparison, selection and conversion instructions."""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import (
    StringAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Commutative

from xdsl_tmem.dialects.ptx.base import (
    Instruction,
    MovSource,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    TypedInstruction,
    WritesOnlyRegisters,
)


class _BinaryOp(TypedInstruction, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, type: str, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]


@irdl_op_definition
class AddOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.add"
    MNEMONIC: ClassVar[str] = "add"


@irdl_op_definition
class SubOp(_BinaryOp):
    name = "ptx.sub"
    MNEMONIC: ClassVar[str] = "sub"


@irdl_op_definition
class MulOp(_BinaryOp):
    traits = traits_def(Commutative())
    """`mul.{lo,hi,wide}.type` for integers, `mul[.rn].f32` for floats (in `type`)."""

    name = "ptx.mul"
    MNEMONIC: ClassVar[str] = "mul"


@irdl_op_definition
class DivOp(_BinaryOp):
    name = "ptx.div"
    MNEMONIC: ClassVar[str] = "div"


@irdl_op_definition
class RemOp(_BinaryOp):
    name = "ptx.rem"
    MNEMONIC: ClassVar[str] = "rem"


@irdl_op_definition
class AndOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.and"
    MNEMONIC: ClassVar[str] = "and"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class OrOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.or"
    MNEMONIC: ClassVar[str] = "or"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class XorOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.xor"
    MNEMONIC: ClassVar[str] = "xor"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class ShlOp(_BinaryOp):
    name = "ptx.shl"
    MNEMONIC: ClassVar[str] = "shl"


@irdl_op_definition
class ShrOp(_BinaryOp):
    name = "ptx.shr"
    MNEMONIC: ClassVar[str] = "shr"


@irdl_op_definition
class MinOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.min"
    MNEMONIC: ClassVar[str] = "min"


@irdl_op_definition
class MaxOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.max"
    MNEMONIC: ClassVar[str] = "max"


class _UnaryOp(TypedInstruction, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: str, res: RegisterType, src: SSAValue):
        super().__init__(operands=[src, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


@irdl_op_definition
class NotOp(_UnaryOp):
    name = "ptx.not"
    MNEMONIC: ClassVar[str] = "not"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class NegOp(_UnaryOp):
    name = "ptx.neg"
    MNEMONIC: ClassVar[str] = "neg"


@irdl_op_definition
class MovOp(TypedInstruction):
    """`mov.type d, a` — a register, immediate, symbol address or special register."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.mov"
    MNEMONIC: ClassVar[str] = "mov"
    res = result_def(Reg)
    src = operand_def(MovSource)

    def __init__(self, type: str, res: RegisterType, src: SSAValue):
        super().__init__(operands=[src, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


class _TernaryOp(TypedInstruction, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)

    def __init__(self, type: str, res: RegisterType, a: SSAValue, b: SSAValue, c: SSAValue):
        super().__init__(operands=[a, b, c, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.c)]


@irdl_op_definition
class MadOp(_TernaryOp):
    """`mad.{lo,wide}.type d, a, b, c` = a * b + c."""

    name = "ptx.mad"
    MNEMONIC: ClassVar[str] = "mad"


@irdl_op_definition
class FmaOp(_TernaryOp):
    """`fma.rn.f32 d, a, b, c`."""

    name = "ptx.fma"
    MNEMONIC: ClassVar[str] = "fma"


@irdl_op_definition
class SelpOp(TypedInstruction):
    """`selp.type d, a, b, p` = p ? a : b."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.selp"
    MNEMONIC: ClassVar[str] = "selp"
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    cond = operand_def(Reg)

    def __init__(self, type: str, res: RegisterType, a: SSAValue, b: SSAValue, cond: SSAValue):
        super().__init__(operands=[a, b, cond, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.cond)]


@irdl_op_definition
class SetpOp(Instruction):
    """`setp.cmp.type p, a, b`."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.setp"
    cmp = prop_def(StringAttr)
    type = prop_def(StringAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, cmp: str, type: str, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs, None],
            result_types=[res],
            properties={"cmp": StringAttr(cmp), "type": StringAttr(type)},
        )

    def mnemonic(self) -> str:
        return f"setp.{self.cmp.data}.{self.type.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]


@irdl_op_definition
class CvtOp(Instruction):
    """`cvt[.rnd].dtype.stype d, a`; `modifier` holds the rounding mode if any."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.cvt"
    dtype = prop_def(StringAttr)
    stype = prop_def(StringAttr)
    modifier = opt_prop_def(StringAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    def __init__(self, dtype: str, stype: str, res: RegisterType, src: SSAValue, modifier: str | None = None):
        props: dict[str, Attribute] = {"dtype": StringAttr(dtype), "stype": StringAttr(stype)}
        if modifier is not None:
            props["modifier"] = StringAttr(modifier)
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        rounding = "" if self.modifier is None else f".{self.modifier.data}"
        return f"cvt{rounding}.{self.dtype.data}.{self.stype.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]

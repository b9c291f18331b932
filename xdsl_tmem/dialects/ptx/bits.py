"""Bit fields, bit counts, permutes and funnel shifts (PTX ISA 9.0, Integer Arithmetic and
Logic and Shift Instructions)."""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import IntegerType, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.arith import INTEGER_RULE, LOGIC_RULE, MOVE_RULE, TypedOp, UnaryOp, typed_properties
from xdsl_tmem.dialects.ptx.base import (
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    WritesOnlyRegisters,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    BFE_TYPES,
    BFI_TYPES,
    BFIND_TYPES,
    BREV_TYPES,
    POPC_CLZ_TYPES,
    PrmtMode,
    PrmtModeAttr,
    PtxType,
    ShfDirection,
    ShfDirectionAttr,
    ShfMode,
    ShfModeAttr,
    check_operand,
    check_register,
    operand_text,
    reject,
    types,
)

# ---- bit fields, bit counts, permutes and funnel shifts ---------------------------------------


class _BitCountOp(TypedOp, ABC):
    """`popc`/`clz`/`bfind`: one source of the type, a `.u32` count (a `.b32` register)."""

    traits = traits_def(WritesOnlyRegisters())
    RULE: ClassVar[str] = LOGIC_RULE
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, src: SSAValue, **optional: Attribute | None):
        super().__init__(operands=[src, None], result_types=[res], properties=typed_properties(type, **optional))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]

    def verify_operands(self) -> None:
        check_operand(self, "operand a", self.src, self.ptx_type, self.rule())
        check_operand(self, "destination", self.res, PtxType.U32, self.rule())


@irdl_op_definition
class PopcOp(_BitCountOp):
    """`popc.type d, a`: the number of one bits of `a`."""

    name = "ptx.popc"
    MNEMONIC: ClassVar[str] = "popc"
    TYPES: ClassVar[frozenset[PtxType]] = POPC_CLZ_TYPES


@irdl_op_definition
class ClzOp(_BitCountOp):
    """`clz.type d, a`: the number of leading zero bits of `a`."""

    name = "ptx.clz"
    MNEMONIC: ClassVar[str] = "clz"
    TYPES: ClassVar[frozenset[PtxType]] = POPC_CLZ_TYPES


@irdl_op_definition
class BfindOp(_BitCountOp):
    """`bfind[.shiftamt].type d, a`: the position of the most significant non-sign bit
    (with `.shiftamt`, the shift that brings it to the top)."""

    name = "ptx.bfind"
    MNEMONIC: ClassVar[str] = "bfind"
    RULE: ClassVar[str] = INTEGER_RULE
    TYPES: ClassVar[frozenset[PtxType]] = BFIND_TYPES
    shiftamt = opt_prop_def(UnitAttr)

    def __init__(self, type: PtxType, res: RegisterType, src: SSAValue, *, shiftamt: bool = False):
        super().__init__(type, res, src, shiftamt=UnitAttr() if shiftamt else None)

    def modifiers(self) -> list[str]:
        return ["shiftamt"] if self.shiftamt else []


@irdl_op_definition
class BrevOp(UnaryOp):
    """`brev.type d, a`: `a`'s bits reversed."""

    name = "ptx.brev"
    MNEMONIC: ClassVar[str] = "brev"
    TYPES: ClassVar[frozenset[PtxType]] = BREV_TYPES
    RULE: ClassVar[str] = INTEGER_RULE


class _ThreeSourceOp(TypedOp, ABC):
    """`op[.modifiers].type d, a, b, c` with no rounding (bit fields, permutes)."""

    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)

    def __init__(
        self, type: PtxType, res: RegisterType, abc: tuple[SSAValue, SSAValue, SSAValue], **optional: Attribute | None
    ):
        super().__init__(operands=[*abc, None], result_types=[res], properties=typed_properties(type, **optional))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.c)]


@irdl_op_definition
class BfeOp(_ThreeSourceOp):
    """`bfe.type d, a, b, c`: `c` bits of `a` from bit `b` (sign-extended for `.s`); `b`
    and `c` are `.u32` (registers or immediates) whatever the type."""

    name = "ptx.bfe"
    MNEMONIC: ClassVar[str] = "bfe"
    TYPES: ClassVar[frozenset[PtxType]] = BFE_TYPES
    RULE: ClassVar[str] = INTEGER_RULE

    def verify_operands(self) -> None:
        check_operand(self, "destination", self.res, self.ptx_type, self.rule())
        check_operand(self, "operand a", self.a, self.ptx_type, self.rule())
        check_register(self, "start position b", self.b, "b32", self.rule())
        check_register(self, "length c", self.c, "b32", self.rule())


@irdl_op_definition
class BfiOp(TypedOp):
    """`bfi.type f, a, b, c, d`: `b` with `d` bits from bit `c` replaced by `a`'s low bits;
    `c` and `d` are `.u32`."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.bfi"
    MNEMONIC: ClassVar[str] = "bfi"
    TYPES: ClassVar[frozenset[PtxType]] = BFI_TYPES
    RULE: ClassVar[str] = INTEGER_RULE
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)
    d = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, abcd: tuple[SSAValue, SSAValue, SSAValue, SSAValue]):
        super().__init__(operands=[*abcd, None], result_types=[res], properties=typed_properties(type))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.c), name(self.d)]

    def verify_operands(self) -> None:
        for role, value in (("destination", self.res), ("operand a", self.a), ("operand b", self.b)):
            check_operand(self, role, value, self.ptx_type, self.rule())
        check_register(self, "start position c", self.c, "b32", self.rule())
        check_register(self, "length d", self.d, "b32", self.rule())


@irdl_op_definition
class PrmtOp(_ThreeSourceOp):
    """`prmt.b32[.mode] d, a, b, c`: bytes of `{b, a}` selected by `c` (PTX ISA 9.0, Data
    Movement and Conversion Instructions: prmt)."""

    name = "ptx.prmt"
    MNEMONIC: ClassVar[str] = "prmt"
    TYPES: ClassVar[frozenset[PtxType]] = types("b32")
    RULE: ClassVar[str] = MOVE_RULE
    prmt_mode = opt_prop_def(PrmtModeAttr)

    def __init__(self, res: RegisterType, abc: tuple[SSAValue, SSAValue, SSAValue], prmt_mode: PrmtMode | None = None):
        super().__init__(PtxType.B32, res, abc, prmt_mode=None if prmt_mode is None else PrmtModeAttr(prmt_mode))

    def mnemonic(self) -> str:
        mode = "" if self.prmt_mode is None else f".{self.prmt_mode.data.value}"
        return f"prmt.{self.ptx_type.value}{mode}"


@irdl_op_definition
class Lop3Op(TypedOp):
    """`lop3.b32 d, a, b, c, immLut`: any three-input logic function, its truth table an
    8-bit immediate (a register is refused: ptxas "Arguments mismatch")."""

    traits = traits_def(WritesOnlyRegisters())
    name = "ptx.lop3"
    MNEMONIC: ClassVar[str] = "lop3"
    TYPES: ClassVar[frozenset[PtxType]] = types("b32")
    RULE: ClassVar[str] = LOGIC_RULE
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)
    lut = operand_def(RegOrImm)

    def __init__(self, res: RegisterType, abc: tuple[SSAValue, SSAValue, SSAValue], lut: SSAValue):
        super().__init__(operands=[*abc, lut, None], result_types=[res], properties=typed_properties(PtxType.B32))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.c), name(self.lut)]

    def verify_operands(self) -> None:
        for role, value in (
            ("destination", self.res),
            ("operand a", self.a),
            ("operand b", self.b),
            ("operand c", self.c),
        ):
            check_operand(self, role, value, self.ptx_type, self.rule())
        if not isinstance(self.lut.type, IntegerType):
            raise reject(self, f"truth table {operand_text(self.lut)}", "immLut is an integer immediate", self.rule())


@irdl_op_definition
class ShfOp(_ThreeSourceOp):
    """`shf.{l,r}.{clamp,wrap}.b32 d, a, b, c`: the 64-bit `{b, a}` shifted by `c` (a
    `.u32`); the direction and the clamp/wrap mode are both required."""

    name = "ptx.shf"
    MNEMONIC: ClassVar[str] = "shf"
    TYPES: ClassVar[frozenset[PtxType]] = types("b32")
    RULE: ClassVar[str] = LOGIC_RULE
    direction = prop_def(ShfDirectionAttr)
    shf_mode = prop_def(ShfModeAttr)

    def __init__(
        self, direction: ShfDirection, mode: ShfMode, res: RegisterType, abc: tuple[SSAValue, SSAValue, SSAValue]
    ):
        super().__init__(PtxType.B32, res, abc, direction=ShfDirectionAttr(direction), shf_mode=ShfModeAttr(mode))

    def modifiers(self) -> list[str]:
        return [self.direction.data.value, self.shf_mode.data.value]

    def verify_operands(self) -> None:
        for role, value in (("destination", self.res), ("operand a", self.a), ("operand b", self.b)):
            check_operand(self, role, value, self.ptx_type, self.rule())
        check_register(self, "shift amount c", self.c, "b32", self.rule())

"""Value instructions beyond the core arithmetic ops: the float modifiers `.ftz .sat
.relu .xorsign.abs` and the packed half types `.f16x2 .bf16x2`, the approximate
transcendentals, the carry chain (`add.cc addc sub.cc subc mad.cc madc`), and the
integer odds and ends (`mul24 mad24 sad dp4a dp2a bmsk szext cnot slct`), PTX ISA 9.0,
Integer Arithmetic, Extended-Precision Integer Arithmetic, Floating-Point, Half
Precision, Logic and Shift, Comparison and Selection Instructions.

Which type/modifier combinations are legal is written once, in the value semantics'
decoders (`xdsl_tmem.interpreter.ptx.decode`, checked bit-exact against 819,712 H100
results in tests/test_ptx_semantics_silicon.py and rule by rule against ptxas in
tests/test_ptx_isa_rules.py); each op's verifier asks them (`check_semantics`) and
checks its registers against the types they read and write. A spelling the core ops
of arith.py own (`add.rn.f32`, `neg.f16`) is theirs: these ops refuse it, so every
instruction reads as one typed op.

The property domains are narrow enums (not `PtxType` with every type): the recognizer
enumerates every value combination of every op (frontend/recognize.py), and its index
must stay small.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from xdsl.dialects.builtin import UnitAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_attr_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.utils.str_enum import StrEnum

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.arith import COMPARE_RULE, FLOAT_RULE, INTEGER_RULE, LOGIC_RULE, MOVE_RULE
from xdsl_tmem.dialects.ptx.base import Instruction, Namer, Reg, RegisterType, RegOrImm, WritesOnlyRegisters
from xdsl_tmem.dialects.ptx.qualifiers import (
    BoolOpAttr,
    CmpOpAttr,
    DivPrecisionAttr,
    IntModeAttr,
    PackedFloatAttr,
    PtxType,
    PtxTypeAttr,
    RoundingAttr,
    check_only_register,
    check_operand,
    check_register,
    reject,
)
from xdsl_tmem.dialects.traits import WarpLocal

EXTENDED_RULE = "PTX ISA 9.0, Extended-Precision Integer Arithmetic Instructions"
HALF_RULE = "PTX ISA 9.0, Half Precision Floating-Point Instructions"


class FloatType(StrEnum):
    """The float types of the flagged/packed arithmetic."""

    F16 = "f16"
    F16X2 = "f16x2"
    BF16 = "bf16"
    BF16X2 = "bf16x2"
    F32 = "f32"
    F64 = "f64"

    @property
    def packed(self) -> bool:
        return self in (FloatType.F16X2, FloatType.BF16X2)


@irdl_attr_definition
class FloatTypeAttr(EnumAttribute[FloatType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.float_type"


class MinMaxType(StrEnum):
    """`min`/`max` with `.ftz .xorsign.abs .relu` or packed halves: the float types and
    `.s32` (`.relu`)."""

    F16 = "f16"
    F16X2 = "f16x2"
    BF16 = "bf16"
    BF16X2 = "bf16x2"
    F32 = "f32"
    S16X2 = "s16x2"
    S32 = "s32"


@irdl_attr_definition
class MinMaxTypeAttr(EnumAttribute[MinMaxType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.min_max_type"


class FloatRounding(StrEnum):
    """The IEEE roundings a float arithmetic instruction takes."""

    RN = "rn"
    RZ = "rz"
    RM = "rm"
    RP = "rp"


@irdl_attr_definition
class FloatRoundingAttr(EnumAttribute[FloatRounding], SpacedOpaqueSyntaxAttribute):
    name = "ptx.float_rounding"


class WordType(StrEnum):
    """The 32- and 64-bit integer types (carry chain, `dp4a`, `mul24`, `szext`)."""

    U32 = "u32"
    S32 = "s32"
    U64 = "u64"
    S64 = "s64"


@irdl_attr_definition
class WordTypeAttr(EnumAttribute[WordType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.word_type"


class BitsMode(StrEnum):
    """`bmsk`/`szext`: a position past the width is clamped or taken modulo the width."""

    CLAMP = "clamp"
    WRAP = "wrap"


@irdl_attr_definition
class BitsModeAttr(EnumAttribute[BitsMode], SpacedOpaqueSyntaxAttribute):
    name = "ptx.bits_mode"


class SelectType(StrEnum):
    """`slct`'s selector: `.s32` or `.f32`."""

    S32 = "s32"
    F32 = "f32"


@irdl_attr_definition
class SelectTypeAttr(EnumAttribute[SelectType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.select_type"


def _unit(flag: bool) -> UnitAttr | None:
    return UnitAttr() if flag else None


def _value(attr: EnumAttribute[Any] | None) -> list[str]:
    """An optional enum property's spelling: its value, nothing when absent."""
    return [] if attr is None else [str(attr.data)]


class SpelledOp(Instruction, ABC):
    """`opcode.modifiers d, a[, b[, c]]`: the destination(s), then the sources in PTX
    order (the order the value semantics take them)."""

    MNEMONIC: ClassVar[str]
    RULE: ClassVar[str]
    CORE: ClassVar[str] = ""
    """The core op (arith.py) whose spellings this op refuses, if any."""

    @abstractmethod
    def modifiers(self) -> list[str]: ...

    def mnemonic(self) -> str:
        return ".".join([self.MNEMONIC, *self.modifiers()])

    def rule(self) -> str:
        return f"{self.RULE}: {self.MNEMONIC}"

    def sources(self) -> list[SSAValue]:
        return [v for v in self.operands if v is not self.guard]

    def ptx_operands(self, name: Namer) -> list[str]:
        return [*(name(r) for r in self.results), *(name(v) for v in self.sources())]

    def core_spelling(self) -> bool:
        """Whether the spelling is the core op's (no extended modifier or type)."""
        return False

    def pair(self) -> bool:
        """`setp`'s `p|q`: two predicates written (the semantics' `pair`)."""
        return False

    def verify_(self) -> None:
        from xdsl_tmem.interpreter.ptx import LANE_DTYPE, UnsupportedInstruction, decode

        if self.core_spelling():
            raise reject(self, self.mnemonic(), f"without an extended modifier or packed type it is {self.CORE}",
                         self.rule())  # fmt: skip
        opcode, *modifiers = self.mnemonic().split(".")
        try:
            sem = decode(opcode, tuple(modifiers), pair=self.pair())
        except UnsupportedInstruction as e:
            raise reject(self, self.mnemonic(), e.why, self.rule()) from None
        operand_types = [t for t in sem.operands if t != "cc"]
        result_types = [t for t in sem.results if t != "cc"]
        sources = self.sources()
        if len(sources) != len(operand_types) or len(self.results) != len(result_types):
            takes = f"{self.mnemonic()} takes {len(operand_types)} and {len(result_types)}"
            raise reject(self, f"{len(sources)} sources and {len(self.results)} destinations", takes, self.rule())
        for i, (value, t) in enumerate(zip(sources, operand_types, strict=True)):
            _check(self, f"operand {'abcd'[i]}", value, t, 8 * LANE_DTYPE[t].itemsize, destination=False)
        for value, t in zip(self.results, result_types, strict=True):
            _check(self, "destination", value, t, 8 * LANE_DTYPE[t].itemsize, destination=True)


class RegisterOnlyOp(SpelledOp, ABC):
    """A `SpelledOp` whose only effect is its result registers (the carry-chain ops
    also write the carry flag)."""

    traits = traits_def(WritesOnlyRegisters())


def _check(op: SpelledOp, role: str, value: SSAValue, t: str, width: int, *, destination: bool) -> None:
    """A value of PTX type `t`: the type's register class (or an immediate, for a
    source); a packed type (`.f16x2`, `.e4m3x2`, `.tf32`) is read as the `.b` register
    of its width."""
    if t in PtxType.__members__.values():
        check_operand(op, role, value, PtxType(t), op.rule(), wider=isinstance(op, _CvtExtOp) and destination)
    elif destination:
        check_only_register(op, role, value, f"b{width}", op.rule())
    else:
        check_register(op, role, value, f"b{width}", op.rule())


def _props(**values: Attribute | None) -> dict[str, Attribute]:
    return {k: v for k, v in values.items() if v is not None}


# ---- float arithmetic with .ftz/.sat/.relu or packed halves ---------------------------------------


class _FloatBinaryOp(RegisterOnlyOp, ABC):
    """`op[.rnd][.ftz][.sat].type d, a, b`."""

    RULE: ClassVar[str] = f"{FLOAT_RULE} / {HALF_RULE}"
    type = prop_def(FloatTypeAttr)
    rounding = opt_prop_def(FloatRoundingAttr)
    ftz = opt_prop_def(UnitAttr)
    sat = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(
        self, type: FloatType, res: RegisterType, lhs: SSAValue, rhs: SSAValue, *,
        rounding: FloatRounding | None = None, ftz: bool = False, sat: bool = False,
    ):  # fmt: skip
        props = _props(
            type=FloatTypeAttr(type), rounding=None if rounding is None else FloatRoundingAttr(rounding),
            ftz=_unit(ftz), sat=_unit(sat),
        )  # fmt: skip
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        flags = ["ftz"] * bool(self.ftz) + ["sat"] * bool(self.sat)
        return [*_value(self.rounding), *flags, self.type.data.value]

    def core_spelling(self) -> bool:
        return not (self.ftz or self.sat or self.type.data.packed)


@irdl_op_definition
class AddExtOp(_FloatBinaryOp):
    name = "ptx.add_ext"
    MNEMONIC: ClassVar[str] = "add"
    CORE: ClassVar[str] = "ptx.add"


@irdl_op_definition
class SubExtOp(_FloatBinaryOp):
    name = "ptx.sub_ext"
    MNEMONIC: ClassVar[str] = "sub"
    CORE: ClassVar[str] = "ptx.sub"


@irdl_op_definition
class MulExtOp(_FloatBinaryOp):
    name = "ptx.mul_ext"
    MNEMONIC: ClassVar[str] = "mul"
    CORE: ClassVar[str] = "ptx.mul"


@irdl_op_definition
class FmaExtOp(RegisterOnlyOp):
    """`fma.rnd[.ftz][.sat|.relu].type d, a, b, c`."""

    name = "ptx.fma_ext"
    MNEMONIC: ClassVar[str] = "fma"
    RULE: ClassVar[str] = f"{FLOAT_RULE} / {HALF_RULE}"
    CORE: ClassVar[str] = "ptx.fma"
    type = prop_def(FloatTypeAttr)
    rounding = opt_prop_def(FloatRoundingAttr)
    ftz = opt_prop_def(UnitAttr)
    sat = opt_prop_def(UnitAttr)
    relu = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)

    def __init__(
        self, type: FloatType, res: RegisterType, abc: tuple[SSAValue, SSAValue, SSAValue], *,
        rounding: FloatRounding | None = FloatRounding.RN, ftz: bool = False, sat: bool = False, relu: bool = False,
    ):  # fmt: skip
        props = _props(
            type=FloatTypeAttr(type), rounding=None if rounding is None else FloatRoundingAttr(rounding),
            ftz=_unit(ftz), sat=_unit(sat), relu=_unit(relu),
        )  # fmt: skip
        super().__init__(operands=[*abc, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        flags = ["ftz"] * bool(self.ftz) + ["sat"] * bool(self.sat) + ["relu"] * bool(self.relu)
        return [*_value(self.rounding), *flags, self.type.data.value]

    def core_spelling(self) -> bool:
        return not (self.ftz or self.sat or self.relu or self.type.data.packed)


class _MinMaxExtOp(RegisterOnlyOp, ABC):
    """`op[.ftz][.NaN][.xorsign.abs].ftype`, `op.relu.s32`, packed halves."""

    RULE: ClassVar[str] = f"{INTEGER_RULE} / {FLOAT_RULE} / {HALF_RULE}"
    type = prop_def(MinMaxTypeAttr)
    ftz = opt_prop_def(UnitAttr)
    nan = opt_prop_def(UnitAttr)
    xorsign_abs = opt_prop_def(UnitAttr)
    relu = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(
        self, type: MinMaxType, res: RegisterType, lhs: SSAValue, rhs: SSAValue, *,
        ftz: bool = False, nan: bool = False, xorsign_abs: bool = False, relu: bool = False,
    ):  # fmt: skip
        props = _props(type=MinMaxTypeAttr(type), ftz=_unit(ftz), nan=_unit(nan), xorsign_abs=_unit(xorsign_abs),
                       relu=_unit(relu))  # fmt: skip
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        flags = ["ftz"] * bool(self.ftz) + ["NaN"] * bool(self.nan) + ["xorsign", "abs"] * bool(self.xorsign_abs)
        return [*flags, *["relu"] * bool(self.relu), self.type.data.value]

    def core_spelling(self) -> bool:
        t = self.type.data
        return not (self.ftz or self.xorsign_abs or self.relu) and t in (MinMaxType.F16, MinMaxType.BF16,
                                                                          MinMaxType.F32, MinMaxType.S32)  # fmt: skip


@irdl_op_definition
class MinExtOp(_MinMaxExtOp):
    name = "ptx.min_ext"
    MNEMONIC: ClassVar[str] = "min"
    CORE: ClassVar[str] = "ptx.min"


@irdl_op_definition
class MaxExtOp(_MinMaxExtOp):
    name = "ptx.max_ext"
    MNEMONIC: ClassVar[str] = "max"
    CORE: ClassVar[str] = "ptx.max"


class _FloatUnaryOp(RegisterOnlyOp, ABC):
    type = prop_def(FloatTypeAttr)
    ftz = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: FloatType, res: RegisterType, src: SSAValue, *, ftz: bool = False):
        super().__init__(operands=[src, None], result_types=[res],
                         properties=_props(type=FloatTypeAttr(type), ftz=_unit(ftz)))  # fmt: skip


@irdl_op_definition
class NegExtOp(_FloatUnaryOp):
    """`neg[.ftz].type d, a` with `.ftz` or a packed half type."""

    name = "ptx.neg_ext"
    MNEMONIC: ClassVar[str] = "neg"
    RULE: ClassVar[str] = f"{FLOAT_RULE} / {HALF_RULE}"
    CORE: ClassVar[str] = "ptx.neg"

    def modifiers(self) -> list[str]:
        return [*["ftz"] * bool(self.ftz), self.type.data.value]

    def core_spelling(self) -> bool:
        return not (self.ftz or self.type.data.packed)


class _ApproxOp(_FloatUnaryOp, ABC):
    """`op.approx[.ftz].type d, a`: the bits are the hardware's approximation, which the
    ISA bounds but does not fix (the value semantics model it within the bound)."""

    RULE: ClassVar[str] = f"{FLOAT_RULE} / {HALF_RULE}"

    def modifiers(self) -> list[str]:
        return ["approx", *["ftz"] * bool(self.ftz), self.type.data.value]


@irdl_op_definition
class RsqrtOp(_ApproxOp):
    name = "ptx.rsqrt"
    MNEMONIC: ClassVar[str] = "rsqrt"


@irdl_op_definition
class TanhOp(_ApproxOp):
    name = "ptx.tanh"
    MNEMONIC: ClassVar[str] = "tanh"


@irdl_op_definition
class Lg2Op(_ApproxOp):
    name = "ptx.lg2"
    MNEMONIC: ClassVar[str] = "lg2"


@irdl_op_definition
class SinOp(_ApproxOp):
    name = "ptx.sin"
    MNEMONIC: ClassVar[str] = "sin"


@irdl_op_definition
class CosOp(_ApproxOp):
    name = "ptx.cos"
    MNEMONIC: ClassVar[str] = "cos"


@irdl_op_definition
class DivFtzOp(RegisterOnlyOp):
    """`div{.approx|.full|.rnd}.ftz.f32 d, a, b` (`ptx.div` is the form without `.ftz`)."""

    name = "ptx.div_ftz"
    MNEMONIC: ClassVar[str] = "div"
    RULE: ClassVar[str] = FLOAT_RULE
    precision = opt_prop_def(DivPrecisionAttr)
    rounding = opt_prop_def(FloatRoundingAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(
        self, res: RegisterType, lhs: SSAValue, rhs: SSAValue, *,
        precision: DivPrecisionAttr | None = None, rounding: FloatRounding | None = None,
    ):  # fmt: skip
        props = _props(precision=precision, rounding=None if rounding is None else FloatRoundingAttr(rounding))
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        return [*_value(self.precision), *_value(self.rounding), "ftz", "f32"]


# ---- integer -------------------------------------------------------------------------------------


class _FixedOp(RegisterOnlyOp, ABC):
    """An instruction of one spelling, `SPELLING`."""

    SPELLING: ClassVar[tuple[str, ...]]

    def modifiers(self) -> list[str]:
        return list(self.SPELLING)


class _FixedBinaryOp(_FixedOp, ABC):
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs, None], result_types=[res])


@irdl_op_definition
class AddSatOp(_FixedBinaryOp):
    """`add.sat.s32 d, a, b`: clamped to the `.s32` range."""

    name = "ptx.add_sat"
    MNEMONIC: ClassVar[str] = "add"
    RULE: ClassVar[str] = INTEGER_RULE
    SPELLING: ClassVar[tuple[str, ...]] = ("sat", "s32")


@irdl_op_definition
class SubSatOp(_FixedBinaryOp):
    name = "ptx.sub_sat"
    MNEMONIC: ClassVar[str] = "sub"
    RULE: ClassVar[str] = INTEGER_RULE
    SPELLING: ClassVar[tuple[str, ...]] = ("sat", "s32")


class _TernaryOp(RegisterOnlyOp, ABC):
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)


@irdl_op_definition
class MadSatOp(_TernaryOp, _FixedOp):
    """`mad.hi.sat.s32 d, a, b, c`: the high half of a * b plus c, clamped."""

    name = "ptx.mad_sat"
    MNEMONIC: ClassVar[str] = "mad"
    RULE: ClassVar[str] = INTEGER_RULE
    SPELLING: ClassVar[tuple[str, ...]] = ("hi", "sat", "s32")

    def __init__(self, res: RegisterType, abc: tuple[SSAValue, SSAValue, SSAValue]):
        super().__init__(operands=[*abc, None], result_types=[res])


class _ModeTypeBinaryOp(RegisterOnlyOp, ABC):
    """`op.{lo,hi}.type d, a, b`."""

    RULE: ClassVar[str] = INTEGER_RULE
    mode = prop_def(IntModeAttr)
    type = prop_def(WordTypeAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, self.type.data.value]


@irdl_op_definition
class Mul24Op(_ModeTypeBinaryOp):
    """`mul24.{lo,hi}.{u32,s32} d, a, b`: the 48-bit product of the low 24 bits."""

    name = "ptx.mul24"
    MNEMONIC: ClassVar[str] = "mul24"


class _ModeTypeTernaryOp(_TernaryOp, ABC):
    mode = prop_def(IntModeAttr)
    type = prop_def(WordTypeAttr)

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, self.type.data.value]


@irdl_op_definition
class Mad24Op(_ModeTypeTernaryOp):
    name = "ptx.mad24"
    MNEMONIC: ClassVar[str] = "mad24"
    RULE: ClassVar[str] = INTEGER_RULE


@irdl_op_definition
class SadOp(_TernaryOp):
    """`sad.type d, a, b, c` = c + |a - b|."""

    name = "ptx.sad"
    MNEMONIC: ClassVar[str] = "sad"
    RULE: ClassVar[str] = INTEGER_RULE
    type = prop_def(PtxTypeAttr)

    def modifiers(self) -> list[str]:
        return [self.type.data.value]


@irdl_op_definition
class Dp4aOp(_TernaryOp):
    """`dp4a.atype.btype d, a, b, c`: four byte products summed into c."""

    name = "ptx.dp4a"
    MNEMONIC: ClassVar[str] = "dp4a"
    RULE: ClassVar[str] = INTEGER_RULE
    atype = prop_def(WordTypeAttr)
    btype = prop_def(WordTypeAttr)

    def modifiers(self) -> list[str]:
        return [self.atype.data.value, self.btype.data.value]


@irdl_op_definition
class Dp2aOp(_TernaryOp):
    """`dp2a.{lo,hi}.atype.btype d, a, b, c`: two 16-bit by 8-bit products (b's low or
    high two bytes) summed into c."""

    name = "ptx.dp2a"
    MNEMONIC: ClassVar[str] = "dp2a"
    RULE: ClassVar[str] = INTEGER_RULE
    mode = prop_def(IntModeAttr)
    atype = prop_def(WordTypeAttr)
    btype = prop_def(WordTypeAttr)

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, self.atype.data.value, self.btype.data.value]


@irdl_op_definition
class BmskOp(RegisterOnlyOp):
    """`bmsk.{clamp,wrap}.b32 d, a, b`: a mask of b bits from position a."""

    name = "ptx.bmsk"
    MNEMONIC: ClassVar[str] = "bmsk"
    RULE: ClassVar[str] = INTEGER_RULE
    mode = prop_def(BitsModeAttr)
    type = prop_def(PtxTypeAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, self.type.data.value]


@irdl_op_definition
class SzextOp(RegisterOnlyOp):
    """`szext.{clamp,wrap}.{u32,s32} d, a, b`: a's low b bits, sign- or zero-extended."""

    name = "ptx.szext"
    MNEMONIC: ClassVar[str] = "szext"
    RULE: ClassVar[str] = INTEGER_RULE
    mode = prop_def(BitsModeAttr)
    type = prop_def(WordTypeAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, self.type.data.value]


@irdl_op_definition
class CnotOp(RegisterOnlyOp):
    """`cnot.type d, a` = (a == 0) ? 1 : 0."""

    name = "ptx.cnot"
    MNEMONIC: ClassVar[str] = "cnot"
    RULE: ClassVar[str] = LOGIC_RULE
    type = prop_def(PtxTypeAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def modifiers(self) -> list[str]:
        return [self.type.data.value]


@irdl_op_definition
class SlctOp(_TernaryOp):
    """`slct[.ftz].dtype.{s32,f32} d, a, b, c` = c >= 0 ? a : b."""

    name = "ptx.slct"
    MNEMONIC: ClassVar[str] = "slct"
    RULE: ClassVar[str] = COMPARE_RULE
    ftz = opt_prop_def(UnitAttr)
    dtype = prop_def(PtxTypeAttr)
    ctype = prop_def(SelectTypeAttr)

    def modifiers(self) -> list[str]:
        return [*["ftz"] * bool(self.ftz), self.dtype.data.value, self.ctype.data.value]


# ---- the carry chain: the CC register, per thread ----------------------------------------------


class CarryOp(SpelledOp, ABC):
    """Reads and/or writes the condition-code carry flag (`CC.CF`), which the ISA keeps
    per thread outside the register file; the interpreter keeps one per warp lane.

    `READS_CARRY`: `addc`/`subc`/`madc` add the carry-in; `writes_carry()`: `.cc`. Not
    `WritesOnlyRegisters`: the flag is state no register names, so dropping an `add.cc`
    whose sum is unused would change the `addc` after it. Warp-local: the flag is per thread."""

    traits = traits_def(WarpLocal())
    RULE: ClassVar[str] = EXTENDED_RULE
    READS_CARRY: ClassVar[bool] = False
    type = prop_def(WordTypeAttr)

    def writes_carry(self) -> bool:
        return True


class _CarryBinaryOp(CarryOp, ABC):
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)


@irdl_op_definition
class AddCcOp(_CarryBinaryOp):
    """`add.cc.type d, a, b`: sets CC.CF to the carry out."""

    name = "ptx.add_cc"
    MNEMONIC: ClassVar[str] = "add"

    def modifiers(self) -> list[str]:
        return ["cc", self.type.data.value]


@irdl_op_definition
class SubCcOp(_CarryBinaryOp):
    """`sub.cc.type d, a, b`: sets CC.CF to the borrow."""

    name = "ptx.sub_cc"
    MNEMONIC: ClassVar[str] = "sub"

    def modifiers(self) -> list[str]:
        return ["cc", self.type.data.value]


class _CarryInBinaryOp(_CarryBinaryOp, ABC):
    READS_CARRY: ClassVar[bool] = True
    cc = opt_prop_def(UnitAttr)

    def writes_carry(self) -> bool:
        return self.cc is not None

    def modifiers(self) -> list[str]:
        return [*["cc"] * bool(self.cc), self.type.data.value]


@irdl_op_definition
class AddcOp(_CarryInBinaryOp):
    """`addc[.cc].type d, a, b` = a + b + CC.CF."""

    name = "ptx.addc"
    MNEMONIC: ClassVar[str] = "addc"


@irdl_op_definition
class SubcOp(_CarryInBinaryOp):
    """`subc[.cc].type d, a, b` = a - (b + CC.CF)."""

    name = "ptx.subc"
    MNEMONIC: ClassVar[str] = "subc"


class _CarryTernaryOp(CarryOp, ABC):
    mode = prop_def(IntModeAttr)
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)


@irdl_op_definition
class MadCcOp(_CarryTernaryOp):
    """`mad.{lo,hi}.cc.type d, a, b, c`: sets CC.CF to the carry out of the addition."""

    name = "ptx.mad_cc"
    MNEMONIC: ClassVar[str] = "mad"

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, "cc", self.type.data.value]


@irdl_op_definition
class MadcOp(_CarryTernaryOp):
    """`madc.{lo,hi}[.cc].type d, a, b, c` = the product's half + c + CC.CF."""

    name = "ptx.madc"
    MNEMONIC: ClassVar[str] = "madc"
    READS_CARRY: ClassVar[bool] = True
    cc = opt_prop_def(UnitAttr)

    def writes_carry(self) -> bool:
        return self.cc is not None

    def modifiers(self) -> list[str]:
        return [self.mode.data.value, *["cc"] * bool(self.cc), self.type.data.value]


# ---- comparison ---------------------------------------------------------------------------


class CompareType(StrEnum):
    """The types `set`/`setp` compare: bit-size, integer, float and packed halves."""

    B16 = "b16"
    B32 = "b32"
    B64 = "b64"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"
    F16 = "f16"
    F16X2 = "f16x2"
    BF16 = "bf16"
    BF16X2 = "bf16x2"
    F32 = "f32"
    F64 = "f64"


@irdl_attr_definition
class CompareTypeAttr(EnumAttribute[CompareType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.compare_type"


class SetResultType(StrEnum):
    """`set`'s destination: a mask (`.u32 .s32`), 1.0f (`.f32`), or per half."""

    U32 = "u32"
    S32 = "s32"
    F32 = "f32"
    F16X2 = "f16x2"
    BF16X2 = "bf16x2"


@irdl_attr_definition
class SetResultTypeAttr(EnumAttribute[SetResultType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.set_result_type"


class _SetOp(RegisterOnlyOp, ABC):
    """`set.cmp[.bool].dtype.stype d, a, b[, [!]c]`: the comparison as a mask, 1.0f or 0
    (per half for the packed types). `.ftz` is not typed (its forms would double the
    recognizer's index; such instructions stay generic)."""

    MNEMONIC: ClassVar[str] = "set"
    RULE: ClassVar[str] = COMPARE_RULE
    cmp = prop_def(CmpOpAttr)
    dtype = prop_def(SetResultTypeAttr)
    stype = prop_def(CompareTypeAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)


@irdl_op_definition
class SetOp(_SetOp):
    name = "ptx.set"

    def modifiers(self) -> list[str]:
        return [self.cmp.data.value, self.dtype.data.value, self.stype.data.value]


@irdl_op_definition
class SetBoolOp(_SetOp):
    """`set.cmp.bool.dtype.stype d, a, b, c`: the comparison combined with predicate c."""

    name = "ptx.set_bool"
    bool_op = prop_def(BoolOpAttr)
    c = operand_def(Reg)

    def modifiers(self) -> list[str]:
        return [self.cmp.data.value, self.bool_op.data.value, self.dtype.data.value, self.stype.data.value]


@irdl_op_definition
class SetpExtOp(RegisterOnlyOp):
    """`setp.cmp[.ftz].type p[|q], a, b` with `.ftz` or a packed half type (for those, p
    compares the low halves and q the high ones); `ptx.setp`/`ptx.setp_bool` own the rest."""

    name = "ptx.setp_ext"
    MNEMONIC: ClassVar[str] = "setp"
    RULE: ClassVar[str] = COMPARE_RULE
    CORE: ClassVar[str] = "ptx.setp"
    cmp = prop_def(CmpOpAttr)
    ftz = opt_prop_def(UnitAttr)
    type = prop_def(FloatTypeAttr)
    p = result_def(Reg)
    q = opt_result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def modifiers(self) -> list[str]:
        return [self.cmp.data.value, *["ftz"] * bool(self.ftz), self.type.data.value]

    def pair(self) -> bool:
        return self.q is not None

    def core_spelling(self) -> bool:
        return not (self.ftz or self.type.data.packed)

    def ptx_operands(self, name: Namer) -> list[str]:
        destination = name(self.p) if self.q is None else f"{name(self.p)}|{name(self.q)}"
        return [destination, name(self.lhs), name(self.rhs)]


# ---- conversions with .ftz/.sat/.relu/.satfinite, packed and narrow formats --------------------


class IntCvtType(StrEnum):
    """`cvt`'s integer types."""

    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    S8 = "s8"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"


@irdl_attr_definition
class IntCvtTypeAttr(EnumAttribute[IntCvtType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.int_cvt_type"


class FloatCvtType(StrEnum):
    """`cvt`'s scalar float types."""

    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"


@irdl_attr_definition
class FloatCvtTypeAttr(EnumAttribute[FloatCvtType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.float_cvt_type"


class IntRounding(StrEnum):
    """The roundings to an integral value."""

    RNI = "rni"
    RZI = "rzi"
    RMI = "rmi"
    RPI = "rpi"


@irdl_attr_definition
class IntRoundingAttr(EnumAttribute[IntRounding], SpacedOpaqueSyntaxAttribute):
    name = "ptx.int_rounding"


class Saturation(StrEnum):
    """How a conversion clamps: `.sat` (to the destination range, NaN to 0), `.relu`
    (negatives to 0), `.satfinite` (to the largest finite value)."""

    SAT = "sat"
    RELU = "relu"
    SATFINITE = "satfinite"


@irdl_attr_definition
class SaturationAttr(EnumAttribute[Saturation], SpacedOpaqueSyntaxAttribute):
    name = "ptx.saturation"


class _CvtExtOp(RegisterOnlyOp, ABC):
    """`ptx.cvt` with `.ftz` or a saturation; one op per direction, so that the
    recognizer enumerates each direction's types only."""

    MNEMONIC: ClassVar[str] = "cvt"
    RULE: ClassVar[str] = MOVE_RULE
    CORE: ClassVar[str] = "ptx.cvt"
    res = result_def(Reg)
    src = operand_def(Reg)


@irdl_op_definition
class CvtIntSatOp(_CvtExtOp):
    """`cvt.sat.dtype.atype d, a` between integers: clamped to the destination range."""

    name = "ptx.cvt_int_sat"
    dtype = prop_def(IntCvtTypeAttr)
    stype = prop_def(IntCvtTypeAttr)

    def modifiers(self) -> list[str]:
        return ["sat", self.dtype.data.value, self.stype.data.value]


@irdl_op_definition
class CvtFloatIntOp(_CvtExtOp):
    """`cvt.irnd[.ftz][.sat].dtype.ftype d, a`: float to integer with `.ftz` or `.sat`."""

    name = "ptx.cvt_float_int"
    rounding = prop_def(IntRoundingAttr)
    ftz = opt_prop_def(UnitAttr)
    sat = opt_prop_def(UnitAttr)
    dtype = prop_def(IntCvtTypeAttr)
    stype = prop_def(FloatCvtTypeAttr)

    def modifiers(self) -> list[str]:
        flags = ["ftz"] * bool(self.ftz) + ["sat"] * bool(self.sat)
        return [self.rounding.data.value, *flags, self.dtype.data.value, self.stype.data.value]

    def core_spelling(self) -> bool:
        return not (self.ftz or self.sat)


@irdl_op_definition
class CvtFloatOp(_CvtExtOp):
    """`cvt[.rnd][.ftz][.sat|.relu|.satfinite].dtype.atype d, a` between scalar floats."""

    name = "ptx.cvt_float"
    rounding = opt_prop_def(RoundingAttr)
    ftz = opt_prop_def(UnitAttr)
    saturation = opt_prop_def(SaturationAttr)
    dtype = prop_def(FloatCvtTypeAttr)
    stype = prop_def(FloatCvtTypeAttr)

    def modifiers(self) -> list[str]:
        flags = [*_value(self.rounding), *["ftz"] * bool(self.ftz), *_value(self.saturation)]
        return [*flags, self.dtype.data.value, self.stype.data.value]

    def core_spelling(self) -> bool:
        return not (self.ftz or self.saturation)


class TfRounding(StrEnum):
    """`.tf32` rounds to nearest, ties away (`.rna`), or `.rn`/`.rz`."""

    RNA = "rna"
    RN = "rn"
    RZ = "rz"


@irdl_attr_definition
class TfRoundingAttr(EnumAttribute[TfRounding], SpacedOpaqueSyntaxAttribute):
    name = "ptx.tf_rounding"


@irdl_op_definition
class CvtTf32Op(RegisterOnlyOp):
    """`cvt.{rna,rn,rz}[.satfinite][.relu].tf32.f32 d, a`: a `.f32` rounded to tf32's 10
    mantissa bits, in a `.b32` register."""

    name = "ptx.cvt_tf32"
    MNEMONIC: ClassVar[str] = "cvt"
    RULE: ClassVar[str] = MOVE_RULE
    rounding = prop_def(TfRoundingAttr)
    satfinite = opt_prop_def(UnitAttr)
    relu = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    def modifiers(self) -> list[str]:
        flags = ["satfinite"] * bool(self.satfinite) + ["relu"] * bool(self.relu)
        return [self.rounding.data.value, *flags, "tf32", "f32"]


@irdl_op_definition
class CvtPackedOp(RegisterOnlyOp):
    """`cvt.rn[.satfinite][.relu].dtype.atype d, a` between packed pairs: `.f16x2` from
    `.e4m3x2`/`.e5m2x2` (and the 6- and 4-bit pairs), and back."""

    name = "ptx.cvt_packed"
    MNEMONIC: ClassVar[str] = "cvt"
    RULE: ClassVar[str] = MOVE_RULE
    rounding = prop_def(FloatRoundingAttr)
    satfinite = opt_prop_def(UnitAttr)
    relu = opt_prop_def(UnitAttr)
    dtype = prop_def(PackedFloatAttr)
    stype = prop_def(PackedFloatAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    def modifiers(self) -> list[str]:
        flags = ["satfinite"] * bool(self.satfinite) + ["relu"] * bool(self.relu)
        return [self.rounding.data.value, *flags, self.dtype.data.value, self.stype.data.value]


class PackSatType(StrEnum):
    """`cvt.pack.sat`'s destination element types."""

    U8 = "u8"
    S8 = "s8"
    U16 = "u16"
    S16 = "s16"


@irdl_attr_definition
class PackSatTypeAttr(EnumAttribute[PackSatType], SpacedOpaqueSyntaxAttribute):
    name = "ptx.pack_sat_type"


@irdl_op_definition
class CvtPackSatOp(RegisterOnlyOp):
    """`cvt.pack.sat.{u16,s16}.s32 d, a, b` (a in the high half) and
    `cvt.pack.sat.{u8,s8}.s32.b32 d, a, b, c` (a, b into bytes 1 and 0, c's low half
    into bytes 3..2), each source clamped to the destination type."""

    name = "ptx.cvt_pack_sat"
    MNEMONIC: ClassVar[str] = "cvt"
    RULE: ClassVar[str] = MOVE_RULE
    dtype = prop_def(PackSatTypeAttr)
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def modifiers(self) -> list[str]:
        return ["pack", "sat", self.dtype.data.value, "s32", *["b32"] * (self.c is not None)]


def _defined_here(base: type[SpelledOp]) -> tuple[type[SpelledOp], ...]:
    """The ops (classes naming an op) of this module deriving from `base`, in definition
    order (derived, not a second list to keep)."""
    return tuple(
        c for c in globals().values()
        # the module test first: `issubclass` of an imported class against an ABC walks the ABC's subclasses
        if isinstance(c, type) and c.__module__ == __name__ and issubclass(c, base) and "name" in vars(c)
    )  # fmt: skip


VALUE_OPS: tuple[type[SpelledOp], ...] = _defined_here(RegisterOnlyOp)
"""The ops of this module that read and write registers only."""

CARRY_OPS: tuple[type[SpelledOp], ...] = _defined_here(CarryOp)
"""The carry-chain ops (they also read or write the carry flag)."""

VALUE_ATTRS = (
    FloatTypeAttr, MinMaxTypeAttr, FloatRoundingAttr, WordTypeAttr, BitsModeAttr, SelectTypeAttr, CompareTypeAttr,
    SetResultTypeAttr, IntCvtTypeAttr, FloatCvtTypeAttr, IntRoundingAttr, SaturationAttr, TfRoundingAttr,
    PackSatTypeAttr,
)  # fmt: skip

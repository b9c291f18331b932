"""Rules for constants and arithmetic (`arith` and `llvm`): integer and float
binary ops, comparisons, selects, extensions, truncations and conversions, elementwise
over vectors.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    f64,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import Commutative

from xdsl_tmem.backend.isel.core import (
    Address,
    FunctionSelector,
    Operand,
    UnsupportedTypeError,
    bit_width,
    byte_size,
    float_type_name,
    register_kind,
    rule,
    to_predicate,
    vector_elements,
)
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx import CmpOp, IntMode, PtxType, Rounding

# --------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------


def _half_bits(value: float, type: Attribute) -> int:
    """The 16-bit pattern of an f16 or bf16 constant (round to nearest even)."""
    if isinstance(type, Float16Type):
        return struct.unpack(">H", struct.pack(">e", value))[0]
    if math.isnan(value):
        return 0x7FC0
    word = struct.unpack(">I", struct.pack(">f", value))[0]
    return (word + 0x7FFF + ((word >> 16) & 1)) >> 16


def _constant_operands(fs: FunctionSelector, attr: Attribute, type: Attribute) -> list[Operand]:
    element, count = vector_elements(type)
    if isinstance(attr, IntegerAttr | FloatAttr):
        values = [attr.value.data]
    elif isinstance(attr, DenseIntOrFPElementsAttr):
        values = list(attr.get_values())
        if len(values) == 1:
            values = values * count
    else:
        raise UnsupportedTypeError(f"constant {attr} has no PTX lowering")
    if isinstance(element, Float16Type | BFloat16Type):
        # PTX has no f16/bf16 immediates: move the bit pattern into a register.
        return [fs.reg(fs.imm(_half_bits(float(v), element), i16), "b16") for v in values]
    bit_width(element)  # refuses types without a register (i128, f8E4M3FN, ...)
    return [fs.imm(v, element) for v in values]


@rule(arith.ConstantOp)
def _constant(fs: FunctionSelector, op: arith.ConstantOp) -> None:
    fs.define(op.result, _constant_operands(fs, op.value, op.result.type))


@rule(llvm.ConstantOp)
def _llvm_constant(fs: FunctionSelector, op: llvm.ConstantOp) -> None:
    fs.define(op.result, _constant_operands(fs, op.value, op.result.type))


# --------------------------------------------------------------------------------------
# Integer and float arithmetic (arith and llvm), elementwise over vectors
# --------------------------------------------------------------------------------------


def _elementwise(
    fs: FunctionSelector,
    result: SSAValue,
    operands: Sequence[SSAValue],
    build: Callable[[ptx.RegisterType, list[SSAValue]], Operation],
) -> None:
    element, count = vector_elements(result.type)
    kind = register_kind(element)
    columns = [[fs.reg(o) if isinstance(o, Address) else o for o in fs.get(v)] for v in operands]
    out: list[Operand] = []
    for i in range(count):
        args = [column[i] if len(column) > 1 else column[0] for column in columns]
        args = [fs.materialize_address(a) if isinstance(a, Address) else a for a in args]
        out.append(fs.emit(build(fs.fresh(kind), args)).results[0])
    fs.define(result, out)


@dataclass(frozen=True)
class _Modifiers:
    """The modifiers of one selected binary instruction (see `_binary`)."""

    mode: IntMode | None = None
    rounding: Rounding | None = None
    nan: bool = False


_NONE = _Modifiers()
_LO = _Modifiers(mode=IntMode.LO)
_RN = _Modifiers(rounding=Rounding.RN)
_NAN = _Modifiers(nan=True)

# The instruction-selection rules of xDSL's integer and float binary ops, one entry per op:
# a table is their definition (an op without an entry has no rule and is refused).
_INT_BINARY: dict[type[Operation], tuple[type[ptx.Instruction], str, _Modifiers, str | None]] = {
    # (instruction, type letter, modifiers, how operands narrower than their register
    # are extended first: "s" by sign, "u" with zeros, None when the low bits suffice)
    arith.AddiOp: (ptx.AddOp, "s", _NONE, None),
    llvm.AddOp: (ptx.AddOp, "s", _NONE, None),
    arith.SubiOp: (ptx.SubOp, "s", _NONE, None),
    llvm.SubOp: (ptx.SubOp, "s", _NONE, None),
    arith.MuliOp: (ptx.MulOp, "s", _LO, None),
    llvm.MulOp: (ptx.MulOp, "s", _LO, None),
    arith.DivSIOp: (ptx.DivOp, "s", _NONE, "s"),
    llvm.SDivOp: (ptx.DivOp, "s", _NONE, "s"),
    arith.DivUIOp: (ptx.DivOp, "u", _NONE, "u"),
    llvm.UDivOp: (ptx.DivOp, "u", _NONE, "u"),
    arith.RemSIOp: (ptx.RemOp, "s", _NONE, "s"),
    llvm.SRemOp: (ptx.RemOp, "s", _NONE, "s"),
    arith.RemUIOp: (ptx.RemOp, "u", _NONE, "u"),
    llvm.URemOp: (ptx.RemOp, "u", _NONE, "u"),
    arith.AndIOp: (ptx.AndOp, "b", _NONE, None),
    llvm.AndOp: (ptx.AndOp, "b", _NONE, None),
    arith.OrIOp: (ptx.OrOp, "b", _NONE, None),
    llvm.OrOp: (ptx.OrOp, "b", _NONE, None),
    arith.XOrIOp: (ptx.XorOp, "b", _NONE, None),
    llvm.XOrOp: (ptx.XorOp, "b", _NONE, None),
    arith.ShLIOp: (ptx.ShlOp, "b", _NONE, None),
    llvm.ShlOp: (ptx.ShlOp, "b", _NONE, None),
    arith.ShRUIOp: (ptx.ShrOp, "u", _NONE, "u"),
    llvm.LShrOp: (ptx.ShrOp, "u", _NONE, "u"),
    arith.ShRSIOp: (ptx.ShrOp, "s", _NONE, "s"),
    llvm.AShrOp: (ptx.ShrOp, "s", _NONE, "s"),
    arith.MaxSIOp: (ptx.MaxOp, "s", _NONE, "s"),
    arith.MaxUIOp: (ptx.MaxOp, "u", _NONE, "u"),
    arith.MinSIOp: (ptx.MinOp, "s", _NONE, "s"),
    arith.MinUIOp: (ptx.MinOp, "u", _NONE, "u"),
}

_FLOAT_BINARY: dict[type[Operation], tuple[type[ptx.Instruction], _Modifiers]] = {
    arith.AddfOp: (ptx.AddOp, _RN),
    arith.SubfOp: (ptx.SubOp, _RN),
    arith.MulfOp: (ptx.MulOp, _RN),
    arith.DivfOp: (ptx.DivOp, _RN),
    arith.MaximumfOp: (ptx.MaxOp, _NAN),
    arith.MinimumfOp: (ptx.MinOp, _NAN),
    arith.MaxnumfOp: (ptx.MaxOp, _NONE),
    arith.MinnumfOp: (ptx.MinOp, _NONE),
    llvm.FAddOp: (ptx.AddOp, _RN),
    llvm.FSubOp: (ptx.SubOp, _RN),
    llvm.FMulOp: (ptx.MulOp, _RN),
    llvm.FDivOp: (ptx.DivOp, _RN),
}


def _binary(
    cls: type[ptx.Instruction], t: PtxType, res: ptx.RegisterType, a: SSAValue, b: SSAValue, m: _Modifiers = _NONE
) -> ptx.Instruction:
    """The binary instruction `cls` with the modifiers it takes."""
    if cls is ptx.MulOp:
        return ptx.MulOp(t, res, a, b, mode=m.mode, rounding=m.rounding)
    if cls is ptx.AddOp or cls is ptx.SubOp or cls is ptx.DivOp:
        return cast(type[ptx.AddOp], cls)(t, res, a, b, rounding=m.rounding)
    if cls is ptx.MinOp or cls is ptx.MaxOp:
        return cast(type[ptx.MinOp], cls)(t, res, a, b, nan=m.nan)
    return cast(type[ptx.RemOp], cls)(t, res, a, b)


def _immediate_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, ptx.ImmOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _widen(fs: FunctionSelector, value: SSAValue, element: Attribute, signed: bool) -> SSAValue:
    """An i1 or i8 operand as a 16-bit value, extended by sign or with zeros. An i1 lives
    in a predicate; an i8 in the low byte of a .b16 register whose high byte is
    undefined (PTX has no 8-bit arithmetic; llc-22 does the same)."""
    bits = bit_width(element)
    if (constant := _immediate_int(value)) is not None:
        constant &= (1 << bits) - 1
        if signed and constant >> (bits - 1):
            constant -= 1 << bits
        return fs.imm(constant, i16)
    if bits == 1:
        return fs.emit(
            ptx.SelpOp(
                PtxType.B16, fs.fresh("b16"), fs.imm(-1 if signed else 1, i16), fs.imm(0, i16), fs.reg(value, "pred")
            )
        ).res
    sign = "s" if signed else "u"
    return fs.emit(ptx.CvtOp(PtxType.of(sign, 16), PtxType.of(sign, 8), fs.fresh("b16"), fs.reg(value, "b16"))).res


def _shift_amount(fs: FunctionSelector, value: SSAValue, element: Attribute) -> SSAValue:
    """A shift amount as PTX wants it: a .u32 register or immediate."""
    bits = bit_width(element)
    if (constant := _immediate_int(value)) is not None:
        return fs.imm(constant & ((1 << bits) - 1), i32)
    if bits == 32:
        return fs.reg(value, "b32")
    return fs.emit(ptx.CvtOp(PtxType.U32, PtxType.of("u", bits), fs.fresh("b32"), fs.reg(value))).res


def _int_binary(fs: FunctionSelector, op: Operation) -> None:
    (result,) = op.results
    element, _ = vector_elements(result.type)
    cls, letter, modifiers, extend = _INT_BINARY[type(op)]
    bits = bit_width(element)
    if bits == 1 and cls.PRED_FORM:
        operands = list(op.operands[:2])
        _elementwise(
            fs,
            result,
            operands,
            lambda res, a: _binary(cls, PtxType.PRED, res, fs.reg(a[0], "pred"), fs.reg(a[1], "pred")),
        )
        return
    if bits == 1 and cls in (ptx.ShlOp, ptx.ShrOp):
        # An i1 shift by 1 is poison; by 0 it is the identity.
        _elementwise(fs, result, [op.operands[0]], lambda res, a: ptx.MovOp(PtxType.PRED, res, fs.reg(a[0], "pred")))
        return
    width = max(bits, 16)
    ptx_type = PtxType.of(letter, width)
    commutative = cls.has_trait(Commutative)

    def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
        a, b = args
        if cls in (ptx.ShlOp, ptx.ShrOp):
            b = _shift_amount(fs, b, element)
            if bits < 16 and extend is not None:
                a = _widen(fs, a, element, extend == "s")
        elif bits < 16 and (extend is not None or bits == 1):
            a, b = _widen(fs, a, element, extend == "s"), _widen(fs, b, element, extend == "s")
        if not isinstance(a.type, ptx.RegisterType):
            # PTX wants a register first: swap a commutative pair, else materialise.
            if commutative and isinstance(b.type, ptx.RegisterType):
                a, b = b, a
            else:
                a = fs.reg(a, register_kind(i16 if width == 16 else element))
        if bits == 1:
            wide = fs.emit(_binary(cls, ptx_type, fs.fresh("b16"), a, b, modifiers)).results[0]
            return to_predicate(fs, res, wide)
        return _binary(cls, ptx_type, res, a, b, modifiers)

    _elementwise(fs, result, list(op.operands[:2]), build)


def _via_f32(fs: FunctionSelector, float_type: PtxType, values: list[SSAValue]) -> list[SSAValue]:
    """f16/bf16 operands converted to f32 (exactly), for what PTX lacks at 16 bits."""
    return [fs.emit(ptx.CvtOp(PtxType.F32, float_type, fs.fresh("b32"), fs.reg(v, "b16"))).res for v in values]


def _ieee_min_max(fs: FunctionSelector, res: ptx.RegisterType, a: SSAValue, b: SSAValue, is_max: bool) -> Operation:
    """f64 `maximumf`/`minimumf` (NaN-propagating, -0 < +0) without `.NaN`, which PTX
    has only for f16/bf16/f32: the expansion llc-22 emits."""
    a, b = fs.reg(a, "b64"), fs.reg(b, "b64")
    nan = fs.emit(ptx.SetpOp(CmpOp.NAN, PtxType.F64, fs.fresh("pred"), a, b)).res
    cls = ptx.MaxOp if is_max else ptx.MinOp
    plain = fs.emit(cls(PtxType.F64, fs.fresh("b64"), a, b)).res
    quiet = fs.emit(ptx.SelpOp(PtxType.F64, fs.fresh("b64"), fs.imm(math.nan, f64), plain, nan)).res
    preferred_zero = fs.imm(0 if is_max else -(1 << 63), i64)
    a_zero = fs.emit(ptx.SetpOp(CmpOp.EQ, PtxType.B64, fs.fresh("pred"), a, preferred_zero)).res
    pick_a = fs.emit(ptx.SelpOp(PtxType.F64, fs.fresh("b64"), a, quiet, a_zero)).res
    b_zero = fs.emit(ptx.SetpOp(CmpOp.EQ, PtxType.B64, fs.fresh("pred"), b, preferred_zero)).res
    pick_b = fs.emit(ptx.SelpOp(PtxType.F64, fs.fresh("b64"), b, pick_a, b_zero)).res
    is_zero = fs.emit(ptx.SetpOp(CmpOp.EQ, PtxType.F64, fs.fresh("pred"), quiet, fs.imm(0.0, f64))).res
    return ptx.SelpOp(PtxType.F64, res, pick_b, quiet, is_zero)


_PACKED = {op.name.removesuffix("_f32x2"): op for op in ptx.PTX.operations if op.name.endswith("_f32x2")}
"""The `.f32x2` form of each f32 instruction that has one, by the scalar op's name (derived
from the dialect: `ptx.add` -> `ptx.add_f32x2`, ...). PTX ISA 8.6, sm_100 and up: every
supported target (ptxas 13.0 assembles them on sm_100a/sm_100f/sm_103a/sm_110a)."""


def packed_pair(fs: FunctionSelector, lo: SSAValue, hi: SSAValue) -> SSAValue:
    """Two f32 lanes as one `.b64` register, `lo` in the low half: `mov.b64 %rd, {lo, hi}`,
    or the `.b64` they were unpacked from."""
    if (lo, hi) in fs.packed:
        return fs.packed[(lo, hi)]
    lo, hi = (fs.reg(part, "b32") for part in (lo, hi))
    return fs.emit(ptx.MovPackOp(PtxType.B64, fs.fresh("b64"), [lo, hi])).res


def unpacked_pair(fs: FunctionSelector, pair: SSAValue) -> list[SSAValue]:
    """The two f32 lanes of a `.b64` (`mov.b64 {lo, hi}, %rd`), recorded in `fs.packed` so
    that an `.f32x2` op or a store reading both reads `pair` itself; the unpack goes
    when nothing reads the halves (dead-instruction removal)."""
    unpack = fs.emit(ptx.MovUnpackOp(PtxType.B64, [fs.fresh("b32"), fs.fresh("b32")], pair))
    halves = [d for d in unpack.destinations() if d is not None]
    fs.packed[(halves[0], halves[1])] = pair
    return halves


def selects_f32x2(op: Operation) -> bool:
    """Whether `op` is selected as `.f32x2` instructions (`_float_binary_f32x2`)."""
    if type(op) not in _FLOAT_BINARY or len(op.results) != 1:
        return False
    cls, modifiers = _FLOAT_BINARY[type(op)]
    element, count = vector_elements(op.results[0].type)
    return (
        cls.name in _PACKED
        and modifiers.rounding is Rounding.RN
        and float_type_name(element) is PtxType.F32
        and count > 1
    )


def _float_binary_f32x2(fs: FunctionSelector, op: Operation, cls: type[ptx.Instruction]) -> None:
    """A vector<Nxf32> add/sub/mul (`.rn`) as N/2 `.f32x2` instructions, as llc-22 selects
    them: each pair of lanes packed into a `.b64`, computed, unpacked (an odd last lane
    stays scalar; llc-22 pads it into a pair). The `.f32x2` op is the `.f32` op on each
    half with the same rounding (PTX ISA 9.0), so the lanes are bit-identical to the scalar
    selection; ptxas turns the packs into register pairs when it allocates the halves
    adjacently."""
    (result,) = op.results
    columns: list[list[SSAValue]] = [
        [fs.reg(o) if isinstance(o, Address) else o for o in fs.get(v)] for v in op.operands[:2]
    ]
    _, count = vector_elements(result.type)
    lanes = [column if len(column) > 1 else column * count for column in columns]
    out: list[Operand] = []
    for i in range(0, count - 1, 2):
        pairs = [(column[i], column[i + 1]) for column in lanes]
        a = packed_pair(fs, *pairs[0])
        b = a if pairs[1] == pairs[0] else packed_pair(fs, *pairs[1])
        packed_cls = cast(type[ptx.AddF32x2Op], _PACKED[cls.name])
        packed = fs.emit(packed_cls(fs.fresh("b64"), a, b, rounding=Rounding.RN)).res
        out += unpacked_pair(fs, packed)
    if count % 2:
        a, b = fs.reg(lanes[0][-1], "b32"), lanes[1][-1]
        out.append(fs.emit(_binary(cls, PtxType.F32, fs.fresh("b32"), a, b, _RN)).results[0])
    fs.define(result, out)


def _float_binary(fs: FunctionSelector, op: Operation) -> None:
    (result,) = op.results
    element, _ = vector_elements(result.type)
    cls, modifiers = _FLOAT_BINARY[type(op)]
    if selects_f32x2(op):
        _float_binary_f32x2(fs, op, cls)
        return
    float_type = float_type_name(element)
    commutative = cls.has_trait(Commutative)

    def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
        a, b = args
        if cls is ptx.DivOp and float_type in (PtxType.F16, PtxType.BF16):
            # PTX has no 16-bit float division: divide in f32 and round once.
            x, y = _via_f32(fs, float_type, [a, b])
            quotient = fs.emit(ptx.DivOp(PtxType.F32, fs.fresh("b32"), x, y, rounding=Rounding.RN)).res
            return ptx.CvtOp(float_type, PtxType.F32, res, quotient, Rounding.RN)
        if modifiers.nan and float_type is PtxType.F64:
            return _ieee_min_max(fs, res, a, b, cls is ptx.MaxOp)
        if not isinstance(a.type, ptx.RegisterType):
            if commutative and isinstance(b.type, ptx.RegisterType):
                a, b = b, a
            else:
                a = fs.reg(a, res.kind.data)
        return _binary(cls, float_type, res, a, b, modifiers)

    _elementwise(fs, result, list(op.operands[:2]), build)


rule(*_INT_BINARY)(_int_binary)
rule(*_FLOAT_BINARY)(_float_binary)


def float_instruction(op: type[Operation]) -> tuple[str, tuple[str, ...]] | None:
    """The PTX opcode and modifiers (those before the type) that a float op of the table
    above, or `arith.negf`, selects; None for other ops. The NVVM level of the interpreter
    computes the op as that instruction (interpreter/floats.py)."""
    if op is arith.NegfOp:
        return "neg", ()
    if op not in _FLOAT_BINARY:
        return None
    cls, m = _FLOAT_BINARY[op]
    modifiers = (*((m.rounding.value,) if m.rounding is not None else ()), *(("NaN",) if m.nan else ()))
    return cls.name.removeprefix("ptx."), modifiers


@rule(arith.NegfOp)
def _negf(fs: FunctionSelector, op: arith.NegfOp) -> None:
    float_type = float_type_name(vector_elements(op.result.type)[0])
    _elementwise(fs, op.result, [op.operand], lambda res, a: ptx.NegOp(float_type, res, fs.reg(a[0], res.kind.data)))


_CMPI = {
    "eq": (CmpOp.EQ, "b"),
    "ne": (CmpOp.NE, "b"),
    "slt": (CmpOp.LT, "s"),
    "sle": (CmpOp.LE, "s"),
    "sgt": (CmpOp.GT, "s"),
    "sge": (CmpOp.GE, "s"),
    "ult": (CmpOp.LT, "u"),
    "ule": (CmpOp.LE, "u"),
    "ugt": (CmpOp.GT, "u"),
    "uge": (CmpOp.GE, "u"),
}
_CMPI_NAMES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF = {
    1: CmpOp.EQ, 2: CmpOp.GT, 3: CmpOp.GE, 4: CmpOp.LT, 5: CmpOp.LE, 6: CmpOp.NE, 7: CmpOp.NUM,
    8: CmpOp.EQU, 9: CmpOp.GTU, 10: CmpOp.GEU, 11: CmpOp.LTU, 12: CmpOp.LEU, 13: CmpOp.NEU, 14: CmpOp.NAN,
}  # fmt: skip


def cmpf_comparison(predicate: int) -> str | None:
    """The `setp` comparison `arith.cmpf` with this predicate selects (None: false/true)."""
    cmp = _CMPF.get(predicate)
    return cmp.value if cmp is not None else None


def _compare(
    fs: FunctionSelector, result: SSAValue, lhs: SSAValue, rhs: SSAValue, predicate: str | CmpOp, float_type: bool
) -> None:
    element, _ = vector_elements(lhs.type)
    bits = bit_width(element)
    narrow = not float_type and bits < 16
    sign = "b"
    if isinstance(predicate, CmpOp):
        cmp, setp_type = predicate, float_type_name(element)
    else:
        cmp, sign = _CMPI[predicate]
        setp_type = PtxType.of(sign, max(bits, 16))

    def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
        a, b = args
        if narrow:
            # setp has no 8-bit (nor predicate) types: compare the extended values.
            a, b = _widen(fs, a, element, sign == "s"), _widen(fs, b, element, sign == "s")
        if not isinstance(a.type, ptx.RegisterType):
            a = fs.reg(a, "b16" if narrow else register_kind(element))
        return ptx.SetpOp(cmp, setp_type, res, a, b)

    _elementwise(fs, result, [lhs, rhs], build)


@rule(arith.CmpiOp)
def _cmpi(fs: FunctionSelector, op: arith.CmpiOp) -> None:
    predicate = _CMPI_NAMES[op.predicate.value.data]
    if vector_elements(op.lhs.type)[0] == i1 and predicate in ("eq", "ne"):
        # i1 equality: xor / not.
        def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
            x = fs.emit(ptx.XorOp(PtxType.PRED, fs.fresh("pred"), fs.reg(args[0], "pred"), fs.reg(args[1], "pred"))).res
            return ptx.NotOp(PtxType.PRED, res, x) if predicate == "eq" else ptx.MovOp(PtxType.PRED, res, x)

        _elementwise(fs, op.result, [op.lhs, op.rhs], build)
        return
    _compare(fs, op.result, op.lhs, op.rhs, predicate, float_type=False)


@rule(llvm.ICmpOp)
def _icmp(fs: FunctionSelector, op: llvm.ICmpOp) -> None:
    _compare(fs, op.res, op.lhs, op.rhs, _CMPI_NAMES[op.predicate.value.data], float_type=False)


@rule(arith.CmpfOp)
def _cmpf(fs: FunctionSelector, op: arith.CmpfOp) -> None:
    code = op.predicate.value.data
    if code not in _CMPF:
        raise fs.error(op, "arith.cmpf with a constant predicate has no PTX lowering")
    _compare(fs, op.result, op.lhs, op.rhs, _CMPF[code], float_type=True)


def _select(fs: FunctionSelector, op: Operation, cond: SSAValue, true: SSAValue, false: SSAValue) -> None:
    """`selp`, elementwise; the condition is one predicate or one per element."""
    (result,) = op.results
    element, _ = vector_elements(result.type)
    if element == i1:

        def build_pred(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
            c, t, f = (fs.reg(a, "pred") for a in args)
            on = fs.emit(ptx.AndOp(PtxType.PRED, fs.fresh("pred"), c, t)).res
            not_c = fs.emit(ptx.NotOp(PtxType.PRED, fs.fresh("pred"), c)).res
            off = fs.emit(ptx.AndOp(PtxType.PRED, fs.fresh("pred"), not_c, f)).res
            return ptx.OrOp(PtxType.PRED, res, on, off)

        _elementwise(fs, result, [cond, true, false], build_pred)
        return
    bits = max(bit_width(element), 16)
    _elementwise(
        fs,
        result,
        [cond, true, false],
        lambda res, args: ptx.SelpOp(PtxType.of("b", bits), res, args[1], args[2], fs.reg(args[0], "pred")),
    )


@rule(arith.SelectOp)
def _arith_select(fs: FunctionSelector, op: arith.SelectOp) -> None:
    _select(fs, op, op.cond, op.lhs, op.rhs)


@rule(llvm.SelectOp)
def _llvm_select(fs: FunctionSelector, op: llvm.SelectOp) -> None:
    _select(fs, op, op.cond, op.lhs, op.rhs)


def _extend(fs: FunctionSelector, op: Operation, signed: bool) -> None:
    (source,) = op.operands
    (result,) = op.results
    src_element, _ = vector_elements(source.type)
    dst_element, _ = vector_elements(result.type)
    dst_bits = max(bit_width(dst_element), 16)
    if src_element == i1:
        one = -1 if signed else 1
        _elementwise(
            fs,
            result,
            [source],
            lambda res, a: ptx.SelpOp(
                PtxType.of("b", dst_bits), res, fs.imm(one, dst_element), fs.imm(0, dst_element), fs.reg(a[0], "pred")
            ),
        )
        return
    src_bits = bit_width(src_element)
    sign = "s" if signed else "u"
    _elementwise(
        fs,
        result,
        [source],
        lambda res, a: ptx.CvtOp(PtxType.of(sign, dst_bits), PtxType.of(sign, src_bits), res, fs.reg(a[0])),
    )


@rule(arith.ExtUIOp, llvm.ZExtOp)
def _zext(fs: FunctionSelector, op: Operation) -> None:
    _extend(fs, op, signed=False)


@rule(arith.ExtSIOp, llvm.SExtOp)
def _sext(fs: FunctionSelector, op: Operation) -> None:
    _extend(fs, op, signed=True)


@rule(arith.TruncIOp, llvm.TruncOp)
def _trunc(fs: FunctionSelector, op: Operation) -> None:
    (source,) = op.operands
    (result,) = op.results
    src_element = vector_elements(source.type)[0]
    dst_element, _ = vector_elements(result.type)
    src_bits = bit_width(src_element)
    if dst_element == i1:

        def to_pred(res: ptx.RegisterType, a: list[SSAValue]) -> Operation:
            width = max(src_bits, 16)
            low = fs.emit(
                ptx.AndOp(
                    PtxType.of("b", width), fs.fresh(register_kind(src_element)), fs.reg(a[0]), fs.imm(1, src_element)
                )
            ).res
            return ptx.SetpOp(CmpOp.NE, PtxType.of("b", width), res, low, fs.imm(0, src_element))

        _elementwise(fs, result, [source], to_pred)
        return
    dst_bits = max(bit_width(dst_element), 16)
    if dst_bits == src_bits:
        # i16 -> i8: the low byte is the value (the high byte of an i8 is undefined).
        fs.define(result, fs.get(source))
        return
    _elementwise(
        fs,
        result,
        [source],
        lambda res, a: ptx.CvtOp(PtxType.of("u", dst_bits), PtxType.of("u", src_bits), res, fs.reg(a[0])),
    )


@rule(arith.IndexCastOp)
def _index_cast(fs: FunctionSelector, op: Operation) -> None:
    raise fs.error(op, f"{op.name}: index values have no PTX lowering; use i32 or i64")


def _int_operand_for_convert(fs: FunctionSelector, value: SSAValue, element: Attribute, signed: bool) -> SSAValue:
    """An integer cvt source: i1/i8 widened to 16 bits first (cvt has no predicate
    source, and an i8's high byte is undefined)."""
    if bit_width(element) < 16:
        return fs.reg(_widen(fs, value, element, signed), "b16")
    return fs.reg(value)


def _convert(fs: FunctionSelector, op: Operation, dst: str, src: str, rounding: Rounding | None) -> None:
    """`cvt[.rounding].<dst>.<src>`, elementwise; `dst`/`src` are the PTX type letters
    (`f`, `s`, `u`)."""
    (source,) = op.operands
    (result,) = op.results
    src_element, dst_element = vector_elements(source.type)[0], vector_elements(result.type)[0]
    src_type = float_type_name(src_element) if src == "f" else PtxType.of(src, max(bit_width(src_element), 16))
    if dst != "f" and dst_element == i1:
        # fptosi/fptoui to i1: convert to 16 bits, keep bit 0 (other values are poison).

        def to_bit(res: ptx.RegisterType, a: list[SSAValue]) -> Operation:
            wide = fs.emit(ptx.CvtOp(PtxType.of(dst, 16), src_type, fs.fresh("b16"), fs.reg(a[0]), rounding)).res
            return to_predicate(fs, res, wide)

        _elementwise(fs, result, [source], to_bit)
        return
    dst_type = float_type_name(dst_element) if dst == "f" else PtxType.of(dst, max(bit_width(dst_element), 16))

    def build(res: ptx.RegisterType, a: list[SSAValue]) -> Operation:
        value = fs.reg(a[0]) if src == "f" else _int_operand_for_convert(fs, a[0], src_element, src == "s")
        return ptx.CvtOp(dst_type, src_type, res, value, rounding)

    _elementwise(fs, result, [source], build)


@rule(arith.SIToFPOp, llvm.SIToFPOp)
def _sitofp(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "f", "s", Rounding.RN)


@rule(arith.UIToFPOp)
def _uitofp(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "f", "u", Rounding.RN)


@rule(arith.FPToSIOp)
def _fptosi(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "s", "f", Rounding.RZI)


@rule(arith.FPToUIOp)
def _fptoui(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "u", "f", Rounding.RZI)


@rule(arith.ExtFOp, arith.TruncFOp, llvm.FPExtOp)
def _float_resize(fs: FunctionSelector, op: Operation) -> None:
    narrowing = bit_width(vector_elements(op.results[0].type)[0]) < bit_width(vector_elements(op.operands[0].type)[0])
    _convert(fs, op, "f", "f", Rounding.RN if narrowing else None)


@rule(arith.BitcastOp, llvm.BitcastOp)
def _bitcast(fs: FunctionSelector, op: Operation) -> None:
    (source,) = op.operands
    (result,) = op.results
    if (
        byte_size(source.type) != byte_size(result.type)
        or vector_elements(source.type)[1] != vector_elements(result.type)[1]
    ):
        raise fs.error(op, f"{op.name} from {source.type} to {result.type} changes the element layout; not supported")
    # Same registers: PTX registers are untyped bits. An immediate is typed, though
    # (`add.f32 %r, %r, 1065353216` is an error): its bits are moved into a register.
    src_element, dst_element = vector_elements(source.type)[0], vector_elements(result.type)[0]
    operands = [_bitcast_immediate(fs, v, src_element, dst_element) for v in fs.get(source)]
    fs.define(result, operands)


def _bitcast_immediate(fs: FunctionSelector, value: Operand, src: Attribute, dst: Attribute) -> Operand:
    if isinstance(value, Address) or not isinstance(owner := value.owner, ptx.ImmOp):
        return value
    bits = bit_width(dst)
    attr = owner.value
    if isinstance(attr, IntegerAttr):
        raw = attr.value.data & ((1 << bits) - 1)
    else:
        raw = int.from_bytes(struct.pack(">d" if bits == 64 else ">f", attr.value.data), "big")
    int_type = IntegerType(bits)
    if isinstance(dst, AnyFloat):
        return fs.reg(fs.imm(raw, int_type), register_kind(int_type))
    return fs.imm(raw, int_type)


# --------------------------------------------------------------------------------------
# Pointers and memory
# --------------------------------------------------------------------------------------

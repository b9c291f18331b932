"""Instruction selection: nvvm + llvm + arith + scf/cf → the `ptx` dialect.

Each kernel (`llvm.func` or `func.func` with `nvvm.kernel`) becomes a `ptx.entry`
whose body is a flat instruction list. The selector walks the function in order
with a value map from MLIR values to PTX operands:

* scalars map to one register, immediate, symbol or special register; vectors to
  one per element (a `tcgen05.ld` result is just its registers);
* pointers map to an `Address` (base + constant byte offset), so that
  `getelementptr`s with constant indices fold into `[base+offset]` operands.

Shared-memory, TMEM and shared::cluster pointers are 32-bit (`.b32`) as in
hand-written PTX, generic and global ones 64-bit. Structured control flow becomes
labels and branches: loops are rotated (one conditional branch per iteration),
branches on warp-uniform conditions are `bra.uni`, and small `scf.if`s without
results are predicated instead of branched around. The blocking
`nvvm.mbarrier.try_wait.parity` becomes the two-instruction loop
`try_wait.parity; @!p bra`.

Mnemonics follow llc-22's spelling (`mbarrier.init.shared.b64`, ...), so that the
tcgen05/mbarrier/barrier/elect instructions of a program can be compared with
llc-22's one for one (`tests/test_ptx_backend.py`).

One selection rule per op kind, in `_RULES`, keyed by op class (see the `rule`
decorator); an op without a rule is reported at its location, never skipped.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from xdsl.dialects import arith, cf, func, llvm, scf, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
    f64,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from xdsl_tmem.backend.targets import Arch
from xdsl_tmem.backend.uniformity import divergent_values
from xdsl_tmem.diagnostics import LocatedError
from xdsl_tmem.dialects import llvm_ext, ptx
from xdsl_tmem.dialects.utils import constant_int

# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------

SHORT_POINTER_SPACES = (3, 6, 7)
"""shared::cta, tensor memory and shared::cluster addresses are 32-bit."""


def _address_space(t: Attribute) -> int | None:
    if isinstance(t, llvm.LLVMPointerType):
        space = t.addr_space
        return space.data if isinstance(space, IntAttr) else 0
    return None


class UnsupportedTypeError(ValueError):
    """A type without a PTX register representation (reported at the op using it)."""


SUPPORTED_TYPES = "i1, i8, i16, i32, i64, f16, bf16, f32, f64, pointers and vectors of them"


def _bits(t: Attribute) -> int:
    match t:
        case IntegerType() if t.width.data in (1, 8, 16, 32, 64):
            return t.width.data
        case Float16Type() | BFloat16Type():
            return 16
        case Float32Type():
            return 32
        case Float64Type():
            return 64
        case llvm.LLVMPointerType():
            return 32 if _address_space(t) in SHORT_POINTER_SPACES else 64
        case _:
            raise UnsupportedTypeError(f"type {t} has no PTX lowering (supported: {SUPPORTED_TYPES})")


def _float_type(t: Attribute) -> str:
    """The PTX float type of `t`: `f16`, `bf16`, `f32` or `f64`."""
    return "bf16" if isinstance(t, BFloat16Type) else f"f{_bits(t)}"


def register_kind(t: Attribute) -> str:
    if t == i1:
        return "pred"
    bits = _bits(t)
    if bits <= 16:
        return "b16"
    return "b32" if bits == 32 else "b64"


def _elements(t: Attribute) -> tuple[Attribute, int]:
    """(element type, count) of a vector; (t, 1) for scalars."""
    if isinstance(t, VectorType):
        shape = t.get_shape()
        count = 1
        for d in shape:
            count *= d
        return cast(Attribute, t.element_type), count
    return t, 1


def byte_size(t: Attribute) -> int:
    match t:
        case VectorType():
            element, count = _elements(t)
            return byte_size(element) * count
        case llvm.LLVMArrayType():
            return t.size.data * byte_size(t.type)
        case llvm.LLVMStructType():
            size = 0
            for field_type in t.types:
                align = natural_alignment(field_type)
                size = (size + align - 1) // align * align + byte_size(field_type)
            return size
        case llvm.LLVMPointerType():
            return 8  # the nvptx64 data layout
        case _:
            return max(1, _bits(t) // 8)


def natural_alignment(t: Attribute) -> int:
    match t:
        case llvm.LLVMArrayType():
            return natural_alignment(t.type)
        case llvm.LLVMStructType():
            return max((natural_alignment(f) for f in t.types), default=1)
        case VectorType():
            return byte_size(t)
        case _:
            return byte_size(t)


# --------------------------------------------------------------------------------------
# Operands
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Address:
    """A pointer: `base` (register or symbol) plus a constant byte offset."""

    base: SSAValue
    offset: int = 0


Operand = SSAValue | Address


class IselError(LocatedError):
    """Instruction selection cannot handle an op or a value."""


_OpT = TypeVar("_OpT", bound=Operation)
Rule = Callable[["FunctionSelector", Operation], None]
_RULES: dict[type[Operation], Rule] = {}


def rule(
    *op_types: type[_OpT],
) -> Callable[[Callable[[FunctionSelector, _OpT], None]], Callable[[FunctionSelector, _OpT], None]]:
    """Register the selection rule for these op classes."""

    def register(fn: Callable[[FunctionSelector, _OpT], None]) -> Callable[[FunctionSelector, _OpT], None]:
        for op_type in op_types:
            _RULES[op_type] = cast(Rule, fn)
        return fn

    return register


# --------------------------------------------------------------------------------------
# Selecting one function
# --------------------------------------------------------------------------------------


@dataclass
class FunctionSelector:
    fn: Operation
    arch: Arch
    body: Block = field(default_factory=Block)
    values: dict[SSAValue, list[Operand]] = field(default_factory=dict[SSAValue, list[Operand]])
    counters: dict[str, int] = field(default_factory=dict[str, int])
    labels: int = 0
    _imms: dict[tuple[int | float, Attribute], SSAValue] = field(
        default_factory=dict[tuple[int | float, Attribute], SSAValue]
    )
    _symbols: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    _symbol_registers: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    prologue: Block = field(default_factory=Block)
    """Instructions placed after the parameter loads, before the body (hoisted constants)."""
    divergent: set[SSAValue] = field(default_factory=set[SSAValue])
    block_labels: dict[Block, tuple[str, list[SSAValue]]] = field(
        default_factory=dict[Block, tuple[str, list[SSAValue]]]
    )
    """For multi-block functions: each block's label and argument registers."""

    def __post_init__(self) -> None:
        self.divergent = divergent_values(self.fn)

    # ---- emission helpers ----------------------------------------------------------

    def emit(self, op: _OpT) -> _OpT:
        self.body.add_op(op)
        return op

    def fresh(self, kind: str) -> ptx.RegisterType:
        index = self.counters.get(kind, 0) + 1
        self.counters[kind] = index
        return ptx.RegisterType(kind, index)

    def label(self) -> str:
        self.labels += 1
        return f"$L{self.labels}"

    def imm(self, value: float, type: Attribute = i32) -> SSAValue:
        key = (value, type)
        if key not in self._imms:
            attr = (
                FloatAttr(float(value), type)
                if isinstance(type, AnyFloat)
                else IntegerAttr(int(value), cast(IntegerType, type), truncate_bits=True)
            )
            self._imms[key] = self.emit(ptx.ImmOp(attr)).result
        return self._imms[key]

    def symbol(self, name: str) -> SSAValue:
        if name not in self._symbols:
            self._symbols[name] = self.emit(ptx.SymbolOp(name)).result
        return self._symbols[name]

    def special(self, name: str) -> SSAValue:
        return self.emit(ptx.SpecialOp(name)).result

    def error(self, op: Operation, message: str) -> IselError:
        return IselError(op, f"ptx backend: {message}")

    # ---- values ----------------------------------------------------------------------

    def define(self, value: SSAValue, operands: Sequence[Operand]) -> None:
        self.values[value] = list(operands)

    def get(self, value: SSAValue) -> list[Operand]:
        if value not in self.values:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else self.fn
            raise self.error(op, f"no PTX value for {value.type} (an unsupported producer?)")
        return self.values[value]

    def one(self, value: SSAValue) -> Operand:
        operands = self.get(value)
        assert len(operands) == 1, f"expected a scalar, got {len(operands)} values"
        return operands[0]

    def scalar(self, value: SSAValue) -> SSAValue:
        """A register or immediate for a scalar (addresses are materialised)."""
        operand = self.one(value)
        return self.materialize_address(operand) if isinstance(operand, Address) else operand

    def reg(self, value: SSAValue | Operand, kind: str | None = None) -> SSAValue:
        """A register holding `value` (an MLIR value or an operand): immediates,
        symbols and addresses are moved into one."""
        operand = self.one(value) if isinstance(value, SSAValue) and value in self.values else value
        if isinstance(operand, Address):
            return self.materialize_address(operand)
        if isinstance(operand.type, ptx.RegisterType):
            return operand
        kind = kind or self.kind_of_operand(operand)
        res = self.fresh(kind)
        return self.emit(ptx.MovOp(_MOV_TYPE[kind], res, operand)).res

    def kind_of_operand(self, operand: SSAValue) -> str:
        t = operand.type
        if isinstance(t, ptx.RegisterType):
            return t.kind.data
        if isinstance(t, ptx.SymbolType):
            return "b32"
        return register_kind(t)

    def materialize_address(self, address: Address) -> SSAValue:
        base = address.base
        if isinstance(base.type, ptx.SymbolType):
            base = self.symbol_register(base)
        if address.offset == 0:
            return base
        kind = cast(ptx.RegisterType, base.type).kind.data
        bits = 32 if kind == "b32" else 64
        offset = self.imm(address.offset, i32 if bits == 32 else i64)
        return self.emit(ptx.AddOp(f"s{bits}", self.fresh(kind), base, offset)).res

    def symbol_register(self, symbol: SSAValue) -> SSAValue:
        """`mov.u32 %r, sym`, once per kernel, at its start (the address is constant)."""
        if symbol not in self._symbol_registers:
            mov = ptx.MovOp("u32", self.fresh("b32"), symbol)
            self.prologue.add_op(mov)
            self._symbol_registers[symbol] = mov.res
        return self._symbol_registers[symbol]

    def address(self, value: SSAValue) -> Address:
        operand = self.one(value)
        if isinstance(operand, Address):
            return operand
        return Address(self.reg(operand))

    def uniform(self, value: SSAValue) -> bool:
        return value not in self.divergent

    # ---- moves -------------------------------------------------------------------------

    def move(self, dests: Sequence[SSAValue], sources: Sequence[Operand]) -> None:
        """Parallel copy `dests := sources` (dests are registers)."""
        pending: list[tuple[SSAValue, SSAValue]] = []
        for dest, source in zip(dests, sources, strict=True):
            value = self.materialize_address(source) if isinstance(source, Address) else source
            if value.type != dest.type:
                pending.append((dest, value))
        while pending:
            sources_left = {s.type for _, s in pending}
            ready = next((m for m in pending if m[0].type not in sources_left), None)
            if ready is None:
                # A cycle: save one destination's old value first.
                dest, _ = pending[0]
                saved = self.reg_copy(dest)
                pending = [(d, saved if s.type == dest.type else s) for d, s in pending]
                continue
            pending.remove(ready)
            dest, source = ready
            kind = cast(ptx.RegisterType, dest.type).kind.data
            self.emit(ptx.MovOp(_MOV_TYPE[kind], cast(ptx.RegisterType, dest.type), source))

    def reg_copy(self, value: SSAValue) -> SSAValue:
        kind = cast(ptx.RegisterType, value.type).kind.data
        return self.emit(ptx.MovOp(_MOV_TYPE[kind], self.fresh(kind), value)).res

    def handle(self, kind: str) -> SSAValue:
        """A fresh register that instructions will write later."""
        return self.emit(ptx.RegisterOp(self.fresh(kind))).result

    def registers_like(self, value: SSAValue) -> list[SSAValue]:
        """Fresh registers for every element of `value` (loop-carried values, results)."""
        element, count = _elements(value.type)
        kind = register_kind(element)
        return [self.handle(kind) for _ in range(count)]

    # ---- driver --------------------------------------------------------------------------

    def select_block(self, block: Block) -> None:
        for op in block.ops:
            self.select(op)

    def select(self, op: Operation) -> None:
        selector = _RULES.get(type(op))
        if selector is None:
            if op.dialect_name() == "tmem":
                raise self.error(op, f"{op.name} must be lowered to nvvm first: add -p lower-tmem")
            raise self.error(op, f"{op.name} has no PTX lowering")
        try:
            selector(self, op)
        except UnsupportedTypeError as e:
            raise self.error(op, f"{op.name}: {e}") from None


_MOV_TYPE = {"pred": "pred", "b16": "b16", "b32": "b32", "b64": "b64"}


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
    element, count = _elements(type)
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
    _bits(element)  # refuses types without a register (i128, f8E4M3FN, ...)
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
    element, count = _elements(result.type)
    kind = register_kind(element)
    columns = [[fs.reg(o) if isinstance(o, Address) else o for o in fs.get(v)] for v in operands]
    out: list[Operand] = []
    for i in range(count):
        args = [column[i] if len(column) > 1 else column[0] for column in columns]
        args = [fs.materialize_address(a) if isinstance(a, Address) else a for a in args]
        out.append(fs.emit(build(fs.fresh(kind), args)).results[0])
    fs.define(result, out)


_INT_BINARY: dict[type[Operation], tuple[type[ptx.Instruction], str, str | None]] = {
    # (instruction, type prefix, how operands narrower than their register are
    # extended first: "s" by sign, "u" with zeros, None when the low bits suffice)
    arith.AddiOp: (ptx.AddOp, "s", None),
    llvm.AddOp: (ptx.AddOp, "s", None),
    arith.SubiOp: (ptx.SubOp, "s", None),
    llvm.SubOp: (ptx.SubOp, "s", None),
    arith.MuliOp: (ptx.MulOp, "lo.s", None),
    llvm.MulOp: (ptx.MulOp, "lo.s", None),
    arith.DivSIOp: (ptx.DivOp, "s", "s"),
    llvm.SDivOp: (ptx.DivOp, "s", "s"),
    arith.DivUIOp: (ptx.DivOp, "u", "u"),
    llvm.UDivOp: (ptx.DivOp, "u", "u"),
    arith.RemSIOp: (ptx.RemOp, "s", "s"),
    llvm.SRemOp: (ptx.RemOp, "s", "s"),
    arith.RemUIOp: (ptx.RemOp, "u", "u"),
    llvm.URemOp: (ptx.RemOp, "u", "u"),
    arith.AndIOp: (ptx.AndOp, "b", None),
    llvm.AndOp: (ptx.AndOp, "b", None),
    arith.OrIOp: (ptx.OrOp, "b", None),
    llvm.OrOp: (ptx.OrOp, "b", None),
    arith.XOrIOp: (ptx.XorOp, "b", None),
    llvm.XOrOp: (ptx.XorOp, "b", None),
    arith.ShLIOp: (ptx.ShlOp, "b", None),
    llvm.ShlOp: (ptx.ShlOp, "b", None),
    arith.ShRUIOp: (ptx.ShrOp, "u", "u"),
    llvm.LShrOp: (ptx.ShrOp, "u", "u"),
    arith.ShRSIOp: (ptx.ShrOp, "s", "s"),
    llvm.AShrOp: (ptx.ShrOp, "s", "s"),
    arith.MaxSIOp: (ptx.MaxOp, "s", "s"),
    arith.MaxUIOp: (ptx.MaxOp, "u", "u"),
    arith.MinSIOp: (ptx.MinOp, "s", "s"),
    arith.MinUIOp: (ptx.MinOp, "u", "u"),
}

_FLOAT_BINARY: dict[type[Operation], tuple[type[ptx.Instruction], str]] = {
    arith.AddfOp: (ptx.AddOp, "rn."),
    arith.SubfOp: (ptx.SubOp, "rn."),
    arith.MulfOp: (ptx.MulOp, "rn."),
    arith.DivfOp: (ptx.DivOp, "rn."),
    arith.MaximumfOp: (ptx.MaxOp, "NaN."),
    arith.MinimumfOp: (ptx.MinOp, "NaN."),
    arith.MaxnumfOp: (ptx.MaxOp, ""),
    arith.MinnumfOp: (ptx.MinOp, ""),
    llvm.FAddOp: (ptx.AddOp, "rn."),
    llvm.FSubOp: (ptx.SubOp, "rn."),
    llvm.FMulOp: (ptx.MulOp, "rn."),
    llvm.FDivOp: (ptx.DivOp, "rn."),
}

_PRED_LOGIC = {ptx.AndOp, ptx.OrOp, ptx.XorOp}
_COMMUTATIVE = {ptx.AddOp, ptx.MulOp, ptx.AndOp, ptx.OrOp, ptx.XorOp, ptx.MinOp, ptx.MaxOp}


def _immediate_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, ptx.ImmOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _widen(fs: FunctionSelector, value: SSAValue, element: Attribute, signed: bool) -> SSAValue:
    """An i1 or i8 operand as a 16-bit value, extended by sign or with zeros. An i1 lives
    in a predicate; an i8 in the low byte of a .b16 register whose high byte is
    undefined (PTX has no 8-bit arithmetic; llc-22 does the same)."""
    bits = _bits(element)
    if (constant := _immediate_int(value)) is not None:
        constant &= (1 << bits) - 1
        if signed and constant >> (bits - 1):
            constant -= 1 << bits
        return fs.imm(constant, i16)
    if bits == 1:
        return fs.emit(
            ptx.SelpOp("b16", fs.fresh("b16"), fs.imm(-1 if signed else 1, i16), fs.imm(0, i16), fs.reg(value, "pred"))
        ).res
    sign = "s" if signed else "u"
    return fs.emit(ptx.CvtOp(f"{sign}16", f"{sign}8", fs.fresh("b16"), fs.reg(value, "b16"))).res


def _to_predicate(fs: FunctionSelector, res: ptx.RegisterType, value: SSAValue) -> Operation:
    """`res := (value & 1) != 0` for a 16-bit value (the i1 truncation)."""
    low = fs.emit(ptx.AndOp("b16", fs.fresh("b16"), value, fs.imm(1, i16))).res
    return ptx.SetpOp("ne", "b16", res, low, fs.imm(0, i16))


def _shift_amount(fs: FunctionSelector, value: SSAValue, element: Attribute) -> SSAValue:
    """A shift amount as PTX wants it: a .u32 register or immediate."""
    bits = _bits(element)
    if (constant := _immediate_int(value)) is not None:
        return fs.imm(constant & ((1 << bits) - 1), i32)
    if bits == 32:
        return fs.reg(value, "b32")
    return fs.emit(ptx.CvtOp("u32", f"u{bits}", fs.fresh("b32"), fs.reg(value))).res


def _int_binary(fs: FunctionSelector, op: Operation) -> None:
    (result,) = op.results
    element, _ = _elements(result.type)
    cls, prefix, extend = _INT_BINARY[type(op)]
    bits = _bits(element)
    if bits == 1 and cls in _PRED_LOGIC:
        operands = list(op.operands[:2])
        _elementwise(fs, result, operands, lambda res, a: cls("pred", res, fs.reg(a[0], "pred"), fs.reg(a[1], "pred")))
        return
    if bits == 1 and cls in (ptx.ShlOp, ptx.ShrOp):
        # An i1 shift by 1 is poison; by 0 it is the identity.
        _elementwise(fs, result, [op.operands[0]], lambda res, a: ptx.MovOp("pred", res, fs.reg(a[0], "pred")))
        return
    width = max(bits, 16)
    type_suffix = f"{prefix}{width}"
    commutative = cls in _COMMUTATIVE

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
            wide = fs.emit(cast(Callable[..., ptx.Instruction], cls)(type_suffix, fs.fresh("b16"), a, b)).results[0]
            return _to_predicate(fs, res, wide)
        return cast(Callable[..., Operation], cls)(type_suffix, res, a, b)

    _elementwise(fs, result, list(op.operands[:2]), build)


def _via_f32(fs: FunctionSelector, float_type: str, values: list[SSAValue]) -> list[SSAValue]:
    """f16/bf16 operands converted to f32 (exactly), for what PTX lacks at 16 bits."""
    return [fs.emit(ptx.CvtOp("f32", float_type, fs.fresh("b32"), fs.reg(v, "b16"))).res for v in values]


def _ieee_min_max(fs: FunctionSelector, res: ptx.RegisterType, a: SSAValue, b: SSAValue, is_max: bool) -> Operation:
    """f64 `maximumf`/`minimumf` (NaN-propagating, -0 < +0) without `.NaN`, which PTX
    has only for f16/bf16/f32: the expansion llc-22 emits."""
    a, b = fs.reg(a, "b64"), fs.reg(b, "b64")
    nan = fs.emit(ptx.SetpOp("nan", "f64", fs.fresh("pred"), a, b)).res
    cls = ptx.MaxOp if is_max else ptx.MinOp
    plain = fs.emit(cls("f64", fs.fresh("b64"), a, b)).res
    quiet = fs.emit(ptx.SelpOp("f64", fs.fresh("b64"), fs.imm(math.nan, f64), plain, nan)).res
    preferred_zero = fs.imm(0 if is_max else -(1 << 63), i64)
    a_zero = fs.emit(ptx.SetpOp("eq", "b64", fs.fresh("pred"), a, preferred_zero)).res
    pick_a = fs.emit(ptx.SelpOp("f64", fs.fresh("b64"), a, quiet, a_zero)).res
    b_zero = fs.emit(ptx.SetpOp("eq", "b64", fs.fresh("pred"), b, preferred_zero)).res
    pick_b = fs.emit(ptx.SelpOp("f64", fs.fresh("b64"), b, pick_a, b_zero)).res
    is_zero = fs.emit(ptx.SetpOp("eq", "f64", fs.fresh("pred"), quiet, fs.imm(0.0, f64))).res
    return ptx.SelpOp("f64", res, pick_b, quiet, is_zero)


def _float_binary(fs: FunctionSelector, op: Operation) -> None:
    (result,) = op.results
    element, _ = _elements(result.type)
    cls, prefix = _FLOAT_BINARY[type(op)]
    float_type = _float_type(element)
    commutative = cls in _COMMUTATIVE

    def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
        a, b = args
        if cls is ptx.DivOp and float_type in ("f16", "bf16"):
            # PTX has no 16-bit float division: divide in f32 and round once.
            x, y = _via_f32(fs, float_type, [a, b])
            quotient = fs.emit(ptx.DivOp("rn.f32", fs.fresh("b32"), x, y)).res
            return ptx.CvtOp(float_type, "f32", res, quotient, "rn")
        if prefix == "NaN." and float_type == "f64":
            return _ieee_min_max(fs, res, a, b, cls is ptx.MaxOp)
        if not isinstance(a.type, ptx.RegisterType):
            if commutative and isinstance(b.type, ptx.RegisterType):
                a, b = b, a
            else:
                a = fs.reg(a, res.kind.data)
        return cast(Callable[..., Operation], cls)(f"{prefix}{float_type}", res, a, b)

    _elementwise(fs, result, list(op.operands[:2]), build)


for _op in _INT_BINARY:
    _RULES[_op] = cast(Rule, _int_binary)
for _op in _FLOAT_BINARY:
    _RULES[_op] = cast(Rule, _float_binary)


@rule(arith.NegfOp)
def _negf(fs: FunctionSelector, op: arith.NegfOp) -> None:
    float_type = _float_type(_elements(op.result.type)[0])
    _elementwise(fs, op.result, [op.operand], lambda res, a: ptx.NegOp(float_type, res, fs.reg(a[0], res.kind.data)))


_CMPI = {
    "eq": ("eq", "b"),
    "ne": ("ne", "b"),
    "slt": ("lt", "s"),
    "sle": ("le", "s"),
    "sgt": ("gt", "s"),
    "sge": ("ge", "s"),
    "ult": ("lt", "u"),
    "ule": ("le", "u"),
    "ugt": ("gt", "u"),
    "uge": ("ge", "u"),
}
_CMPI_NAMES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF = {
    1: "eq", 2: "gt", 3: "ge", 4: "lt", 5: "le", 6: "ne", 7: "num",
    8: "equ", 9: "gtu", 10: "geu", 11: "ltu", 12: "leu", 13: "neu", 14: "nan",
}  # fmt: skip


def _compare(
    fs: FunctionSelector, result: SSAValue, lhs: SSAValue, rhs: SSAValue, predicate: str, float_type: bool
) -> None:
    element, _ = _elements(lhs.type)
    bits = _bits(element)
    narrow = not float_type and bits < 16
    sign = "b"
    if float_type:
        cmp, type_suffix = predicate, _float_type(element)
    else:
        cmp, sign = _CMPI[predicate]
        type_suffix = f"{sign}{max(bits, 16)}"

    def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
        a, b = args
        if narrow:
            # setp has no 8-bit (nor predicate) types: compare the extended values.
            a, b = _widen(fs, a, element, sign == "s"), _widen(fs, b, element, sign == "s")
        if not isinstance(a.type, ptx.RegisterType):
            a = fs.reg(a, "b16" if narrow else register_kind(element))
        return ptx.SetpOp(cmp, type_suffix, res, a, b)

    _elementwise(fs, result, [lhs, rhs], build)


@rule(arith.CmpiOp)
def _cmpi(fs: FunctionSelector, op: arith.CmpiOp) -> None:
    predicate = _CMPI_NAMES[op.predicate.value.data]
    if _elements(op.lhs.type)[0] == i1 and predicate in ("eq", "ne"):
        # i1 equality: xor / not.
        def build(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
            x = fs.emit(ptx.XorOp("pred", fs.fresh("pred"), fs.reg(args[0], "pred"), fs.reg(args[1], "pred"))).res
            return ptx.NotOp("pred", res, x) if predicate == "eq" else ptx.MovOp("pred", res, x)

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
    element, _ = _elements(result.type)
    if element == i1:

        def build_pred(res: ptx.RegisterType, args: list[SSAValue]) -> Operation:
            c, t, f = (fs.reg(a, "pred") for a in args)
            on = fs.emit(ptx.AndOp("pred", fs.fresh("pred"), c, t)).res
            not_c = fs.emit(ptx.NotOp("pred", fs.fresh("pred"), c)).res
            off = fs.emit(ptx.AndOp("pred", fs.fresh("pred"), not_c, f)).res
            return ptx.OrOp("pred", res, on, off)

        _elementwise(fs, result, [cond, true, false], build_pred)
        return
    bits = max(_bits(element), 16)
    _elementwise(
        fs,
        result,
        [cond, true, false],
        lambda res, args: ptx.SelpOp(f"b{bits}", res, args[1], args[2], fs.reg(args[0], "pred")),
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
    src_element, _ = _elements(source.type)
    dst_element, _ = _elements(result.type)
    dst_bits = max(_bits(dst_element), 16)
    if src_element == i1:
        one = -1 if signed else 1
        _elementwise(
            fs,
            result,
            [source],
            lambda res, a: ptx.SelpOp(
                f"b{dst_bits}", res, fs.imm(one, dst_element), fs.imm(0, dst_element), fs.reg(a[0], "pred")
            ),
        )
        return
    src_bits = _bits(src_element)
    sign = "s" if signed else "u"
    _elementwise(
        fs,
        result,
        [source],
        lambda res, a: ptx.CvtOp(f"{sign}{dst_bits}", f"{sign}{src_bits}", res, fs.reg(a[0])),
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
    src_element = _elements(source.type)[0]
    dst_element, _ = _elements(result.type)
    src_bits = _bits(src_element)
    if dst_element == i1:

        def to_pred(res: ptx.RegisterType, a: list[SSAValue]) -> Operation:
            width = max(src_bits, 16)
            low = fs.emit(
                ptx.AndOp(f"b{width}", fs.fresh(register_kind(src_element)), fs.reg(a[0]), fs.imm(1, src_element))
            ).res
            return ptx.SetpOp("ne", f"b{width}", res, low, fs.imm(0, src_element))

        _elementwise(fs, result, [source], to_pred)
        return
    dst_bits = max(_bits(dst_element), 16)
    if dst_bits == src_bits:
        # i16 -> i8: the low byte is the value (the high byte of an i8 is undefined).
        fs.define(result, fs.get(source))
        return
    _elementwise(fs, result, [source], lambda res, a: ptx.CvtOp(f"u{dst_bits}", f"u{src_bits}", res, fs.reg(a[0])))


@rule(arith.IndexCastOp)
def _index_cast(fs: FunctionSelector, op: Operation) -> None:
    raise fs.error(op, f"{op.name}: index values have no PTX lowering; use i32 or i64")


def _int_operand_for_convert(fs: FunctionSelector, value: SSAValue, element: Attribute, signed: bool) -> SSAValue:
    """An integer cvt source: i1/i8 widened to 16 bits first (cvt has no predicate
    source, and an i8's high byte is undefined)."""
    if _bits(element) < 16:
        return fs.reg(_widen(fs, value, element, signed), "b16")
    return fs.reg(value)


def _convert(fs: FunctionSelector, op: Operation, dst: str, src: str, rounding: str | None) -> None:
    """`cvt[.rounding].<dst>.<src>`, elementwise; `dst`/`src` are the PTX type letters
    (`f`, `s`, `u`)."""
    (source,) = op.operands
    (result,) = op.results
    src_element, dst_element = _elements(source.type)[0], _elements(result.type)[0]
    src_type = _float_type(src_element) if src == "f" else f"{src}{max(_bits(src_element), 16)}"
    if dst != "f" and dst_element == i1:
        # fptosi/fptoui to i1: convert to 16 bits, keep bit 0 (other values are poison).

        def to_bit(res: ptx.RegisterType, a: list[SSAValue]) -> Operation:
            wide = fs.emit(ptx.CvtOp(f"{dst}16", src_type, fs.fresh("b16"), fs.reg(a[0]), rounding)).res
            return _to_predicate(fs, res, wide)

        _elementwise(fs, result, [source], to_bit)
        return
    dst_type = _float_type(dst_element) if dst == "f" else f"{dst}{max(_bits(dst_element), 16)}"

    def build(res: ptx.RegisterType, a: list[SSAValue]) -> Operation:
        value = fs.reg(a[0]) if src == "f" else _int_operand_for_convert(fs, a[0], src_element, src == "s")
        return ptx.CvtOp(dst_type, src_type, res, value, rounding)

    _elementwise(fs, result, [source], build)


@rule(arith.SIToFPOp, llvm.SIToFPOp)
def _sitofp(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "f", "s", "rn")


@rule(arith.UIToFPOp)
def _uitofp(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "f", "u", "rn")


@rule(arith.FPToSIOp)
def _fptosi(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "s", "f", "rzi")


@rule(arith.FPToUIOp)
def _fptoui(fs: FunctionSelector, op: Operation) -> None:
    _convert(fs, op, "u", "f", "rzi")


@rule(arith.ExtFOp, arith.TruncFOp, llvm.FPExtOp)
def _float_resize(fs: FunctionSelector, op: Operation) -> None:
    narrowing = _bits(_elements(op.results[0].type)[0]) < _bits(_elements(op.operands[0].type)[0])
    _convert(fs, op, "f", "f", "rn" if narrowing else None)


@rule(arith.BitcastOp, llvm.BitcastOp)
def _bitcast(fs: FunctionSelector, op: Operation) -> None:
    (source,) = op.operands
    (result,) = op.results
    if byte_size(source.type) != byte_size(result.type) or _elements(source.type)[1] != _elements(result.type)[1]:
        raise fs.error(op, f"{op.name} from {source.type} to {result.type} changes the element layout; not supported")
    # Same registers: PTX registers are untyped bits. An immediate is typed, though
    # (`add.f32 %r, %r, 1065353216` is an error): its bits are moved into a register.
    src_element, dst_element = _elements(source.type)[0], _elements(result.type)[0]
    operands = [_bitcast_immediate(fs, v, src_element, dst_element) for v in fs.get(source)]
    fs.define(result, operands)


def _bitcast_immediate(fs: FunctionSelector, value: Operand, src: Attribute, dst: Attribute) -> Operand:
    if isinstance(value, Address) or not isinstance(owner := value.owner, ptx.ImmOp):
        return value
    bits = _bits(dst)
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


@rule(llvm.AddressOfOp)
def _addressof(fs: FunctionSelector, op: llvm.AddressOfOp) -> None:
    space = _address_space(op.result.type)
    if space != 3:
        raise fs.error(
            op, f"llvm.mlir.addressof of a global in address space {space}: only shared (3) globals are supported"
        )
    fs.define(op.result, [Address(fs.symbol(op.global_name.root_reference.data))])


def _offset_of(fs: FunctionSelector, op: llvm.GEPOp) -> tuple[int, list[tuple[SSAValue, int]]]:
    """(constant byte offset, [(dynamic index, scale)]) of a GEP."""
    constant = 0
    dynamic: list[tuple[SSAValue, int]] = []
    ssa = iter(op.ssa_indices)
    current: Attribute = op.elem_type
    for position, raw in enumerate(op.rawConstantIndices.iter_values()):
        if position == 0:
            scale = byte_size(current)
        elif isinstance(current, llvm.LLVMArrayType):
            current = current.type
            scale = byte_size(current)
        elif isinstance(current, llvm.LLVMStructType):
            # Struct fields need a constant index (verified by llvm.getelementptr).
            field_offset = 0
            for i, field_type in enumerate(current.types):
                align = natural_alignment(field_type)
                field_offset = (field_offset + align - 1) // align * align
                if i == raw:
                    constant += field_offset
                    current = field_type
                    break
                field_offset += byte_size(field_type)
            continue
        else:
            raise fs.error(op, f"getelementptr into {current} is not supported")
        if raw == llvm.GEP_USE_SSA_VAL:
            index, folded = _split_constant(next(ssa))
            constant += folded * scale
            if index is not None:
                dynamic.append((index, scale))
        else:
            constant += raw * scale
    return constant, dynamic


def _split_constant(index: SSAValue) -> tuple[SSAValue | None, int]:
    """`index` as (dynamic part, constant part): `x + c` folds `c` into the address
    offset (`[%r+16]`) instead of costing an add (GEP indices wrap like the addi)."""
    if (value := constant_int(index)) is not None:
        return None, value
    owner = index.owner
    if isinstance(owner, arith.AddiOp | llvm.AddOp):
        for dynamic, constant in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if (value := constant_int(constant)) is not None:
                rest, more = _split_constant(dynamic)
                return rest, value + more
    return index, 0


@rule(llvm.GEPOp)
def _gep(fs: FunctionSelector, op: llvm.GEPOp) -> None:
    base = fs.address(op.ptr)
    constant, dynamic = _offset_of(fs, op)
    result = Address(base.base, base.offset + constant)
    bits = _bits(op.result.type)
    for index, scale in dynamic:
        index_bits = _bits(index.type)
        base_reg = fs.materialize_address(Address(result.base))
        idx = fs.reg(index)
        kind = "b32" if bits == 32 else "b64"
        if bits == 64 and index_bits == 32:
            wide = fs.emit(ptx.MulOp("wide.s32", fs.fresh("b64"), idx, fs.imm(scale))).res
            summed = fs.emit(ptx.AddOp("s64", fs.fresh("b64"), base_reg, wide)).res
        elif bits == 32 and index_bits == 64:
            narrow = fs.emit(ptx.CvtOp("u32", "u64", fs.fresh("b32"), idx)).res
            summed = fs.emit(ptx.MadOp("lo.s32", fs.fresh("b32"), narrow, fs.imm(scale), base_reg)).res
        else:
            summed = fs.emit(
                ptx.MadOp(f"lo.s{bits}", fs.fresh(kind), idx, fs.imm(scale, i32 if bits == 32 else i64), base_reg)
            ).res
        result = Address(summed, result.offset)
    fs.define(op.result, [result])


@rule(llvm.IntToPtrOp)
def _inttoptr(fs: FunctionSelector, op: llvm.IntToPtrOp) -> None:
    source_bits, result_bits = _bits(op.input.type), _bits(op.output.type)
    value = fs.scalar(op.input)
    if source_bits == result_bits:
        fs.define(op.output, [Address(fs.reg(value))])
    elif source_bits == 32:
        fs.define(op.output, [Address(fs.emit(ptx.CvtOp("u64", "u32", fs.fresh("b64"), fs.reg(value))).res)])
    else:
        fs.define(op.output, [Address(fs.emit(ptx.CvtOp("u32", "u64", fs.fresh("b32"), fs.reg(value))).res)])


@rule(llvm.PtrToIntOp)
def _ptrtoint(fs: FunctionSelector, op: llvm.PtrToIntOp) -> None:
    pointer_bits, result_bits = _bits(op.input.type), _bits(op.output.type)
    value = fs.reg(fs.address(op.input))
    if pointer_bits == result_bits:
        fs.define(op.output, [value])
    elif pointer_bits == 32:
        fs.define(
            op.output,
            [fs.emit(ptx.CvtOp(f"u{result_bits}", "u32", fs.fresh(register_kind(op.output.type)), value)).res],
        )
    else:
        fs.define(
            op.output,
            [fs.emit(ptx.CvtOp(f"u{result_bits}", "u64", fs.fresh(register_kind(op.output.type)), value)).res],
        )


_CVTA_SPACE = {1: "global", 3: "shared", 4: "const", 5: "local", 7: "shared::cluster"}
"""The address spaces `cvta` converts to and from generic addresses."""


@rule(llvm_ext.AddrSpaceCastOp)
def _addrspacecast(fs: FunctionSelector, op: llvm_ext.AddrSpaceCastOp) -> None:
    """Through the generic space: `cvta.<space>.u64` into it, `cvta.to.<space>.u64` out
    of it, with `cvt` between the 32-bit shared pointers and the 64-bit generic ones."""
    source, target = _address_space(op.arg.type), _address_space(op.res.type)
    if source is None or target is None:
        raise fs.error(op, f"llvm.addrspacecast of {op.arg.type}: only scalar pointers are supported")
    if source == target:
        fs.define(op.res, fs.get(op.arg))
        return
    for space in (source, target):
        if space != 0 and space not in _CVTA_SPACE:
            raise fs.error(
                op,
                f"llvm.addrspacecast from address space {source} to {target}: address space {space} has no "
                f"generic addresses (cvta supports 0, {', '.join(map(str, _CVTA_SPACE))})",
            )
    value = fs.reg(fs.address(op.arg))
    if source != 0:
        if source in SHORT_POINTER_SPACES:
            value = fs.emit(ptx.CvtOp("u64", "u32", fs.fresh("b64"), value)).res
        value = fs.emit(ptx.CvtaOp(_CVTA_SPACE[source], fs.fresh("b64"), value, to_generic=True)).res
    if target != 0:
        value = fs.emit(ptx.CvtaOp(_CVTA_SPACE[target], fs.fresh("b64"), value)).res
        if target in SHORT_POINTER_SPACES:
            value = fs.emit(ptx.CvtOp("u32", "u64", fs.fresh("b32"), value)).res
    fs.define(op.res, [Address(value)])


_STATE_SPACE = {0: "", 1: "global", 3: "shared", 4: "const", 5: "local", 7: "shared::cluster"}


def _state_space(fs: FunctionSelector, op: Operation, pointer: SSAValue) -> str:
    space = _address_space(pointer.type)
    if space not in _STATE_SPACE:
        raise fs.error(op, f"{op.name} through an address-space-{space} pointer is not supported")
    return _STATE_SPACE[space]


def _memory_chunks(element: Attribute, count: int, alignment: int) -> list[tuple[int, int]]:
    """[(first element, width)] splitting a vector access into .v4/.v2/scalar pieces
    no wider than 16 bytes nor than the alignment allows."""
    size = byte_size(element)
    width = 1
    while width < 4 and width * 2 <= count and width * 2 * size <= min(16, alignment) and count % (width * 2) == 0:
        width *= 2
    return [(i, width) for i in range(0, count, width)]


def _memory_type(element: Attribute) -> str:
    if element == i1:
        raise ValueError("i1 memory access")
    return f"b{_bits(element)}" if _bits(element) >= 16 else "b8"


@rule(llvm.LoadOp)
def _load(fs: FunctionSelector, op: llvm.LoadOp) -> None:
    space = _state_space(fs, op, op.ptr)
    address = fs.address(op.ptr)
    result_type = op.dereferenced_value.type
    element, count = _elements(result_type)
    alignment = op.alignment.value.data if op.alignment is not None else natural_alignment(element)
    kind = register_kind(element)
    if element == i1:
        # An i1 in memory is a byte holding 0 or 1 (LLVM's layout): load it, test bit 0.
        if count != 1:
            raise fs.error(op, f"llvm.load of {result_type}: vectors of i1 have no PTX lowering")
        byte = fs.emit(ptx.LdOp(space, "u8", [fs.fresh("b16")], address.base, address.offset)).res[0]
        fs.define(op.dereferenced_value, [fs.emit(_to_predicate(fs, fs.fresh("pred"), byte)).results[0]])
        return
    registers: list[Operand] = []
    for first, width in _memory_chunks(element, count, alignment):
        results = [fs.fresh(kind) for _ in range(width)]
        load = fs.emit(
            ptx.LdOp(space, _memory_type(element), results, address.base, address.offset + first * byte_size(element))
        )
        registers.extend(load.res)
    fs.define(op.dereferenced_value, registers)


@rule(llvm.StoreOp)
def _store(fs: FunctionSelector, op: llvm.StoreOp) -> None:
    space = _state_space(fs, op, op.ptr)
    address = fs.address(op.ptr)
    element, count = _elements(op.value.type)
    alignment = op.alignment.value.data if op.alignment is not None else natural_alignment(element)
    if element == i1:
        # Stored as the byte 0 or 1.
        if count != 1:
            raise fs.error(op, f"llvm.store of {op.value.type}: vectors of i1 have no PTX lowering")
        byte = fs.emit(ptx.SelpOp("b16", fs.fresh("b16"), fs.imm(1, i16), fs.imm(0, i16), fs.reg(op.value, "pred"))).res
        fs.emit(ptx.StOp(space, "b8", address.base, [byte], address.offset))
        return
    values = (
        [fs.scalar(op.value)]
        if count == 1
        else [v if not isinstance(v, Address) else fs.reg(v) for v in fs.get(op.value)]
    )
    for first, width in _memory_chunks(element, count, alignment):
        chunk = values[first : first + width]
        fs.emit(
            ptx.StOp(space, _memory_type(element), address.base, chunk, address.offset + first * byte_size(element))
        )


@rule(llvm_ext.ExtractElementOp)
def _extractelement(fs: FunctionSelector, op: llvm_ext.ExtractElementOp) -> None:
    elements = fs.get(op.vector)
    if (index := constant_int(op.position)) is not None:
        fs.define(op.res, [elements[index]])
        return
    # A dynamic index: a select chain (llc spills the vector to local memory instead).
    position = fs.reg(op.position)
    bits = _bits(_elements(op.res.type)[0])
    kind = register_kind(_elements(op.res.type)[0])
    chosen = fs.reg(cast(SSAValue, elements[0]), kind)
    for i, element in enumerate(elements[1:], start=1):
        hit = fs.emit(
            ptx.SetpOp("eq", f"b{_bits(op.position.type)}", fs.fresh("pred"), position, fs.imm(i, op.position.type))
        ).res
        chosen = fs.emit(ptx.SelpOp(f"b{bits}", fs.fresh(kind), cast(SSAValue, element), chosen, hit)).res
    fs.define(op.res, [chosen])


@rule(vector.ExtractOp)
def _vector_extract(fs: FunctionSelector, op: vector.ExtractOp) -> None:
    elements = fs.get(op.vector)
    positions = list(op.static_position.get_values())
    if op.dynamic_position or len(positions) != 1:
        raise fs.error(op, "vector.extract: only a constant position into a 1-D vector is supported")
    fs.define(op.result, [elements[positions[0]]])


# --------------------------------------------------------------------------------------
# Structured control flow
# --------------------------------------------------------------------------------------


def _branch(
    fs: FunctionSelector, target: str, cond: SSAValue | None = None, negated: bool = False, uniform: bool = True
) -> None:
    guard = None if cond is None else fs.reg(cond, "pred")
    fs.emit(ptx.BraOp(target, guard, negated=negated, uniform=uniform))


def _region_results(fs: FunctionSelector, region: Region, dests: list[SSAValue]) -> None:
    """Select a single-block region ending in scf.yield; copy its yield into `dests`."""
    block = region.block
    for op in block.ops:
        if op is block.last_op and isinstance(op, scf.YieldOp):
            sources = [s for v in op.arguments for s in fs.get(v)]
            fs.move(dests, sources)
        else:
            fs.select(op)


_PREDICABLE_LIMIT = 6


@rule(scf.IfOp)
def _if(fs: FunctionSelector, op: scf.IfOp) -> None:
    cond = constant_int(op.cond)
    result_registers = [r for result in op.results for r in fs.registers_like(result)]
    if cond is not None:
        # A constant condition: only one side exists.
        region = op.true_region if cond else op.false_region
        if region.blocks:
            _region_results(fs, region, result_registers)
        _define_from(fs, op.results, result_registers)
        return
    uniform = fs.uniform(op.cond)
    has_else = bool(op.false_region.blocks) and any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops)
    if not has_else and not op.results and _try_predicated(fs, op):
        return
    end = fs.label()
    otherwise = fs.label() if has_else or result_registers else end
    _branch(fs, otherwise, op.cond, negated=True, uniform=uniform)
    _region_results(fs, op.true_region, result_registers)
    if otherwise != end:
        fs.emit(ptx.BraOp(end, uniform=True))
        fs.emit(ptx.LabelOp(otherwise))
        if op.false_region.blocks:
            _region_results(fs, op.false_region, result_registers)
    fs.emit(ptx.LabelOp(end))
    _define_from(fs, op.results, result_registers)


def _try_predicated(fs: FunctionSelector, op: scf.IfOp) -> bool:
    """Guard each instruction of a small, result-less then-block with the condition
    (`@%p tcgen05.commit ...`) instead of branching around it."""
    saved = fs.body
    trial = Block()
    fs.body = trial
    try:
        for inner in op.true_region.block.ops:
            if not isinstance(inner, scf.YieldOp):
                fs.select(inner)
    finally:
        fs.body = saved
    instructions = [o for o in trial.ops if isinstance(o, ptx.Instruction)]
    predicable = (
        len(instructions) <= _PREDICABLE_LIMIT
        and not any(isinstance(o, ptx.LabelOp | ptx.BraOp) for o in trial.ops)
        and all(o.guard_value() is None for o in instructions)
    )
    if not predicable:
        # Re-select as a branch. Keep the trial's pseudo-ops (cached immediates and
        # symbols may be reused later); drop its instructions and the values they
        # defined (only used inside the region).
        for inner in list(trial.ops):
            inner.detach()
            if not isinstance(inner, ptx.Instruction):
                fs.emit(inner)
        for inner in op.true_region.walk():
            for result in inner.results:
                fs.values.pop(result, None)
        return False
    guard = fs.reg(op.cond, "pred")
    for inner in list(trial.ops):
        inner.detach()
        if isinstance(inner, ptx.Instruction):
            _set_guard(inner, guard)
        fs.emit(inner)
    return True


def _set_guard(op: ptx.Instruction, guard: SSAValue) -> None:
    names = [name for name, _ in type(op).get_irdl_definition().operands]
    index = names.index("guard")
    # `guard` is the last operand of every instruction.
    assert index == len(names) - 1
    op.operands = [*op.operands, guard]
    if "operandSegmentSizes" in op.properties:
        sizes = list(cast(DenseArrayBase[IntegerType], op.properties["operandSegmentSizes"]).get_values())
        sizes[-1] = 1
        op.properties["operandSegmentSizes"] = DenseArrayBase.from_list(i32, sizes)


def _define_from(fs: FunctionSelector, results: Sequence[SSAValue], registers: list[SSAValue]) -> None:
    index = 0
    for result in results:
        _, count = _elements(result.type)
        values: list[Operand] = list(registers[index : index + count])
        if isinstance(result.type, llvm.LLVMPointerType):
            values = [Address(v) for v in registers[index : index + count]]
        fs.define(result, values)
        index += count


@rule(scf.ForOp)
def _for(fs: FunctionSelector, op: scf.ForOp) -> None:
    block = op.body.block
    bits = _bits(op.lb.type)
    kind = register_kind(op.lb.type)
    induction = fs.handle(kind)
    carried = [r for arg in block.args[1:] for r in fs.registers_like(arg)]
    fs.move([induction], [fs.scalar(op.lb)])
    fs.move(carried, [s for v in op.iter_args for s in fs.get(v)])
    fs.define(block.args[0], [induction])
    _define_from(fs, block.args[1:], carried)
    uniform = all(fs.uniform(v) for v in (op.lb, op.ub, op.step))
    body, done = fs.label(), fs.label()
    lb, ub = constant_int(op.lb), constant_int(op.ub)
    if lb is None or ub is None or not lb < ub:
        skip = fs.emit(ptx.SetpOp("ge", f"s{bits}", fs.fresh("pred"), induction, fs.scalar(op.ub))).res
        fs.emit(ptx.BraOp(done, skip, uniform=uniform))
    fs.emit(ptx.LabelOp(body))
    _region_results(fs, op.body, carried)
    fs.emit(ptx.AddOp(f"s{bits}", cast(ptx.RegisterType, induction.type), induction, fs.scalar(op.step)))
    again = fs.emit(ptx.SetpOp("lt", f"s{bits}", fs.fresh("pred"), induction, fs.scalar(op.ub))).res
    fs.emit(ptx.BraOp(body, again, uniform=uniform))
    fs.emit(ptx.LabelOp(done))
    _define_from(fs, op.results, carried)


@rule(scf.WhileOp)
def _while(fs: FunctionSelector, op: scf.WhileOp) -> None:
    before, after = op.before_region.block, op.after_region.block
    state = [r for arg in before.args for r in fs.registers_like(arg)]
    fs.move(state, [s for v in op.arguments for s in fs.get(v)])
    _define_from(fs, before.args, state)
    forwarded = [r for arg in after.args for r in fs.registers_like(arg)]
    head, done = fs.label(), fs.label()
    fs.emit(ptx.LabelOp(head))
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    for inner in before.ops:
        if inner is not condition:
            fs.select(inner)
    fs.move(forwarded, [s for v in condition.args for s in fs.get(v)])
    uniform = fs.uniform(condition.condition)
    _branch(fs, done, condition.condition, negated=True, uniform=uniform)
    _define_from(fs, after.args, forwarded)
    _region_results(fs, op.after_region, state)
    fs.emit(ptx.BraOp(head, uniform=True))
    fs.emit(ptx.LabelOp(done))
    _define_from(fs, op.results, forwarded)


# --------------------------------------------------------------------------------------
# Multi-block functions (cf / llvm branches) and returns
# --------------------------------------------------------------------------------------


def _select_blocks(fs: FunctionSelector, region: Region) -> None:
    blocks = list(region.blocks)
    for block in blocks[1:]:
        registers = [r for arg in block.args for r in fs.registers_like(arg)]
        fs.block_labels[block] = (fs.label(), registers)
        _define_from(fs, block.args, registers)
    for block in blocks:
        if block in fs.block_labels:
            fs.emit(ptx.LabelOp(fs.block_labels[block][0]))
        fs.select_block(block)


def _jump(fs: FunctionSelector, block: Block, arguments: Sequence[SSAValue]) -> None:
    label, registers = fs.block_labels[block]
    fs.move(registers, [s for v in arguments for s in fs.get(v)])
    fs.emit(ptx.BraOp(label, uniform=True))


def _conditional_jump(
    fs: FunctionSelector,
    cond: SSAValue,
    then_block: Block,
    then_args: Sequence[SSAValue],
    else_block: Block,
    else_args: Sequence[SSAValue],
) -> None:
    other = fs.label()
    _branch(fs, other, cond, negated=True, uniform=fs.uniform(cond))
    _jump(fs, then_block, then_args)
    fs.emit(ptx.LabelOp(other))
    _jump(fs, else_block, else_args)


@rule(cf.BranchOp)
def _cf_br(fs: FunctionSelector, op: cf.BranchOp) -> None:
    _jump(fs, op.successor, op.arguments)


@rule(cf.ConditionalBranchOp)
def _cf_cond_br(fs: FunctionSelector, op: cf.ConditionalBranchOp) -> None:
    _conditional_jump(fs, op.cond, op.then_block, op.then_arguments, op.else_block, op.else_arguments)


@rule(llvm.BrOp)
def _llvm_br(fs: FunctionSelector, op: llvm.BrOp) -> None:
    _jump(fs, op.successor, op.arguments)


@rule(llvm.CondBrOp)
def _llvm_cond_br(fs: FunctionSelector, op: llvm.CondBrOp) -> None:
    _conditional_jump(fs, op.cond, op.then_block, op.then_arguments, op.else_block, op.else_arguments)


@rule(llvm.ReturnOp, func.ReturnOp)
def _return(fs: FunctionSelector, op: Operation) -> None:
    if op.operands:
        raise fs.error(op, "a kernel returns no value")
    fs.emit(ptx.RetOp())


# The nvvm rules live in their own module; importing it registers them.
from xdsl_tmem.backend import isel_nvvm as _isel_nvvm  # noqa: E402

del _isel_nvvm


# --------------------------------------------------------------------------------------
# Kernels and the module
# --------------------------------------------------------------------------------------

_PARAM_TYPE = {"b16": "u16", "b32": "u32", "b64": "u64"}


def _kernel_name(fs_op: Operation) -> str:
    if isinstance(fs_op, llvm.FuncOp | func.FuncOp):
        return fs_op.sym_name.data
    raise AssertionError


def _param_declaration(name: str, t: Attribute) -> str:
    if isinstance(t, llvm.LLVMPointerType):
        space = _address_space(t)
        where = {1: ".global", 3: ".shared"}.get(space or 0, "")
        width = "u32" if space in (6, 7) else "u64"
        return f".{width} .ptr{' ' + where if where else ''} .align 1 {name}"
    if _bits(t) <= 8:
        return f".u8 {name}"  # one byte, as llc-22 declares it (the kernel ABI)
    if isinstance(t, Float32Type):
        return f".f32 {name}"
    if isinstance(t, Float64Type):
        return f".f64 {name}"
    return f".{_PARAM_TYPE[register_kind(t)]} {name}"


def _load_param(fs: FunctionSelector, arg: SSAValue, name: str) -> None:
    t = arg.type
    symbol = fs.symbol(name)
    if t == i1:
        byte = fs.emit(ptx.LdOp("param", "b8", [fs.fresh("b16")], symbol)).res[0]
        low = fs.emit(ptx.AndOp("b16", fs.fresh("b16"), byte, fs.imm(1, i16))).res
        fs.define(arg, [fs.emit(ptx.SetpOp("ne", "b16", fs.fresh("pred"), low, fs.imm(0, i16))).res])
        return
    if isinstance(t, llvm.LLVMPointerType):
        space = _address_space(t)
        if space in (6, 7):
            loaded = fs.emit(ptx.LdOp("param", "b32", [fs.fresh("b32")], symbol)).res[0]
        else:
            loaded = fs.emit(ptx.LdOp("param", "b64", [fs.fresh("b64")], symbol)).res[0]
            if space == 3:
                loaded = fs.emit(ptx.CvtOp("u32", "u64", fs.fresh("b32"), loaded)).res
        fs.define(arg, [Address(loaded)])
        return
    if isinstance(t, VectorType):
        raise fs.error(fs.fn, f"vector kernel parameter {t} is not supported")
    kind = register_kind(t)
    fs.define(arg, [fs.emit(ptx.LdOp("param", f"b{_bits(t)}", [fs.fresh(kind)], symbol)).res[0]])


_DIRECTIVES = (("nvvm.maxntid", ".maxntid"), ("nvvm.reqntid", ".reqntid"))


def _directives(fn: Operation) -> list[str]:
    out: list[str] = []
    for key, directive in _DIRECTIVES:
        attr = fn.attributes.get(key)
        if isinstance(attr, DenseArrayBase):
            dims = [str(int(v)) for v in attr.get_values()]
            out.append(f"{directive} {', '.join(dims)}")
    if isinstance(attr := fn.attributes.get("nvvm.minctasm"), IntegerAttr):
        out.append(f".minnctapersm {attr.value.data}")
    if isinstance(attr := fn.attributes.get("nvvm.maxnreg"), IntegerAttr):
        out.append(f".maxnreg {attr.value.data}")
    cluster = fn.attributes.get("nvvm.cluster_dim")
    if isinstance(cluster, DenseArrayBase):
        dims = [str(int(v)) for v in cluster.get_values()]
        out.append(".explicitcluster")
        out.append(f".reqnctapercluster {', '.join(dims)}")
    return out


def select_kernel(fn: Operation, arch: Arch) -> ptx.EntryOp:
    """Select one kernel into a `ptx.entry`."""
    name = _kernel_name(fn)
    fs = FunctionSelector(fn, arch)
    region = fn.regions[0]
    if not region.blocks:
        raise IselError(fn, f"ptx backend: kernel @{name} has no body")
    params: list[str] = []
    for i, arg in enumerate(region.blocks[0].args):
        param_name = f"{name}_param_{i}"
        try:
            params.append(_param_declaration(param_name, arg.type))
            _load_param(fs, arg, param_name)
        except UnsupportedTypeError as e:
            raise IselError(fn, f"ptx backend: kernel @{name} parameter {i}: {e}") from None
    parameters_end = fs.body.last_op
    if len(region.blocks) == 1:
        fs.select_block(region.blocks[0])
    else:
        _select_blocks(fs, region)
    _remove_dead_instructions(fs.body)
    for op in list(fs.prologue.ops):
        op.detach()
        if parameters_end is None:
            fs.body.insert_op_before(op, fs.body.first_op) if fs.body.first_op else fs.body.add_op(op)
        else:
            fs.body.insert_op_after(op, parameters_end)
            parameters_end = op
    return ptx.EntryOp(name, params, _directives(fn), Region(fs.body))


_PURE = (
    ptx.AddOp, ptx.SubOp, ptx.MulOp, ptx.DivOp, ptx.RemOp, ptx.AndOp, ptx.OrOp, ptx.XorOp, ptx.ShlOp,
    ptx.ShrOp, ptx.MinOp, ptx.MaxOp, ptx.NotOp, ptx.NegOp, ptx.MovOp, ptx.MadOp, ptx.FmaOp, ptx.SelpOp,
    ptx.SetpOp, ptx.CvtOp, ptx.CvtaOp,
)  # fmt: skip


def _remove_dead_instructions(body: Block) -> None:
    """Drop side-effect-free instructions whose registers are never read (e.g. an index
    addition folded into an address offset). Registers are named by type, so liveness
    is by register, over the whole kernel: sound without a control-flow graph."""
    while True:
        read = {value.type for op in body.ops for value in op.operands if isinstance(value.type, ptx.RegisterType)}
        dead = [
            op
            for op in body.ops
            if isinstance(op, _PURE) and op.guard_value() is None and all(r.type not in read for r in op.results)
        ]
        if not dead:
            return
        for op in dead:
            op.detach()
            op.erase(safe_erase=False)


def _global_declaration(op: llvm.GlobalOp) -> ptx.GlobalOp:
    space = op.addr_space.value.data
    if space != 3:
        raise IselError(
            op,
            f"ptx backend: global @{op.sym_name.data} in address space {space}: only shared (3) globals are supported",
        )
    if op.value is not None or op.body.blocks:
        raise IselError(op, f"ptx backend: shared global @{op.sym_name.data} cannot have an initializer")
    t: Attribute = op.global_type
    alignment = op.alignment.value.data if op.alignment is not None else natural_alignment(t)
    if isinstance(t, llvm.LLVMArrayType | llvm.LLVMStructType | VectorType):
        return ptx.GlobalOp(op.sym_name.data, "shared", alignment, "b8", byte_size(cast(Attribute, t)))
    return ptx.GlobalOp(op.sym_name.data, "shared", alignment, f"b{_bits(t)}" if _bits(t) >= 16 else "b8", None)


def _is_kernel(op: Operation) -> bool:
    return isinstance(op, llvm.FuncOp | func.FuncOp) and "nvvm.kernel" in op.attributes


def select_module(module: ModuleOp, arch: Arch) -> ptx.ModuleOp:
    """The `ptx.module` for an nvvm-level module: globals (largest alignment first, so
    small variables do not pad big aligned buffers) and one entry per kernel."""
    globals_: list[ptx.GlobalOp] = []
    entries: list[ptx.EntryOp] = []
    for op in module.body.block.ops:
        if isinstance(op, llvm.GlobalOp):
            globals_.append(_global_declaration(op))
        elif _is_kernel(op):
            entries.append(select_kernel(op, arch))
        elif isinstance(op, llvm.FuncOp | func.FuncOp):
            if op.regions[0].blocks:
                raise IselError(
                    op,
                    f"ptx backend: @{op.sym_name.data} is not a kernel (no nvvm.kernel); "
                    "device functions are not supported",
                )
        else:
            raise IselError(op, f"ptx backend: {op.name} at module level has no PTX lowering")
    if not entries:
        raise IselError(module, "ptx backend: the module has no kernel (an llvm.func with nvvm.kernel)")
    globals_.sort(key=lambda g: -g.alignment.data)
    return ptx.ModuleOp(arch.version, arch.name, Region(Block([*globals_, *entries])))

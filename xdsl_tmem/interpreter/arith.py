"""`arith` on lane values, with the wrap-around and signedness of the hardware.

xDSL 0.74's own `ArithFunctions` works on Python scalars only (no lanes, no
wrap-around, no `divui`/`remui`/shifts/casts); these cover every op the shipped
programs and the lowering produce, for scalars and (32,) lane arrays alike. The
integer helpers are shared with the `llvm` integer ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    VectorType,
)
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation

from xdsl_tmem.interpreter import floats as F
from xdsl_tmem.interpreter.executor import WarpFunctions
from xdsl_tmem.interpreter.machine import Hazard
from xdsl_tmem.interpreter.values import (
    WARP,
    Lanes,
    UnsupportedValue,
    Value,
    as_signed,
    canonical,
    collapse,
    dtype_of,
    width_of,
)

# --------------------------------------------------------------------------------------
# Integer semantics on unsigned-canonical values
# --------------------------------------------------------------------------------------

CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def _arrays(a: Value, b: Value) -> bool:
    return isinstance(a, np.ndarray) or isinstance(b, np.ndarray)


def int_add(a: Value, b: Value, w: int) -> Value:
    if w == 1:
        return a ^ b
    if _arrays(a, b):
        return canonical(np.add(a, b, dtype=dtype_of_width(w)), w)
    return (a + b) & ((1 << w) - 1)


def int_sub(a: Value, b: Value, w: int) -> Value:
    if w == 1:
        return a ^ b
    if _arrays(a, b):
        return canonical(np.subtract(a, b, dtype=dtype_of_width(w)), w)
    return (a - b) & ((1 << w) - 1)


def int_mul(a: Value, b: Value, w: int) -> Value:
    if w == 1:
        return a & b
    if _arrays(a, b):
        return canonical(np.multiply(a, b, dtype=dtype_of_width(w)), w)
    return (a * b) & ((1 << w) - 1)


def int_bitwise(name: str) -> Callable[[Value, Value, int], Value]:
    ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name]

    def run(a: Value, b: Value, w: int) -> Value:
        if _arrays(a, b):
            return canonical(ufunc(a, b, dtype=dtype_of_width(w)), w)
        # Scalars are Python ints up to 2^64 - 1 (too large for the ufunc's C long).
        x, y = int(a), int(b)
        result = x & y if name == "and" else x | y if name == "or" else x ^ y
        return bool(result) if w == 1 else result

    return run


def _check_divisor(b: Value) -> None:
    if (b == 0) if not isinstance(b, np.ndarray) else bool((b == 0).any()):
        raise Hazard("division-by-zero", "integer division by zero (undefined in LLVM and PTX)")


def int_div(a: Value, b: Value, w: int, signed: bool, rem: bool) -> Value:
    """C semantics (truncation toward zero), as PTX div/rem."""
    _check_divisor(b)
    if signed:
        sa, sb = as_signed(a, w), as_signed(b, w)
        if _arrays(a, b):
            # Exact in int64 (a float64 quotient loses precision beyond 2^53): fmod truncates
            # like C's %, so (a - r) / b is exact. MIN / -1 (undefined) wraps to MIN.
            sa64, sb64 = np.asarray(sa, np.int64), np.asarray(sb, np.int64)
            with np.errstate(over="ignore", divide="ignore"):
                r = np.fmod(sa64, sb64)
                q = (sa64 - r) // sb64
            return collapse(canonical((r if rem else q).astype(dtype_of_width(w)), w))
        q = abs(sa) // abs(sb) * (1 if (sa >= 0) == (sb >= 0) else -1)
        return canonical(sa - q * sb if rem else q, w)
    if _arrays(a, b):
        return collapse(canonical(np.remainder(a, b) if rem else np.floor_divide(a, b), w))
    return a % b if rem else a // b


def int_shift(a: Value, b: Value, w: int, kind: str) -> Value:
    """`shl`, `shrui`, `shrsi`; shifting by >= w gives 0 (or the sign) as PTX clamps."""
    if _arrays(a, b):
        dt = dtype_of_width(w)
        a_arr = np.asarray(a, dtype=dt)
        b_arr = np.asarray(b, dtype=np.uint64)
        big = b_arr >= w
        amount = np.where(big, 0, b_arr).astype(dt)
        if kind == "shl":
            out = np.where(big, 0, np.left_shift(a_arr, amount))
        elif kind == "shrui":
            out = np.where(big, 0, np.right_shift(a_arr, amount))
        else:
            sa = a_arr.view(np.dtype(f"int{w}"))
            out = np.right_shift(sa, np.where(big, w - 1, amount).astype(sa.dtype)).view(dt)
        result = canonical(np.asarray(out, dtype=dt), w)
        return result if kind == "shl" else collapse(result)
    a, b = int(a), int(b)
    if kind == "shl":
        return 0 if b >= w else (a << b) & ((1 << w) - 1)
    if kind == "shrui":
        return 0 if b >= w else a >> b
    return canonical(as_signed(a, w) >> min(b, w - 1), w)


def int_cmp(a: Value, b: Value, w: int, predicate: str) -> Value:
    if predicate[0] == "s":
        a, b = as_signed(a, w), as_signed(b, w)
    match predicate:
        case "eq":
            r = a == b
        case "ne":
            r = a != b
        case "slt" | "ult":
            r = a < b
        case "sle" | "ule":
            r = a <= b
        case "sgt" | "ugt":
            r = a > b
        case _:
            r = a >= b
    return cast(Lanes, r) if isinstance(r, np.ndarray) else bool(r)


def int_minmax(a: Value, b: Value, w: int, signed: bool, take_max: bool) -> Value:
    sa, sb = (as_signed(a, w), as_signed(b, w)) if signed else (a, b)
    pick_a = sa >= sb if take_max else sa <= sb
    if isinstance(pick_a, np.ndarray):
        picked = cast(Lanes, np.where(cast(Lanes, pick_a), a, b))
        return canonical(picked.astype(dtype_of_width(w)), w)
    return a if pick_a else b


def int_resize(a: Value, src: int, dst: int, signed: bool) -> Value:
    """Zero/sign extension or truncation between integer widths."""
    if dst < src:
        if isinstance(a, np.ndarray):
            truncated = np.bitwise_and(cast(Lanes, a).astype(np.uint64), (1 << dst) - 1)
            return canonical(truncated.astype(dtype_of_width(dst)), dst)
        return canonical(int(a), dst)
    value = as_signed(a, src) if signed and src > 1 else a
    if signed and src == 1:
        value = -np.asarray(a, np.int64) if isinstance(a, np.ndarray) else -int(a)
    if isinstance(value, np.ndarray):
        return cast(Lanes, value).astype(np.int64).astype(dtype_of_width(dst))
    return canonical(int(value), dst)


_DTYPES: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.bool_),
    8: np.dtype(np.uint8),
    16: np.dtype(np.uint16),
    32: np.dtype(np.uint32),
    64: np.dtype(np.uint64),
}


def dtype_of_width(w: int) -> np.dtype[Any]:
    return _DTYPES[w]


# --------------------------------------------------------------------------------------
# Floating point
# --------------------------------------------------------------------------------------


def float_result(value: Any, t: Attribute) -> Value:
    """Round to the result type; scalars stay Python floats. A value beyond the type's
    range rounds to infinity (IEEE 754 round to nearest), which numpy does but warns of."""
    dtype = dtype_of(t)
    with np.errstate(over="ignore"):
        if isinstance(value, np.ndarray):
            return cast(Lanes, value).astype(dtype, copy=False)
        return float(dtype.type(value))


def attribute_value(attr: Attribute, t: Attribute) -> Value:
    """The run-time value of a constant attribute of type `t`."""
    if isinstance(attr, IntegerAttr):
        return canonical(attr.value.data, width_of(t))
    if isinstance(attr, FloatAttr):
        return float_result(attr.value.data, t)
    if isinstance(attr, DenseIntOrFPElementsAttr) and isinstance(t, VectorType):
        dtype = dtype_of(cast(Attribute, t))
        values: Lanes = np.asarray(attr.get_values())
        if values.size == 1:
            values = np.full(cast(VectorType, t).get_shape()[0], values[0])
        if dtype.kind in "ub" and values.dtype.kind in "iu":
            values = values.astype(np.int64).astype(dtype)
        return np.tile(values.astype(dtype), (WARP, 1))
    raise UnsupportedValue(f"constant {attr} of type {t} is not supported")


# --------------------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------------------


def _w(op: Operation) -> int:
    return width_of(op.results[0].type)


def widths(op: Operation) -> tuple[int, int]:
    """(operand width, result width) of a conversion."""
    return width_of(op.operands[0].type), width_of(op.results[0].type)


def constant_value(op: arith.ConstantOp | llvm.ConstantOp) -> Value:
    """An `arith.constant`'s or `llvm.mlir.constant`'s value."""
    return attribute_value(op.value, op.result.type)


def constant(ft: WarpFunctions, op: arith.ConstantOp | llvm.ConstantOp) -> Value:
    """`constant_value`, derived once per op; a lane array (a vector constant) is handed
    out as a copy, as each execution defines a value of its own."""
    value = ft.static(op, constant_value)
    return cast(Lanes, value).copy() if isinstance(value, np.ndarray) else value


def cmp_static(op: arith.CmpiOp | llvm.ICmpOp) -> tuple[int, str]:
    """(operand width, predicate) of an `arith.cmpi` or `llvm.icmp` (the two number their
    predicates alike: MLIR's arith::CmpIPredicate and LLVM's ICmpPredicate)."""
    return width_of(op.lhs.type), CMPI[op.predicate.value.data]


def result_type(op: Operation) -> Attribute:
    return op.results[0].type


def _float(plan: Callable[[Any], F.FloatFn]):
    """An impl computing `plan(op)` (the op's PTX semantics, derived once per op)."""

    def run(self: ArithFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (self.static(op, plan)(*args),)

    return run


def _int_binary(fn: Callable[[Value, Value, int], Value]):
    def run(self: ArithFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (fn(args[0], args[1], self.static(op, _w)),)

    return run


@register_impls
class ArithFunctions(WarpFunctions):
    @impl(arith.ConstantOp)
    def run_constant(self, interp: Interpreter, op: arith.ConstantOp, args: PythonValues) -> PythonValues:
        return (constant(self, op),)

    run_addi = impl(arith.AddiOp)(_int_binary(int_add))
    run_subi = impl(arith.SubiOp)(_int_binary(int_sub))
    run_muli = impl(arith.MuliOp)(_int_binary(int_mul))
    run_andi = impl(arith.AndIOp)(_int_binary(int_bitwise("and")))
    run_ori = impl(arith.OrIOp)(_int_binary(int_bitwise("or")))
    run_xori = impl(arith.XOrIOp)(_int_binary(int_bitwise("xor")))
    run_shli = impl(arith.ShLIOp)(_int_binary(lambda a, b, w: int_shift(a, b, w, "shl")))
    run_shrui = impl(arith.ShRUIOp)(_int_binary(lambda a, b, w: int_shift(a, b, w, "shrui")))
    run_shrsi = impl(arith.ShRSIOp)(_int_binary(lambda a, b, w: int_shift(a, b, w, "shrsi")))
    run_divui = impl(arith.DivUIOp)(_int_binary(lambda a, b, w: int_div(a, b, w, signed=False, rem=False)))
    run_divsi = impl(arith.DivSIOp)(_int_binary(lambda a, b, w: int_div(a, b, w, signed=True, rem=False)))
    run_remui = impl(arith.RemUIOp)(_int_binary(lambda a, b, w: int_div(a, b, w, signed=False, rem=True)))
    run_remsi = impl(arith.RemSIOp)(_int_binary(lambda a, b, w: int_div(a, b, w, signed=True, rem=True)))
    run_minui = impl(arith.MinUIOp)(_int_binary(lambda a, b, w: int_minmax(a, b, w, False, False)))
    run_maxui = impl(arith.MaxUIOp)(_int_binary(lambda a, b, w: int_minmax(a, b, w, False, True)))
    run_minsi = impl(arith.MinSIOp)(_int_binary(lambda a, b, w: int_minmax(a, b, w, True, False)))
    run_maxsi = impl(arith.MaxSIOp)(_int_binary(lambda a, b, w: int_minmax(a, b, w, True, True)))

    @impl(arith.CeilDivUIOp)
    def run_ceildivui(self, interp: Interpreter, op: arith.CeilDivUIOp, args: PythonValues) -> PythonValues:
        a, b = args
        w = _w(op)
        q = int_div(a, b, w, signed=False, rem=False)
        r = int_div(a, b, w, signed=False, rem=True)
        return (int_add(q, canonical(r != 0, w) if not isinstance(r, np.ndarray) else (r != 0).astype(q.dtype), w),)

    @impl(arith.CmpiOp)
    def run_cmpi(self, interp: Interpreter, op: arith.CmpiOp, args: PythonValues) -> PythonValues:
        return (int_cmp(args[0], args[1], *self.static(op, cmp_static)),)

    @impl(arith.SelectOp)
    def run_select(self, interp: Interpreter, op: arith.SelectOp, args: PythonValues) -> PythonValues:
        return (select(args[0], args[1], args[2], self.static(op, result_type)),)

    @impl(arith.ExtUIOp)
    def run_extui(self, interp: Interpreter, op: arith.ExtUIOp, args: PythonValues) -> PythonValues:
        return (int_resize(args[0], *self.static(op, widths), signed=False),)

    @impl(arith.ExtSIOp)
    def run_extsi(self, interp: Interpreter, op: arith.ExtSIOp, args: PythonValues) -> PythonValues:
        return (int_resize(args[0], *self.static(op, widths), signed=True),)

    @impl(arith.TruncIOp)
    def run_trunci(self, interp: Interpreter, op: arith.TruncIOp, args: PythonValues) -> PythonValues:
        return (int_resize(args[0], *self.static(op, widths), signed=False),)

    @impl(arith.IndexCastOp)
    def run_index_cast(self, interp: Interpreter, op: arith.IndexCastOp, args: PythonValues) -> PythonValues:
        return (int_resize(args[0], *self.static(op, widths), signed=True),)

    # -- floating point: as the PTX instruction each op lowers to (floats.py) ---------

    run_addf = impl(arith.AddfOp)(_float(F.binary))
    run_subf = impl(arith.SubfOp)(_float(F.binary))
    run_mulf = impl(arith.MulfOp)(_float(F.binary))
    run_divf = impl(arith.DivfOp)(_float(F.binary))
    run_maximumf = impl(arith.MaximumfOp)(_float(F.binary))
    run_minimumf = impl(arith.MinimumfOp)(_float(F.binary))
    run_maxnumf = impl(arith.MaxnumfOp)(_float(F.binary))
    run_minnumf = impl(arith.MinnumfOp)(_float(F.binary))
    run_negf = impl(arith.NegfOp)(_float(F.binary))
    run_cmpf = impl(arith.CmpfOp)(_float(F.compare))
    run_extf = impl(arith.ExtFOp)(_float(F.convert))
    run_truncf = impl(arith.TruncFOp)(_float(F.convert))
    run_sitofp = impl(arith.SIToFPOp)(_float(F.convert))
    run_uitofp = impl(arith.UIToFPOp)(_float(F.convert))
    run_fptosi = impl(arith.FPToSIOp)(_float(F.convert))
    run_fptoui = impl(arith.FPToUIOp)(_float(F.convert))

    @impl(arith.BitcastOp)
    def run_bitcast(self, interp: Interpreter, op: arith.BitcastOp, args: PythonValues) -> PythonValues:
        return (bitcast(args[0], op.input.type, op.result.type),)


def select(cond: Value, a: Value, b: Value, t: Attribute) -> Value:
    if not isinstance(cond, np.ndarray):
        return a if cond else b
    dtype = dtype_of(t)
    lanes = cast(Lanes, cond)
    where = lanes[:, None] if isinstance(t, VectorType) else lanes
    return cast(Lanes, np.where(where, a, b)).astype(dtype, copy=False)


def bitcast(value: Value, src: Attribute, dst: Attribute) -> Value:
    """Reinterpret the bits (same total width), lane by lane."""
    src_dtype, dst_dtype = dtype_of(src), dtype_of(dst)
    if isinstance(value, np.ndarray):
        return cast(Lanes, value).astype(src_dtype, copy=False).view(dst_dtype)
    if not isinstance(dst, AnyFloat) and not isinstance(src, AnyFloat):
        return value
    return np.asarray(value, dtype=src_dtype).view(dst_dtype).item()

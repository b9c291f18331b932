"""The NVVM level's float arithmetic, computed as the PTX instruction each op lowers to.

LLVM IR leaves the bits of a NaN result unspecified (LangRef, "Behavior of Floating-Point
NaN values"), so numpy's NaN (the first NaN operand, quieted) is as good an answer as
any — but not the one the kernel gets. What runs is the PTX of the op, and PTX float
arithmetic returns the canonical NaN (H100, docs/silicon.md). Computing each op as that
instruction, with the same value semantics the PTX level decodes
(`interpreter/ptx/semantics.py`), makes the NVVM level and the PTX of both lowerings
(our backend's and llc-22's) agree bit for bit, NaNs included, with no special case.

Which instruction an op is, is our backend's instruction selection
(`backend/isel/arith.py`: `float_instruction`, `cmpf_comparison`); llc-22's NVPTX
lowering selects the same spelling for each
(no fast-math flags, f32 denormals kept: `add.rn.f32`, `div.rn.f32`, `max.NaN.f32`,
`cvt.rzi.s32.f32`, ...; `tests/test_float_lowering.py` runs every op through both and
compares). Where the selection is a sequence, so is the semantics here: f16 division
goes through f32 (`cvt.f32.f16`, `div.rn.f32`, `cvt.rn.f16.f32`), f64 `maximumf` and
`minimumf` (PTX has no `max.NaN.f64`) are the `setp`/`max`/`selp` expansion both emit,
and conversions from or to integers narrower than 16 bits go through 16 bits, as `cvt`
has no 8-bit or predicate register operand.

Not bit-exact, unverified: a warp-uniform float held as a Python scalar (constants) is a
float64, so a signalling f32/f16 NaN constant arrives quieted; lane arrays keep every bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import AnyFloat, Float16Type, Float32Type, Float64Type, VectorType
from xdsl.ir import Attribute, Operation

from xdsl_tmem.interpreter.values import UnsupportedValue, Value, width_of

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.base import Lanes

# The instruction selection (the backend, the ptx dialect) and the PTX value semantics (which
# load ml_dtypes, ~0.6 s) are imported by the functions that decode an op, when a kernel has
# float arithmetic: a kernel without any starts without them.

FloatFn = Callable[..., Value]
"""An op's semantics on NVVM-level values (Python scalars or lane arrays)."""


def element(t: Attribute) -> Attribute:
    """The element type of a vector type, else the type."""
    return cast(VectorType, t).get_element_type() if isinstance(t, VectorType) else t


def float_name(t: Attribute) -> str:
    """The PTX type of a float (or vector of floats) type: f16, f32, f64."""
    match element(t):
        case Float16Type():
            return "f16"
        case Float32Type():
            return "f32"
        case Float64Type():
            return "f64"
        case _:
            raise UnsupportedValue(
                f"float arithmetic on {t} is not supported at the NVVM level (f16, f32 and f64 only)"
            )


def _reader(t: str) -> Callable[[Value], Lanes]:
    """An NVVM-level value as an array of the PTX type `t`'s lane dtype (integers are
    unsigned-canonical at the NVVM level: read through their signed view)."""
    from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE

    dtype = LANE_DTYPE[t]
    if dtype.kind in "iu":
        container = np.dtype(f"u{dtype.itemsize}")
        return lambda a: np.asarray(a, container).view(dtype)
    return lambda a: np.asarray(a, dtype)


def instruction(opcode: str, modifiers: tuple[str, ...]) -> FloatFn:
    """One PTX instruction on NVVM-level values: lane arrays stay arrays, and a result of
    warp-uniform operands (Python scalars at the NVVM level) is a scalar again."""
    from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE
    from xdsl_tmem.interpreter.ptx.semantics import decode

    semantics = decode(opcode, modifiers)
    fn = semantics.fn
    readers = [_reader(t) for t in semantics.operands]
    result = LANE_DTYPE[semantics.results[0]]
    signed = result.kind == "i"
    unsigned = np.dtype(f"u{result.itemsize}")

    def run(*args: Value) -> Value:
        arrays = [read(a) for read, a in zip(readers, args, strict=True)]
        scalar = all(a.ndim == 0 for a in arrays)
        with np.errstate(all="ignore"):  # IEEE overflow and invalid: silicon's results, no warning
            out: Lanes = fn(*(a.reshape(1) for a in arrays)) if scalar else fn(*arrays)
        if signed:
            out = out.view(unsigned)
        return out[0].item() if scalar else out

    return run


def _divide_16(t: str) -> FloatFn:
    """f16 division: PTX has none; both lowerings divide in f32 and round once."""
    widen, divide = instruction("cvt", ("f32", t)), instruction("div", ("rn", "f32"))
    narrow = instruction("cvt", ("rn", t, "f32"))

    def run(a: Value, b: Value) -> Value:
        return narrow(divide(widen(a), widen(b)))

    return run


def _ieee_max_min_64(is_max: bool) -> FloatFn:
    """f64 maximumf/minimumf (NaN-propagating, -0 < +0): the expansion both lowerings emit
    in the absence of `max.NaN.f64` — `setp.nan`, `max`/`min`, then `selp` of the quiet
    NaN `0d7FF8000000000000`, and of an operand that is the preferred zero."""
    unordered = instruction("setp", ("nan", "f64"))
    plain = instruction("max" if is_max else "min", ("f64",))
    select = instruction("selp", ("f64",))
    same_bits = instruction("setp", ("eq", "b64"))
    equal = instruction("setp", ("eq", "f64"))
    preferred_zero = 0 if is_max else 1 << 63

    def run(a: Value, b: Value) -> Value:
        quiet = select(float("nan"), plain(a, b), unordered(a, b))
        bits = (_bits(a), _bits(b))
        pick_a = select(a, quiet, same_bits(bits[0], preferred_zero))
        pick_b = select(b, pick_a, same_bits(bits[1], preferred_zero))
        return select(pick_b, quiet, equal(quiet, 0.0))

    return run


def _bits(x: Value) -> Value:
    """The bits of an f64 value as an unsigned-canonical integer."""
    if isinstance(x, np.ndarray):
        return cast("Lanes", x).view(np.uint64)
    return int(np.asarray(x, np.float64).view(np.uint64))


def binary(op: Operation) -> FloatFn:
    """The semantics of a binary float op (or `negf`) on its result type."""
    from xdsl_tmem.backend.isel.arith import float_instruction

    t = float_name(op.results[0].type)
    selected = float_instruction(type(op))
    if selected is None:
        raise UnsupportedValue(f"{op.name} has no PTX instruction selection")
    opcode, modifiers = selected
    if opcode == "div" and t == "f16":
        return _divide_16(t)
    if "NaN" in modifiers and t == "f64":
        return _ieee_max_min_64(opcode == "max")
    return instruction(opcode, (*modifiers, t))


def compare(op: arith.CmpfOp) -> FloatFn:
    """`arith.cmpf` as `setp.<cmp>.<type>`; the constant predicates as constants."""
    from xdsl_tmem.backend.isel.arith import cmpf_comparison

    code = op.predicate.value.data
    cmp = cmpf_comparison(code)
    if cmp is None:  # false (0) and true (15)

        def constant(a: Value, b: Value) -> Value:
            return _constant_predicate(a, b, code == 15)

        return constant
    return instruction("setp", (cmp, float_name(op.lhs.type)))


def _constant_predicate(a: Value, b: Value, value: bool) -> Value:
    shape = np.broadcast(np.asarray(a), np.asarray(b)).shape
    return np.full(shape, value) if shape else value


def convert(op: Operation) -> FloatFn:
    """A float conversion (extf, truncf, fpext, sitofp, uitofp, fptosi, fptoui) as `cvt`:
    `.rn` where it rounds to a float, `.rzi` to an integer, none where it is exact."""
    src, dst = op.operands[0].type, op.results[0].type
    to_float = isinstance(element(dst), AnyFloat)
    if isinstance(element(src), AnyFloat) and to_float:
        s, d = float_name(src), float_name(dst)
        return instruction("cvt", (*(("rn",) if _bits_of(d) < _bits_of(s) else ()), d, s))
    if to_float:
        return _int_to_float(op, float_name(dst), signed=isinstance(op, arith.SIToFPOp | llvm.SIToFPOp))
    return _float_to_int(op, float_name(src), signed=isinstance(op, arith.FPToSIOp))


def _bits_of(t: str) -> int:
    from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE

    return LANE_DTYPE[t].itemsize * 8


def _int_to_float(op: Operation, d: str, signed: bool) -> FloatFn:
    w = width_of(element(op.operands[0].type))
    letter = "s" if signed else "u"
    cvt = instruction("cvt", ("rn", d, f"{letter}{max(w, 16)}"))
    if w >= 16:
        return cvt

    def widened(a: Value) -> Value:
        return cvt(_widen(a, w, signed))

    return widened


def _float_to_int(op: Operation, s: str, signed: bool) -> FloatFn:
    """`cvt.rzi` to the result's width, or to 16 bits and then its low bits (i8, i1)."""
    w = width_of(element(op.results[0].type))
    letter = "s" if signed else "u"
    cvt = instruction("cvt", ("rzi", f"{letter}{max(w, 16)}", s))
    if w >= 16:
        return cvt

    def truncated(a: Value) -> Value:
        return _truncate(cvt(a), w)

    return truncated


def _widen(a: Value, w: int, signed: bool) -> Value:
    """An unsigned-canonical i1/i8 as the 16-bit register `cvt` reads (sign- or zero-extended)."""
    v = np.asarray(a, np.int64)
    if signed:
        v = np.where(v >= 1 << (w - 1), v - (1 << w), v)
    out = (v & 0xFFFF).astype(np.uint16)
    return out if isinstance(a, np.ndarray) else int(out)


def _truncate(v: Value, w: int) -> Value:
    """The low `w` bits (w < 16) of a 16-bit result, unsigned-canonical (i1: a bool)."""
    low = np.asarray(v, np.uint64) & ((1 << w) - 1)
    out = low.astype(np.bool_ if w == 1 else np.uint8)
    if isinstance(v, np.ndarray):
        return out
    return bool(out) if w == 1 else int(out)


__all__ = ["binary", "compare", "convert", "float_name", "instruction"]

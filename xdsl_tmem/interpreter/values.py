"""Run-time values of one warp: a uniform Python scalar or a vector of 32 lanes.

Most values in a kernel are the same in every lane (loop counters, barrier
addresses, phases), so a scalar SSA value is kept as a Python `int` / `float` /
`bool` until something lane-dependent (`tid.x`, `laneid`, `elect.sync`) enters
it; from then on it is a numpy array of shape (32,). Integers are stored
unsigned-canonical: a value of `iN` is in [0, 2**N) (`i1` is a `bool`), so
arrays use numpy's unsigned dtypes and wrap exactly like the hardware. A value of
vector type `vector<n x T>` is always an array of shape (32, n).
"""

from __future__ import annotations

from typing import Any, TypeAlias, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    VectorType,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute

WARP = 32

Lanes: TypeAlias = NDArray[Any]
"""A (32,) array: one value per lane."""
Mask: TypeAlias = NDArray[np.bool_]
"""A (32,) bool array: the lanes an op runs in."""
Value: TypeAlias = Any
"""A scalar (`int`, `float`, `bool`), a lane array, or an opaque object (tmem values)."""

_UNSIGNED: dict[int, np.dtype[Any]] = {
    1: np.dtype(np.bool_),
    8: np.dtype(np.uint8),
    16: np.dtype(np.uint16),
    32: np.dtype(np.uint32),
    64: np.dtype(np.uint64),
}
_SIGNED: dict[int, np.dtype[Any]] = {
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}


class UnsupportedValue(ValueError):
    """A type the interpreter has no run-time representation for."""


def width_of(t: Attribute) -> int:
    """Bit width of an integer-like scalar type (index and pointers are 64-bit)."""
    if isinstance(t, IntegerType):
        return cast(IntegerType, t).bitwidth
    if isinstance(t, IndexType | LLVMPointerType):
        return 64
    raise UnsupportedValue(f"{t} is not an integer type")


def dtype_of(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype of one lane's element of a scalar or vector type."""
    if isinstance(t, VectorType):
        t = cast(VectorType, t).get_element_type()
    match t:
        case IntegerType() | IndexType() | LLVMPointerType():
            width = width_of(t)
            if width not in _UNSIGNED:
                raise UnsupportedValue(f"integers of width {width} are not supported (only 1, 8, 16, 32, 64)")
            return _UNSIGNED[width]
        case Float32Type():
            return np.dtype(np.float32)
        case Float16Type():
            return np.dtype(np.float16)
        case Float64Type():
            return np.dtype(np.float64)
        case BFloat16Type():
            raise UnsupportedValue("bf16 arithmetic is not supported (numpy has no bf16); use it only as MMA input")
        case other:
            raise UnsupportedValue(f"no run-time representation for values of type {other}")


def is_lanes(v: Value) -> bool:
    return isinstance(v, np.ndarray)


def uniform(v: Value, mask: Mask) -> Value | None:
    """The common value of `v` over the lanes in `mask`, or None if they differ."""
    if not isinstance(v, np.ndarray):
        return v
    active = cast(Lanes, v[mask])
    if active.size == 0:
        return None
    first = active[0]
    if (active == first).all():
        return first.item()
    return None


def merge(mask: Mask, new: Value, old: Value, t: Attribute) -> Value:
    """Per lane: `new` where `mask`, else `old` (the join after divergent control
    flow) for a value of type `t`."""
    both_scalar = not is_lanes(new) and not is_lanes(old)
    if (both_scalar and new == old) or bool(mask.all()):
        return new
    if not mask.any():
        return old
    try:
        dtype = dtype_of(t)
    except UnsupportedValue:
        raise UnsupportedValue(f"lanes disagree on a value of type {t}, which must be warp-uniform") from None
    where = mask[:, None] if isinstance(t, VectorType) else mask
    return np.where(where, cast(Lanes, new), cast(Lanes, old)).astype(dtype, copy=False)


def collapse(v: Value) -> Value:
    """A lane array whose lanes all agree, as a scalar. Applied after right shifts and
    divisions, where warp-uniform values (`tid.x >> 5`, the warp index) are born from
    lane-varying ones, so the address arithmetic built on them stays scalar and cheap."""
    if not isinstance(v, np.ndarray):
        return v
    lanes = cast(Lanes, v)
    if lanes.ndim == 1 and bool((lanes == lanes[0]).all()):
        return lanes[0].item()
    return lanes


def as_signed(v: Value, width: int) -> Value:
    """The two's-complement reading of an unsigned-canonical integer."""
    if isinstance(v, np.ndarray):
        return cast(Lanes, v).astype(_UNSIGNED[width], copy=False).view(_SIGNED[width])
    v = int(v)
    return v - (1 << width) if v >> (width - 1) else v


def canonical(v: Value, width: int) -> Value:
    """Wrap an integer result (Python int or array) to unsigned `width` bits."""
    if isinstance(v, np.ndarray):
        return cast(Lanes, v).astype(_UNSIGNED[width], copy=False)
    if width == 1:
        return bool(v & 1)
    return int(v) & ((1 << width) - 1)


def lane_list(mask: Mask) -> list[int]:
    return [int(i) for i in np.flatnonzero(mask)]


def format_lanes(mask: Mask) -> str:
    """`0-31`, `4`, `0-15,17` ..."""
    lanes = lane_list(mask)
    if not lanes:
        return "none"
    runs: list[str] = []
    start = prev = lanes[0]
    for lane in [*lanes[1:], -2]:
        if lane != prev + 1:
            runs.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = lane
        prev = lane
    return ",".join(runs)

"""Atomic read-modify-writes on the machine model's memories (PTX `atom` and `red`,
PTX ISA 9.0, atom/red), for any level that executes them (the PTX level; the NVVM level has
none to execute: xDSL 0.74's `llvm` dialect defines no `atomicrmw`/`cmpxchg`).

The lanes of a warp apply their operations one after another, in ascending lane order:
the PTX ISA orders the atomics of one instruction's threads in no particular way, and
this is the model's choice (an `atom` whose lanes hit one address returns the values
that order produces; silicon may return them in another order). Each access is checked
by `races.check_atomic`: atomics do not race with each other, only with plain accesses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xdsl_tmem.interpreter import races
from xdsl_tmem.interpreter.values import WARP, Lanes, UnsupportedValue, Value

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.executor import Warp

OPERATIONS = ("and", "or", "xor", "exch", "add", "inc", "dec", "min", "max", "cas")


def _at(value: Value, lane: int) -> Any:
    return value[lane] if isinstance(value, np.ndarray) else value


def _ftz(x: np.floating[Any]) -> np.floating[Any]:
    """A subnormal f32 flushed to zero of its sign."""
    if x != 0 and abs(x) < np.finfo(np.float32).tiny:
        return np.float32(np.copysign(0.0, x))
    return x


def apply(operation: str, dtype: np.dtype[Any], old: Any, b: Any, c: Any = None) -> Any:
    """The new value of a location holding `old` (PTX ISA 9.0, atom: integer arithmetic
    wraps; `inc`/`dec` count modulo `b + 1`; `.add.f32` rounds to nearest even and
    flushes subnormal inputs and results to sign-preserving zero, `.add.f64` rounds to
    nearest even; `cas` stores `c` where `old == b`)."""
    if dtype.kind == "f":
        if operation != "add":
            raise UnsupportedValue(f"atomic .{operation} of .{dtype} is not modelled")
        if dtype == np.float32:
            return _ftz(np.float32(_ftz(np.float32(old)) + _ftz(np.float32(b))))
        return np.float64(old) + np.float64(b)
    bits = 8 * dtype.itemsize
    mask = (1 << bits) - 1
    o, v = int(old), int(b)
    match operation:
        case "and":
            new = o & v
        case "or":
            new = o | v
        case "xor":
            new = o ^ v
        case "exch":
            new = v
        case "add":
            new = o + v
        case "inc":
            new = 0 if (o & mask) >= (v & mask) else o + 1
        case "dec":
            new = v if (o & mask) == 0 or (o & mask) > (v & mask) else o - 1
        case "min":
            new = min(o, v)
        case "max":
            new = max(o, v)
        case "cas":
            new = int(c) if o == v else o
        case _:
            raise UnsupportedValue(f"atomic operation .{operation} is not modelled")
    return np.array(new & mask, dtype=np.uint64).astype(f"u{dtype.itemsize}").view(dtype)[()]


def atomic(
    warp: Warp, op: Any, address: Value, operation: str, dtype: np.dtype[Any], b: Value, c: Value = None
) -> Lanes:
    """Each active lane, in ascending order, atomically replaces the `dtype` value at its
    address by `apply(operation, old, b, c)`; returns the old values (0 in other lanes)."""
    cluster = warp.cluster
    size = dtype.itemsize
    old = np.zeros(WARP, dtype=dtype)
    for lane in warp.active_lanes():
        where = int(_at(address, lane))
        if where % size:
            raise UnsupportedValue(
                f"an atomic of {size} bytes at 0x{where:x}, not {size}-byte aligned (the PTX ISA requires "
                "naturally aligned addresses; what the hardware does is not modelled)"
            )
        cell = cluster.read(where, size).view(dtype)
        races.check_atomic(warp, op, where, size)
        old[lane] = cell[0]
        cell[0] = apply(operation, dtype, cell[0], _at(b, lane), None if c is None else _at(c, lane))
    return old

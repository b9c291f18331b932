"""What every family of PTX value semantics shares: lane dtypes, the decoded form, errors.

A register is a numpy array of 32 lanes whose dtype follows the instruction type that
reads or writes it (`LANE_DTYPE`); packed types (`f16x2`, `e4m3x2`, ...) travel as the
unsigned integer of their container. A decoded instruction is a `Semantics`: the callable
and the PTX type of each operand and result, so that the interpreter can view its
registers once, when it pre-decodes a kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

import ml_dtypes
import numpy as np
from numpy.typing import NDArray

Lanes = NDArray[Any]
"""One value per lane (32 for a warp), dtype `LANE_DTYPE[type]`."""

LANE_DTYPE: dict[str, np.dtype[Any]] = {
    "pred": np.dtype(np.bool_),
    "b8": np.dtype(np.uint8),
    "u8": np.dtype(np.uint8),
    "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16),
    "u16": np.dtype(np.uint16),
    "s16": np.dtype(np.int16),
    "b32": np.dtype(np.uint32),
    "u32": np.dtype(np.uint32),
    "s32": np.dtype(np.int32),
    "b64": np.dtype(np.uint64),
    "u64": np.dtype(np.uint64),
    "s64": np.dtype(np.int64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    # packed: the bits of their container register
    "f16x2": np.dtype(np.uint32),
    "bf16x2": np.dtype(np.uint32),
    "tf32": np.dtype(np.uint32),
    "e4m3x2": np.dtype(np.uint16),
    "e5m2x2": np.dtype(np.uint16),
    "e2m3x2": np.dtype(np.uint16),
    "e3m2x2": np.dtype(np.uint16),
    "e2m1x2": np.dtype(np.uint8),
    "u16x2": np.dtype(np.uint32),
    "s16x2": np.dtype(np.uint32),
    # the carry flag (CC.CF) of the extended-precision instructions
    "cc": np.dtype(np.bool_),
}

SIGNED = frozenset({"s8", "s16", "s32", "s64"})
UNSIGNED = frozenset({"u8", "u16", "u32", "u64"})
BITS = frozenset({"b8", "b16", "b32", "b64"})
INTEGER = SIGNED | UNSIGNED | BITS
FLOAT = frozenset({"f16", "bf16", "f32", "f64", "f16x2", "bf16x2"})
NARROW = frozenset({"tf32", "e4m3x2", "e5m2x2", "e2m3x2", "e3m2x2", "e2m1x2"})
TYPES = INTEGER | FLOAT | NARROW | {"pred", "u16x2", "s16x2"}

WIDTH: dict[str, int] = {t: LANE_DTYPE[t].itemsize * 8 for t in LANE_DTYPE if t not in ("pred", "cc")}


class UnsupportedInstruction(Exception):
    """An opcode/modifier combination this model does not execute, and why."""

    def __init__(self, opcode: str, modifiers: tuple[str, ...], why: str) -> None:
        self.opcode = opcode
        self.modifiers = modifiers
        self.why = why
        super().__init__(f"{'.'.join((opcode, *modifiers))}: {why}")


@dataclass(frozen=True)
class Semantics:
    """A decoded instruction: `fn(*operands) -> result` (a tuple where it has several)."""

    fn: Callable[..., Any]
    operands: tuple[str, ...]
    """PTX type of each source operand, in PTX order (`cc` for a carry-in)."""
    results: tuple[str, ...]
    """PTX type of each result (`pred`/`cc` for predicates and carry-out)."""


@dataclass(frozen=True)
class Spelling:
    """An instruction's opcode and dotted modifiers, split into types and the rest."""

    opcode: str
    modifiers: tuple[str, ...]

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(m for m in self.modifiers if m in TYPES)

    @property
    def flags(self) -> frozenset[str]:
        return frozenset(m for m in self.modifiers if m not in TYPES)

    def fail(self, why: str) -> NoReturn:
        raise UnsupportedInstruction(self.opcode, self.modifiers, why)

    def only(self, allowed: Iterable[str]) -> frozenset[str]:
        """The non-type modifiers, after refusing any outside `allowed`."""
        allowed = frozenset(allowed)
        bad = sorted(self.flags - allowed)
        if bad:
            self.fail(f"modifier .{bad[0]} is not allowed here (allowed: {_list(allowed)})")
        rest = [m for m in self.modifiers if m not in TYPES]
        if len(set(rest)) != len(rest):
            self.fail("a modifier is repeated")
        return self.flags

    def one_type(self, allowed: Iterable[str]) -> str:
        allowed = frozenset(allowed)
        types = self.types
        if len(types) != 1:
            self.fail(f"expected one type modifier of {_list(allowed)}, got {len(types)}")
        if types[0] not in allowed:
            self.fail(f"type .{types[0]} is not allowed (allowed: {_list(allowed)})")
        return types[0]

    def two_types(self, dst: Iterable[str], src: Iterable[str]) -> tuple[str, str]:
        types = self.types
        if len(types) != 2:
            self.fail(f"expected a destination and a source type, got {len(types)} types")
        d, s = types
        if d not in frozenset(dst):
            self.fail(f"destination type .{d} is not allowed (allowed: {_list(dst)})")
        if s not in frozenset(src):
            self.fail(f"source type .{s} is not allowed with .{d} (allowed: {_list(src)})")
        return d, s

    def at_most_one(self, group: Iterable[str], what: str) -> str | None:
        hits = sorted(self.flags & frozenset(group))
        if len(hits) > 1:
            self.fail(f"more than one {what}: .{' .'.join(hits)}")
        return hits[0] if hits else None


def _list(items: Iterable[str]) -> str:
    return " ".join(f".{i}" for i in sorted(items)) or "none"


# Typed wrappers for the lambdas of the decoders: they give each parameter the type
# `Lanes` (for the type checker only; each returns its argument unchanged).
def fn1(f: Callable[[Lanes], Any]) -> Callable[[Lanes], Any]:
    return f


def fn2(f: Callable[[Lanes, Lanes], Any]) -> Callable[[Lanes, Lanes], Any]:
    return f


def fn3(f: Callable[[Lanes, Lanes, Lanes], Any]) -> Callable[[Lanes, Lanes, Lanes], Any]:
    return f


def fn4(f: Callable[[Lanes, Lanes, Lanes, Lanes], Any]) -> Callable[[Lanes, Lanes, Lanes, Lanes], Any]:
    return f


def fnv(f: Callable[..., Any]) -> Callable[..., Any]:
    return f

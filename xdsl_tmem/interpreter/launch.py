"""What a launch is: one typed description that the driver, `run_kernel`, exploration,
translation validation and tracing all take (docs/interpreter.md, "From Python")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict, Unpack, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.ir import Operation

from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter.tma import TensorMapArgument
from xdsl_tmem.interpreter.values import WARP

Dim = int | Sequence[int]
Dim3 = tuple[int, int, int]


class LaunchError(Exception):
    """A problem with the launch or the program found before running (exit code 1)."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.message = message
        self.op = op


class RacePolicy(StrEnum):
    """Which unordered conflicting accesses of shared and global memory are data races
    (races.py, docs/verification.md "Same-value writes")."""

    SAME_VALUE = "same-value"
    """All but a write of the bytes the write it races with left: every order of the two
    leaves the same bytes, as the PTX memory model (no data-race freedom required) has it;
    such races are counted and noted in the report."""
    STRICT = "strict"
    """All: the program must be data-race free."""


class Schedule(StrEnum):
    """How warps interleave at synchronisation points: round-robin, or random with a seed."""

    RR = "rr"
    RANDOM = "random"


@dataclass(frozen=True)
class BufferArgument:
    """The array a pointer parameter points to (the run works on a copy of it)."""

    value: NDArray[Any]


@dataclass(frozen=True)
class ScalarArgument:
    """The value of an integer or float parameter."""

    value: int | float | np.integer[Any] | np.floating[Any]


DTYPES: dict[str, np.dtype[Any]] = {
    name: np.dtype(numpy_name)
    for name, numpy_name in (
        ("f16", "float16"), ("f32", "float32"), ("f64", "float64"),
        ("i8", "int8"), ("i16", "int16"), ("i32", "int32"), ("i64", "int64"),
        ("u8", "uint8"), ("u16", "uint16"), ("u32", "uint32"), ("u64", "uint64"),
    )
}  # fmt: skip
"""The element types `--arg` and struct fields name (`f32`, `i32`, `u64`, ...)."""


@dataclass(frozen=True)
class PointerArgument:
    """A pointer (8 bytes): the global address of the buffer argument named `buffer`
    (None: a null pointer). A buffer that only pointers refer to needs no parameter of
    its own; it is an output under its name."""

    buffer: str | None


@dataclass(frozen=True)
class ScalarField:
    """A number stored in a byval struct as `dtype` (a key of `DTYPES`)."""

    value: int | float
    dtype: str

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise LaunchError(f"struct field type '{self.dtype}' is unknown (use one of {', '.join(DTYPES)})")


StructField = PointerArgument | ScalarField


@dataclass(frozen=True)
class StructArgument:
    """A byval struct or array parameter (`.param .align 8 .b8 p[8]`), laid out from its
    fields: byte offset → a pointer or a typed scalar. Bytes no field covers are zero.
    Each field must lie inside the parameter and at a multiple of its own size."""

    fields: Mapping[int, StructField]


Argument = BufferArgument | ScalarArgument | PointerArgument | StructArgument | TensorMapArgument
"""A kernel argument. A `TensorMapArgument` (interpreter/tma.py) describes a byval
`CUtensorMap` parameter over a buffer argument (docs/tma.md)."""


@dataclass(frozen=True)
class Limits:
    """When a run or an exploration stops unfinished."""

    max_steps: int = 10_000_000
    """Warp-instructions of the whole launch (exit code 4)."""
    max_states: int = 1_000_000
    """Distinct states of an exhaustive exploration."""
    max_memory: int = 4 << 30
    """Bytes the states of an exhaustive exploration may take."""


@dataclass(frozen=True)
class Geometry:
    """Launch dimensions (x, y, z) after they are checked against the kernel."""

    block: Dim3
    grid: Dim3 = (1, 1, 1)
    cluster: Dim3 = (1, 1, 1)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps(self) -> int:
        return (self.threads + WARP - 1) // WARP


@dataclass(frozen=True)
class Launch:
    """A kernel, its dimensions and arguments, the schedule, limits and fence policy."""

    kernel: str
    block: Dim3
    grid: Dim3 | None = None
    """None: one cluster."""
    cluster: Dim3 = (1, 1, 1)
    """(1, 1, 1) also stands for the kernel's `nvvm.cluster_dim` where it declares one."""
    arguments: Mapping[str, Argument] = field(default_factory=dict[str, Argument])
    """By parameter name (or `arg0`, `arg1`, ...)."""
    schedule: Schedule = Schedule.RR
    seed: int = 0
    """The seed of `Schedule.RANDOM` (the first seed of a random exploration)."""
    limits: Limits = Limits()
    fence_policy: FencePolicy = FencePolicy.STRICT
    """The happens-before model of the hazard checks (hazards.py)."""
    dynamic_shared_bytes: int = 0
    """The size of a PTX kernel's dynamic shared memory (`.extern .shared` arrays), as
    `cudaLaunchKernel`'s `sharedMem` gives it."""
    race_policy: RacePolicy = RacePolicy.SAME_VALUE
    """Whether a same-value write-write race is one (races.py)."""

    @staticmethod
    def create(kernel: str, **options: Unpack[LaunchOptions]) -> Launch:
        """A launch from `run_kernel`'s keywords, checked as it documents: every error is
        a `LaunchError`."""
        return _create(kernel, options)


class LaunchOptions(TypedDict, total=False):
    """`run_kernel`'s launch keywords (docs/interpreter.md)."""

    block: Dim
    """Required unless the kernel fixes it (`.reqntid`, `nvvm.reqntid`): `run_kernel`."""
    grid: Dim | None
    cluster: Dim
    args: Mapping[str, Any] | None
    schedule: str
    seed: int
    max_steps: int
    fence_policy: str
    dynamic_shared_bytes: int
    race_policy: str


def _create(kernel: str, options: LaunchOptions) -> Launch:
    schedule = options.get("schedule", "rr")
    if schedule not in ("rr", "random"):
        raise LaunchError(f"unknown schedule '{schedule}' (use rr or random)")
    policy = options.get("fence_policy", "strict")
    if policy not in ("strict", "mojo"):
        raise LaunchError(f"unknown fence policy '{policy}' (use strict or mojo)")
    race_policy = options.get("race_policy", RacePolicy.SAME_VALUE.value)
    if race_policy not in tuple(RacePolicy):
        raise LaunchError(f"unknown race policy '{race_policy}' (use {' or '.join(RacePolicy)})")
    if "block" not in options:
        raise LaunchError("the block is not given (block=N or (X, Y, Z))")
    block = dim3(options["block"], "block")
    grid = options.get("grid")
    grid = dim3(grid, "grid") if grid is not None else None
    dynamic = options.get("dynamic_shared_bytes", 0)
    if not isinstance(dynamic, int) or dynamic < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise LaunchError(f"dynamic_shared_bytes must be a non-negative integer, got {dynamic!r}")
    return Launch(
        kernel,
        block,
        grid,
        dim3(options.get("cluster", 1), "cluster"),
        arguments(options.get("args") or {}),
        Schedule(schedule),
        options.get("seed", 0),
        Limits(max_steps=options.get("max_steps", Limits.max_steps)),
        FencePolicy(policy),
        dynamic,
        RacePolicy(race_policy),
    )


def dim3(value: Dim, what: str) -> Dim3:
    """1 to 3 positive integers, padded with 1s."""
    dims = [value] if isinstance(value, int) else list(value)
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LaunchError(f"{what} must be 1 to 3 positive integers, got {value!r}")
    dims += [1] * (3 - len(dims))
    return dims[0], dims[1], dims[2]


def argument(name: str, value: object) -> Argument:
    """A numpy array (for a pointer parameter), a number, or an `Argument` as it is."""
    if isinstance(value, BufferArgument | ScalarArgument | PointerArgument | StructArgument | TensorMapArgument):
        return value
    if isinstance(value, np.ndarray):
        return BufferArgument(cast(NDArray[Any], value))
    if isinstance(value, int | float | np.integer | np.floating):
        return ScalarArgument(cast(int | float | np.integer[Any] | np.floating[Any], value))
    raise LaunchError(
        f"argument '{name}' must be a numpy array (for a pointer), a number, a PointerArgument, a "
        f"StructArgument or a TensorMapArgument, got {value!r}"
    )


def arguments(values: Mapping[str, object]) -> dict[str, Argument]:
    return {name: argument(name, value) for name, value in values.items()}

"""What an op *is*, for the interpreter's scheduler and the backend's uniformity
analysis, declared as xDSL traits on the op classes (`traits = traits_def(...)`).

Scheduling (interpreter/executor.py, interpreter/explore.py):

* `SyncPoint`: the op touches state other warps see (shared/global memory, TMEM,
  barriers), so its order relative to other warps matters: warps interleave before it
  (the "visible" points).
* `Synchronizes` (a `SyncPoint`): it waits, arrives, or allocates: for a race-free
  program, interleaving only here reaches every outcome (the "barriers" points, where
  exhaustive exploration branches).
* `Atomic` (a `Synchronizes`): an atomic read-modify-write; atomics do not race with
  each other, only with plain accesses.
* `ThreadBarrier` (a `Synchronizes`): a named or cluster barrier; its steps commute
  with every other agent's steps (arrivals only count).
* `WarpLocal`: none of the above: it reads and writes only the warp's own values.
  xDSL's `Pure` counts as `WarpLocal` too.

Uniformity (backend/uniformity.py):

* `UniformResult`: every result is the same in each lane of a warp, whatever the operands.
* `UniformPreserving`: results are functions of the operands (uniform if they all are).
* `LaneVarying`: results may differ between lanes even for uniform operands.

Upstream ops (xDSL's arith, llvm, vector, ...) cannot be annotated here: their traits are
kept in the one table `UPSTREAM_TRAITS` below, keyed by op name.
"""

from __future__ import annotations

from functools import cache

from xdsl.ir import Operation
from xdsl.traits import OpTrait, Pure


class SyncPoint(OpTrait):
    """Warps interleave before this op (it touches state other warps see)."""


class Synchronizes(SyncPoint):
    """A wait, arrival or allocation: exhaustive exploration branches before it."""


class Atomic(Synchronizes):
    """An atomic read-modify-write (`atom`, `red`): its accesses do not race with other
    atomics' (interpreter/races.py), and the order of atomics decides what they return
    (and a float sum's bits), so exploration branches before it."""


class ThreadBarrier(Synchronizes):
    """A named or cluster barrier: its steps commute with other agents' steps."""


class WarpLocal(OpTrait):
    """Not a scheduling point: only the warp's own values are read and written."""


class PtxLevelOnly(OpTrait):
    """The NVVM-level interpreter does not run this op yet; the PTX level runs what it
    selects to. xdsl-tmem-run refuses it at the op before running."""


class UniformResult(OpTrait):
    """Results are the same in every lane of a warp, whatever the operands."""


class UniformPreserving(OpTrait):
    """Results are functions of the operands: uniform when every operand is."""


class LaneVarying(OpTrait):
    """Results may differ between the lanes of a warp."""


UPSTREAM_TRAITS: dict[str, tuple[type[OpTrait], ...]] = {
    "llvm.load": (SyncPoint, UniformPreserving),  # uniform only when non-atomic (uniformity.py)
    "llvm.store": (SyncPoint,),
    "arith.constant": (UniformResult,),
    "llvm.mlir.constant": (UniformResult,),
    "llvm.mlir.addressof": (UniformResult,),
    "llvm.mlir.zero": (UniformResult,),
    **{
        f"llvm.{op}": (UniformPreserving,)
        for op in (
            "add", "sub", "mul", "sdiv", "udiv", "srem", "urem",
            "and", "or", "xor", "shl", "lshr", "ashr",
            "icmp", "fcmp", "select",
            "zext", "sext", "trunc", "bitcast", "inttoptr", "ptrtoint", "getelementptr",
            "fadd", "fsub", "fmul", "fdiv", "frem", "fneg",
            "sitofp", "fpext", "fptrunc",
            "extractvalue", "insertvalue",
        )
    },
    "vector.extract": (UniformPreserving,),
}  # fmt: skip
"""Traits of upstream ops we cannot annotate, keyed by op name (so that importing the
traits imports none of those dialects: start-up); every other upstream op is `WarpLocal`
and `LaneVarying` unless it is an `arith` op (all `UniformPreserving`, uniformity.py)."""


@cache
def declares(op_type: type[Operation], trait: type[OpTrait]) -> bool:
    """Whether the op class declares `trait` (or a subclass of it), on the class or in
    `UPSTREAM_TRAITS`."""
    if op_type.has_trait(trait):
        return True
    return any(issubclass(t, trait) for t in UPSTREAM_TRAITS.get(op_type.name, ()))


def is_sync_point(op_type: type[Operation], points: str = "visible") -> bool:
    """Whether warps interleave before the op: at every `SyncPoint` ("visible") or only
    at `Synchronizes` ones ("barriers")."""
    return declares(op_type, SyncPoint if points == "visible" else Synchronizes)


def is_scheduling_classified(op_type: type[Operation]) -> bool:
    """Exactly one of sync point / warp-local (`Pure` counts as warp-local)."""
    local = declares(op_type, WarpLocal) or op_type.has_trait(Pure)
    return local != declares(op_type, SyncPoint)

"""Checks shared by the `tmem` and `nvvm` verifiers.

The PTX facts behind them are in `docs/ptx-nvvm.md` (cited per check).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import DenseArrayBase, IntAttr, IntegerAttr
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

SHARED_PTR = llvm.LLVMPointerType(IntAttr(3))
"""`!llvm.ptr<3>`: a shared::cta address (barriers, the TMEM address slot)."""

TMEM_PTR = llvm.LLVMPointerType(IntAttr(6))
"""`!llvm.ptr<6>`: a tensor-memory address (lane << 16 | column)."""

TMEM_COLUMNS = 512
TMEM_LANES = 128
MAX_MBARRIER_COUNT = (1 << 20) - 1
"""mbarrier.init count range is 1 .. 2^20-1 (docs/ptx-nvvm.md §1.9)."""


class NamedErrorOp(IRDLOperation, ABC):
    """Base of the tmem and nvvm op bases: `self.error(message)` is a verifier error
    whose message starts with the op's name, as every message of ours does."""

    def error(self, message: str) -> VerifyException:
        return VerifyException(f"{self.name}: {message}")


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def check_cta_group(cta_group: int) -> str | None:
    if cta_group not in (1, 2):
        return f"cta_group must be 1 or 2, got {cta_group}"
    return None


def check_alloc_columns(ncols: int, what: str = "ncols") -> str | None:
    """ptxas: alloc ncols is a power of two in [32, 512] (docs/ptx-nvvm.md §1.3, verified)."""
    if not (32 <= ncols <= TMEM_COLUMNS and is_power_of_two(ncols)):
        return f"{what} must be a power of two in [32, 512], got {ncols}"
    return None


def check_arrival_count(what: str, count: int) -> str | None:
    if not 1 <= count <= MAX_MBARRIER_COUNT:
        return f"{what} must be in [1, {MAX_MBARRIER_COUNT}] (mbarrier count range), got {count}"
    return None


def constant_int(value: SSAValue) -> int | None:
    """The value of `value` if an `arith.constant` or `llvm.mlir.constant` defines it."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def enclosing_function(op: Operation) -> Operation | None:
    """The nearest enclosing `llvm.func` or `func.func`."""
    current = op.parent_op()
    while current is not None and not isinstance(current, llvm.FuncOp | func.FuncOp):
        current = current.parent_op()
    return current


def function_name(fn: Operation) -> str:
    if isinstance(fn, llvm.FuncOp | func.FuncOp):
        return "@" + fn.sym_name.data
    return fn.name


def max_threads_per_block(fn: Operation) -> int | None:
    """Threads per block fixed by `nvvm.maxntid` / `nvvm.reqntid`, if the kernel has one."""
    for key in ("nvvm.reqntid", "nvvm.maxntid"):
        attr = fn.attributes.get(key)
        if isinstance(attr, DenseArrayBase):
            total = 1
            for dim in attr.get_values():
                total *= int(dim)
            return total
    return None


class CtaGroupUser(Operation, ABC):
    """An op whose PTX carries a `.cta_group::N` qualifier (or implies one).

    ptxas rejects a function that uses both cta_group::1 and cta_group::2
    (docs/ptx-nvvm.md §4, verified); `verify_single_cta_group` catches it first.
    """

    @abstractmethod
    def used_cta_group(self) -> int | None: ...


def _cta_group_users(fn: Operation) -> Iterator[tuple[Operation, int]]:
    for op in fn.walk():
        if isinstance(op, CtaGroupUser) and (group := op.used_cta_group()) is not None:
            yield op, group


def verify_single_cta_group(op: CtaGroupUser) -> None:
    """Raise if `op`'s function already uses the other cta_group."""
    group = op.used_cta_group()
    fn = enclosing_function(op)
    if group is None or fn is None:
        return
    for other, other_group in _cta_group_users(fn):
        if other_group != group:
            raise VerifyException(
                f"{op.name}: function {function_name(fn)} mixes cta_group {other_group} "
                f"(first used by {other.name}) and cta_group {group}; ptxas rejects a "
                "function that uses both"
            )
        break

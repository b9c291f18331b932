"""`lower-tmem`: the whole tmem → nvvm + llvm + arith + scf lowering in one pass."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from xdsl_tmem.fence_policy import FencePolicy, fence_policy
from xdsl_tmem.passes.convert_tmem_to_nvvm import ConvertTmemToNvvmPass
from xdsl_tmem.passes.expand_tmem_regions import ExpandTmemRegionsPass


@dataclass(frozen=True)
class LowerTmemPass(ModulePass):
    """`tmem-expand-regions`, then `convert-tmem-to-nvvm`, then CSE of the constants and
    address arithmetic the patterns emit per op."""

    name = "lower-tmem"

    fence_policy: str = FencePolicy.STRICT.value
    """`strict` (default) or `mojo`; see `convert-tmem-to-nvvm`."""

    def __post_init__(self) -> None:
        fence_policy(self.fence_policy)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ExpandTmemRegionsPass().apply(ctx, op)
        ConvertTmemToNvvmPass(self.fence_policy).apply(ctx, op)
        CommonSubexpressionElimination().apply(ctx, op)

"""Every op of every dialect we register declares its scheduling and uniformity traits
(dialects/traits.py); the interpreter and the backend read nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_interpreter
from gemm_reference import parse
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.traits import Pure
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from xdsl_tmem.dialects import llvm_ext, nvvm, tmem
from xdsl_tmem.dialects.traits import (
    UPSTREAM_TRAITS,
    LaneVarying,
    Synchronizes,
    SyncPoint,
    ThreadBarrier,
    UniformPreserving,
    UniformResult,
    WarpLocal,
    declares,
    is_sync_point,
)
from xdsl_tmem.interpreter.executor import Program
from xdsl_tmem.interpreter.run import default_functions
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.tools.run import make_context

OURS: list[type[Operation]] = [*tmem.Tmem.operations, *nvvm.NVVM.operations, *llvm_ext.LLVM_EXTENSION_OPS]
BACKEND: list[type[Operation]] = [*nvvm.NVVM.operations, *llvm_ext.LLVM_EXTENSION_OPS]


@pytest.mark.parametrize("op", OURS, ids=lambda op: op.__name__)
def test_every_op_is_sync_point_or_warp_local(op: type[Operation]) -> None:
    local = op.has_trait(WarpLocal) or op.has_trait(Pure)
    assert local != op.has_trait(SyncPoint), f"{op.__name__}: declare exactly one of SyncPoint / WarpLocal (or Pure)"


@pytest.mark.parametrize("op", BACKEND, ids=lambda op: op.__name__)
def test_every_backend_op_declares_its_uniformity(op: type[Operation]) -> None:
    declared = [t.__name__ for t in (UniformResult, UniformPreserving, LaneVarying) if op.has_trait(t)]
    assert len(declared) == 1, f"{op.__name__}: {declared}"


def test_upstream_traits_name_stock_ops() -> None:
    # The table is keyed by name (importing it loads no dialect): each key is a stock op.
    from xdsl.dialects import arith, llvm, vector

    stock = {op.name: op for dialect in (arith.Arith, llvm.LLVM, vector.Vector) for op in dialect.operations}
    assert set(UPSTREAM_TRAITS) <= set(stock)
    assert declares(llvm.LoadOp, SyncPoint)
    assert declares(llvm.GEPOp, UniformPreserving)
    assert declares(vector.ExtractOp, UniformPreserving)
    assert not declares(llvm.CallOp, UniformPreserving)


def test_trait_hierarchy() -> None:
    """A thread barrier synchronises, and what synchronises is a sync point."""
    for op in OURS:
        if op.has_trait(ThreadBarrier):
            assert op.has_trait(Synchronizes)
        if op.has_trait(Synchronizes):
            assert op.has_trait(SyncPoint)
            assert is_sync_point(op, "barriers")
            assert is_sync_point(op)


def test_mbarrier_waits_and_arrivals_synchronize() -> None:
    """PTX ISA §9.7.13.15 (mbarrier): arrive and wait ops order threads, so the explorer
    must branch before them; init only writes the barrier (a plain sync point)."""
    for op in nvvm.NVVM.operations:
        name = op.name
        if name.startswith("nvvm.mbarrier.") and name != "nvvm.mbarrier.init":
            assert op.has_trait(Synchronizes), name
    assert nvvm.MBarrierInitOp.has_trait(SyncPoint)
    assert not nvvm.MBarrierInitOp.has_trait(Synchronizes)


def test_special_registers_lane_identity_varies() -> None:
    """PTX ISA §10 (special registers): %tid, %laneid and %lanemask_* differ between the
    lanes of a warp; %ctaid, %ntid, %nctaid and the cluster registers do not."""
    for op in nvvm.NVVM.operations:
        sreg = op.name.removeprefix("nvvm.read.ptx.sreg.")
        if sreg.startswith(("tid.", "laneid", "lanemask")):
            assert not declares(op, UniformResult), op.name
        if sreg.startswith(("ctaid.", "ntid.", "nctaid.", "clusterid.", "nclusterid.", "cluster.ctarank")):
            assert declares(op, UniformResult), op.name


def test_interpreter_sync_points_come_from_traits() -> None:
    """Every op the interpreter implements is scheduled as its class declares."""
    for points in ("visible", "barriers"):
        program = Program(ModuleOp([]), default_functions(), points)
        for op_type, (_, _, _, sync) in program.table.items():
            assert sync == is_sync_point(op_type, points), op_type.__name__
        assert any(sync for *_, sync in program.table.values())


# --------------------------------------------------------------------------------------
# Pure tmem ops: xDSL's CSE and DCE apply to tmem IR and keep every example's behaviour
# --------------------------------------------------------------------------------------


def _cse_dce(module: ModuleOp) -> ModuleOp:
    ctx = make_context()
    CommonSubexpressionElimination().apply(ctx, module)
    DeadCodeElimination().apply(ctx, module)
    module.verify()
    return module


def _load_cse_dce(path: Path, lowered: bool = False, policy: str = "strict") -> ModuleOp:
    module = _cse_dce(parse(path.read_text()))
    if lowered:
        LowerTmemPass(fence_policy=policy).apply(make_context(), module)
        module.verify()
    return module


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
@pytest.mark.parametrize("example", ["test_matmul_cg1", "test_matmul_cg2", "test_blockwise_fp8"])
def test_cse_dce_keep_example_results(monkeypatch: pytest.MonkeyPatch, example: str, lowered: bool) -> None:
    """The interpreter tests' numpy expectations hold for every example after `cse` and
    `dce` at the tmem level."""
    monkeypatch.setattr(test_interpreter, "load", _load_cse_dce)
    getattr(test_interpreter, example)(lowered, "random", 1)


def test_cse_merges_and_dce_drops_pure_stage_queries() -> None:
    """MLIR semantics of `Pure`: two identical pure ops on the same operands are one
    (CSE), and a pure op whose result is unused goes (DCE)."""
    module = parse(
        """
        func.func @f(%s: !tmem.tmem_stage<2, 256, 1>) -> (i32, i32) {
          %a = tmem.tmem_stage.offset %s : !tmem.tmem_stage<2, 256, 1>
          %b = tmem.tmem_stage.offset %s : !tmem.tmem_stage<2, 256, 1>
          %unused = tmem.tmem_stage.index %s : !tmem.tmem_stage<2, 256, 1>
          func.return %a, %b : i32, i32
        }
        """
    )
    _cse_dce(module)
    names = [op.name for op in module.walk()]
    assert names.count("tmem.tmem_stage.offset") == 1
    assert "tmem.tmem_stage.index" not in names

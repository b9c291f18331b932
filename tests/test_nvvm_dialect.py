"""The nvvm dialect's Python side: builders, properties, cta_group bookkeeping.

Ops built with the Python builders print text that mlir-opt-22 reads and prints
back unchanged (the tmem lowering builds its NVVM this way).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from external import Upstream
from support import OptResult
from xdsl.dialects import llvm, test
from xdsl.dialects.builtin import IntAttr, IntegerAttr, IntegerType, ModuleOp, VectorType, i1, i16, i32, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.llvm_ext import ConstantRangeAttr
from xdsl_tmem.dialects.nvvm import (
    CTAGroupKindAttr,
    MemScopeKind,
    ProxyKind,
    SharedSpace,
    Tcgen05CpMulticast,
    Tcgen05CpShape,
    Tcgen05FenceKind,
    Tcgen05LdStShape,
    Tcgen05MMACollectorOp,
    Tcgen05MMAKind,
    Tcgen05WaitKind,
)
from xdsl_tmem.universe import make_context

RunOpt = Callable[..., OptResult]
_SSA = re.compile(r"%[\w.$#:-]+")

SHARED = LLVMPointerType(IntAttr(3))
TMEM = LLVMPointerType(IntAttr(6))
GENERIC = LLVMPointerType()


def values(*types: object) -> tuple[test.TestOp, list[SSAValue]]:
    source = test.TestOp(result_types=list(types))  # pyright: ignore[reportArgumentType]
    return source, list(source.results)


def build_all() -> list[Operation]:
    source, (slot, t, at, desc, idesc, en, mask16, n, ph, v16, v4, pred, gptr) = values(
        SHARED,
        TMEM,
        TMEM,
        i64,
        i32,
        i1,
        i16,
        i32,
        i32,
        VectorType(i32, [16]),
        VectorType(i32, [4]),
        i1,
        GENERIC,
    )
    off = llvm.ConstantOp(IntegerAttr(2, i64), i64)
    ld = nvvm.Tcgen05LdOp(t, Tcgen05LdStShape.SHAPE_16X256B, VectorType(i32, [16]))
    arrive = nvvm.MBarrierArriveOp(slot, has_state=True)
    return [
        source,
        off,
        nvvm.Tcgen05AllocOp(slot, n),
        nvvm.Tcgen05RelinquishAllocPermitOp(),
        nvvm.Tcgen05FenceOp(Tcgen05FenceKind.BEFORE),
        nvvm.Barrier0Op(),
        nvvm.Tcgen05FenceOp(Tcgen05FenceKind.AFTER),
        ld,
        nvvm.Tcgen05LdOp(t, Tcgen05LdStShape.SHAPE_16X32BX2, VectorType(i32, [2]), off.results[0], pack=True),
        nvvm.Tcgen05WaitOp(Tcgen05WaitKind.LOAD),
        nvvm.Tcgen05StOp(t, v16, Tcgen05LdStShape.SHAPE_16X256B, unpack=True),
        nvvm.Tcgen05WaitOp(Tcgen05WaitKind.STORE),
        nvvm.Tcgen05MMAOp(nvvm.Tcgen05MMAForm(1, Tcgen05MMAKind.F16), t, desc, desc, idesc, en),
        nvvm.Tcgen05MMAOp(
            nvvm.Tcgen05MMAForm(1, Tcgen05MMAKind.TF32, Tcgen05MMACollectorOp.LASTUSE, ashift=True),
            t,
            at,
            desc,
            idesc,
            en,
            disable_output_lane=v4,
        ),
        nvvm.Tcgen05CommitOp(slot),
        nvvm.Tcgen05CommitOp(slot, mask16),
        nvvm.Tcgen05CpOp(t, desc, Tcgen05CpShape.SHAPE_64X128B, multicast=Tcgen05CpMulticast.WARPX2_01_23),
        nvvm.Tcgen05ShiftOp(t),
        nvvm.Tcgen05DeallocOp(t, n),
        nvvm.MBarrierInitOp(slot, n),
        nvvm.MBarrierInitOp(gptr, n, pred),
        nvvm.FenceMbarrierInitOp(),
        arrive,
        nvvm.MBarrierArriveOp(slot, n, scope=MemScopeKind.CLUSTER, relaxed=True),
        nvvm.MBarrierArriveExpectTxOp(slot, n, has_state=True),
        nvvm.MBarrierExpectTxOp(slot, n),
        nvvm.MBarrierTryWaitParityOp(slot, ph, n),
        nvvm.MBarrierTryWaitOp(slot, arrive.results[0]),
        nvvm.MBarrierTestWaitOp(slot, ph, relaxed=True),
        nvvm.FenceProxyOp(ProxyKind.ASYNC_SHARED, SharedSpace.CTA),
        nvvm.BarrierOp(n, n),
        nvvm.BarrierArriveOp(n, n),
        nvvm.SyncWarpOp(n),
        nvvm.ElectSyncOp(),
        nvvm.MapaOp(slot, n),
        nvvm.ThreadIdXOp(range=(0, 160)),
        nvvm.LaneIdOp(),
        nvvm.ClusterCtaRankOp(),
        nvvm.Clock64Op(),
    ]


def test_built_ops_verify_and_print_upstream_text(run_opt: RunOpt, upstream: Upstream) -> None:
    module = ModuleOp(build_all())
    module.verify()
    printed = str(module)
    result = run_opt(printed, "--allow-unregistered-dialect")
    assert result.code == 0, result.err
    reprinted = upstream.parse(printed, "--allow-unregistered-dialect")
    ours = [_SSA.sub("%_", line.strip()) for line in printed.splitlines() if "nvvm." in line]
    theirs = [_SSA.sub("%_", line.strip()) for line in reprinted.splitlines() if "nvvm." in line]
    assert ours == theirs
    assert len(ours) == 37


def test_properties_are_sorted_with_defaults() -> None:
    _, (t, desc, idesc, en) = values(TMEM, i64, i32, i1)
    mma = nvvm.Tcgen05MMAOp(nvvm.Tcgen05MMAForm(2, Tcgen05MMAKind.I8, ashift=True), t, desc, desc, idesc, en)
    assert list(mma.properties) == sorted(mma.properties)
    assert list(mma.properties) == [
        "aShift",
        "collectorOp",
        "ctaGroup",
        "kind",
        "operandSegmentSizes",
    ]
    commit = nvvm.Tcgen05CommitOp(t)
    assert commit.group == CTAGroupKindAttr.from_int(1)


def test_used_cta_group() -> None:
    _, (s, t, d, i, b) = values(SHARED, TMEM, i64, i32, i1)
    cases: list[tuple[nvvm.NVVMOp, int]] = [
        (nvvm.Tcgen05AllocOp(s, i, 2), 2),
        (nvvm.Tcgen05DeallocOp(t, i), 1),
        (nvvm.Tcgen05RelinquishAllocPermitOp(2), 2),
        (nvvm.Tcgen05CommitOp(s, cta_group=2), 2),
        (nvvm.Tcgen05CpOp(t, d, Tcgen05CpShape.SHAPE_128X256B), 1),
        (nvvm.Tcgen05ShiftOp(t, 2), 2),
        (nvvm.Tcgen05MMAOp(nvvm.Tcgen05MMAForm(2, Tcgen05MMAKind.F16), t, d, d, i, b), 2),
    ]
    for op, group in cases:
        assert isinstance(op, nvvm.CtaGroupUser)
        assert op.used_cta_group() == group, op.name


def test_cta_group_attr_rejects_other_groups() -> None:
    with pytest.raises(ValueError, match="cta_group must be 1 or 2, got 3"):
        CTAGroupKindAttr.from_int(3)


def test_builder_op_with_bad_register_count_fails_verification() -> None:
    _, (t,) = values(TMEM)
    op = nvvm.Tcgen05LdOp(t, Tcgen05LdStShape.SHAPE_16X128B, i32)
    with pytest.raises(VerifyException, match=r"shape_16x128b needs 2 x num registers"):
        op.verify()


def test_registers_per_num_is_the_spec_table() -> None:
    # docs/ptx-nvvm.md §1.4: m = 1 (32x32b, 16x64b, 16x32bx2), 2 (16x128b), 4 (16x256b)
    assert {s.value: s.registers_per_num for s in Tcgen05LdStShape} == {
        "shape_16x64b": 1,
        "shape_16x128b": 2,
        "shape_16x256b": 4,
        "shape_32x32b": 1,
        "shape_16x32bx2": 1,
    }


def test_constant_range_wraps_like_mlir() -> None:
    # mlir-opt-22 prints `range <i8, 200, 5>` as `range <i8, -56, 5>`
    attr = ConstantRangeAttr(IntegerType(8), 200, 5)
    assert str(attr) == "#llvm.constant_range<i8, -56, 5>"


def test_inherent_attributes_in_the_attr_dict_are_properties(run_opt: RunOpt, upstream: Upstream) -> None:
    text = (
        "llvm.func @f(%p: !llvm.ptr<3>, %t: !llvm.ptr<6>) {\n"
        '  "nvvm.tcgen05.commit"(%p) {group = #nvvm.cta_group<cta_2>} : (!llvm.ptr<3>) -> ()\n'
        '  %v = "nvvm.tcgen05.ld"(%t) {pack, shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>}'
        " : (!llvm.ptr<6>) -> i32\n"
        "  llvm.return\n}\n"
    )
    generic = run_opt(text, "--print-op-generic")
    assert generic.code == 0, generic.err
    expected = upstream.parse(text, "--mlir-print-op-generic")
    for line in (
        '"nvvm.tcgen05.commit"(%p) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<3>) -> ()',
        '"nvvm.tcgen05.ld"(%t) <{pack, shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>}>',
    ):
        assert line in generic.out
        assert line.replace("%p", "%arg0").replace("%t", "%arg1") in expected


@pytest.mark.parametrize(
    ("attributes", "form"),
    [
        (
            "{kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>}",
            nvvm.Tcgen05MMAForm(1, Tcgen05MMAKind.F16, Tcgen05MMACollectorOp.DISCARD, False),
        ),
        (
            "{aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, "
            "kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_2>}",
            nvvm.Tcgen05MMAForm(2, Tcgen05MMAKind.I8, Tcgen05MMACollectorOp.LASTUSE, True),
        ),
    ],
)
def test_mma_form_is_the_qualifiers_of_the_text(attributes: str, form: nvvm.Tcgen05MMAForm, upstream: Upstream) -> None:
    """`Tcgen05MMAOp.form()` reads `.kind`, `.cta_group`, `.collector::a` and `.ashift` as
    written (mlir-opt-22 accepts the text), and building from it gives the same op."""
    text = (
        "llvm.func @f(%d: !llvm.ptr<6>, %a: !llvm.ptr<6>, %b: i64, %i: i32, %e: i1) {\n"
        f"  nvvm.tcgen05.mma %d, %a, %b, %i, %e {attributes} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)\n"
        "  llvm.return\n}\n"
    )
    upstream.parse(text)
    module = Parser(make_context(), text).parse_module()
    (mma,) = [op for op in module.walk() if isinstance(op, nvvm.Tcgen05MMAOp)]
    assert mma.form() == form
    d, a, b, i, e = mma.operands
    rebuilt = nvvm.Tcgen05MMAOp(form, d, a, b, i, e)
    assert rebuilt.properties == mma.properties

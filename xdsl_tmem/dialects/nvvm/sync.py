"""Thread synchronisation: fence.proxy, CTA and named barriers, bar.warp.sync and the
cluster barrier.
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import (
    I32,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    traits_def,
)

from xdsl_tmem.dialects.nvvm.attributes import (
    BarrierReduction,
    BarrierReductionAttr,
    ProxyKind,
    ProxyKindAttr,
    SharedSpace,
    SharedSpaceAttr,
)
from xdsl_tmem.dialects.nvvm.base import NVVMOp
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.traits import (
    LaneVarying,
    ThreadBarrier,
    WarpLocal,
)
from xdsl_tmem.dialects.utils import (
    constant_int,
)

# --------------------------------------------------------------------------------------
# Barriers, cluster barriers, fence.proxy
# --------------------------------------------------------------------------------------


@irdl_op_definition
class FenceProxyOp(NVVMOp):
    """`fence.proxy.<kind>[::<space>];`, e.g. `fence.proxy.async.shared::cta;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.fence.proxy"
    kind = prop_def(ProxyKindAttr)
    space = opt_prop_def(SharedSpaceAttr)
    assembly_format = "attr-dict"

    def __init__(self, kind: ProxyKind, space: SharedSpace | None = None):
        properties: dict[str, Attribute] = {"kind": ProxyKindAttr(kind)}
        if space is not None:
            properties["space"] = SharedSpaceAttr(space)
        super().__init__(properties=properties)

    def verify_nvvm(self) -> None:
        # mlir-opt-22's verifier, reworded.
        kind = self.kind.data
        if kind in (ProxyKind.TENSORMAP, ProxyKind.GENERIC):
            raise self.error(f"kind {kind.value} is not supported (allowed: alias, async, async.global, async.shared)")
        if kind == ProxyKind.ASYNC_SHARED and self.space is None:
            raise self.error("kind async.shared needs a space (#nvvm.shared_space<cta|cluster>)")
        if kind != ProxyKind.ASYNC_SHARED and self.space is not None:
            raise self.error(f"only kind async.shared takes a space, got kind {kind.value}")


@irdl_op_definition
class Barrier0Op(NVVMOp):
    """`bar.sync 0;`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.barrier0"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


_BARRIER_IDS = 16
"""ptxas: "Barrier number '16' out of range, expected to be in range [0..15]" (verified)."""


def _check_barrier_operands(op: NVVMOp, barrier_id: SSAValue | None, number_of_threads: SSAValue | None) -> None:
    # ptxas rejects these as immediates (checked with llc-22 + ptxas, which receive
    # constants as immediates); registers are not checked.
    if barrier_id is not None and (value := constant_int(barrier_id)) is not None:
        if not 0 <= value < _BARRIER_IDS:
            raise op.error(f"barrier id must be in [0, {_BARRIER_IDS - 1}], got {value}")
    if number_of_threads is not None and (value := constant_int(number_of_threads)) is not None:
        if value < 0 or value % 32:
            raise op.error(f"number_of_threads must be a multiple of the warp size (32), got {value}")


@irdl_op_definition
class BarrierOp(NVVMOp):
    """`bar.sync id[, n];` or, with a reduction, `bar.red.<op> ...`."""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.barrier"
    barrier_id = opt_operand_def(I32)
    number_of_threads = opt_operand_def(I32)
    reduction_predicate = opt_operand_def(I32)
    res = opt_result_def(I32)
    reduction_op = opt_prop_def(BarrierReductionAttr, prop_name="reductionOp")
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "(`id` `=` $barrier_id^)? (`number_of_threads` `=` $number_of_threads^)? "
        "(qualified($reductionOp)^ $reduction_predicate)? attr-dict (`->` type($res)^)?"
    )

    def __init__(
        self,
        barrier_id: SSAValue | None = None,
        number_of_threads: SSAValue | None = None,
        reduction: tuple[BarrierReduction, SSAValue] | None = None,
    ):
        properties: dict[str, Attribute] = {}
        predicate = None
        if reduction is not None:
            properties["reductionOp"] = BarrierReductionAttr(reduction[0])
            predicate = reduction[1]
        super().__init__(
            operands=[barrier_id, number_of_threads, predicate],
            result_types=[[i32] if reduction is not None else []],
            properties=properties,
        )

    def verify_nvvm(self) -> None:
        if self.number_of_threads is not None and self.barrier_id is None:
            # mlir-opt-22: "barrier id is missing, it should be set between 0 to 15".
            raise self.error("number_of_threads needs a barrier id (0 to 15)")
        if (self.reduction_op is None) != (self.reduction_predicate is None):
            raise self.error("a reduction needs both reductionOp and its predicate operand")
        if self.res is not None and self.reduction_op is None:
            # mlir-translate-22 crashes on a result without a reduction.
            raise self.error("only a reduction (#nvvm.reduction<...>) has a result")
        _check_barrier_operands(self, self.barrier_id, self.number_of_threads)


@irdl_op_definition
class BarrierArriveOp(NVVMOp):
    """`bar.arrive id, n;` (inline PTX; needs `--convert-nvvm-to-llvm`)."""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.barrier.arrive"
    barrier_id = opt_operand_def(I32)
    number_of_threads = operand_def(I32)
    assembly_format = "(`id` `=` $barrier_id^)? `number_of_threads` `=` $number_of_threads attr-dict"

    def __init__(self, number_of_threads: SSAValue, barrier_id: SSAValue | None = None):
        super().__init__(operands=[barrier_id, number_of_threads])

    def verify_nvvm(self) -> None:
        _check_barrier_operands(self, self.barrier_id, self.number_of_threads)


@irdl_op_definition
class SyncWarpOp(NVVMOp):
    """`bar.warp.sync membermask;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.bar.warp.sync"
    mask = operand_def(I32)
    assembly_format = "$mask attr-dict `:` type($mask)"

    def __init__(self, mask: SSAValue):
        super().__init__(operands=[mask])


class _ClusterBarrierOp(NVVMOp, ABC):
    aligned = opt_prop_def(UnitAttr)
    assembly_format = "attr-dict"

    def __init__(self, aligned: bool = False):
        super().__init__(properties={"aligned": UnitAttr()} if aligned else {})


@irdl_op_definition
class ClusterArriveOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive[.aligned];`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.cluster.arrive"


@irdl_op_definition
class ClusterArriveRelaxedOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive.relaxed[.aligned];`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.cluster.arrive.relaxed"


@irdl_op_definition
class ClusterWaitOp(_ClusterBarrierOp):
    """`barrier.cluster.wait[.aligned];`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.cluster.wait"

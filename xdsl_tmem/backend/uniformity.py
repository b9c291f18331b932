"""Which values are warp-uniform, so that branches on them can be `bra.uni`.

A branch marked `.uni` must be taken the same way by every active thread of the
warp; on a condition that differs between lanes it is undefined behaviour. So the
analysis is conservative: a value is *divergent* if it may differ between the lanes
of a warp, and everything not proven uniform is divergent.

Divergence sources: the thread and lane identities (`%tid`, `%laneid`, lane masks),
`elect.sync`, clock reads, mbarrier probes, TMEM loads, and loads through divergent
addresses. A value computed from divergent operands is divergent; region results are
divergent when their condition, bounds or yielded values are. One refinement makes
the warp index uniform: `tid.x >> k` (or `tid.x / 2^k`) with k >= 5 when the block
is one-dimensional or `blockDim.x` is a multiple of 32, because a warp is then 32
consecutive `tid.x`.
"""

from __future__ import annotations

from xdsl.dialects import arith, func, llvm, scf
from xdsl.ir import Operation, SSAValue

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.utils import constant_int

_DIVERGENT_SOURCES = (
    nvvm.ThreadIdXOp,
    nvvm.ThreadIdYOp,
    nvvm.ThreadIdZOp,
    nvvm.LaneIdOp,
    nvvm.LaneMaskEqOp,
    nvvm.LaneMaskLeOp,
    nvvm.LaneMaskLtOp,
    nvvm.LaneMaskGeOp,
    nvvm.LaneMaskGtOp,
    nvvm.ElectSyncOp,
    nvvm.ClockOp,
    nvvm.Clock64Op,
    nvvm.GlobalTimerOp,
    nvvm.WarpIdOp,
    nvvm.SmIdOp,
    nvvm.MBarrierTryWaitOp,
    nvvm.MBarrierTestWaitOp,
    nvvm.MBarrierArriveOp,
    nvvm.MBarrierArriveExpectTxOp,
    nvvm.Tcgen05LdOp,
    nvvm.BarrierOp,
)


def _warps_are_tid_x_slices(fn: Operation) -> bool:
    """True if each warp is 32 consecutive tid.x values (1-D block or x % 32 == 0)."""
    from xdsl.dialects.builtin import DenseArrayBase

    for key in ("nvvm.reqntid", "nvvm.maxntid"):
        attr = fn.attributes.get(key)
        if isinstance(attr, DenseArrayBase):
            dims = [int(v) for v in attr.get_values()]
            return all(d == 1 for d in dims[1:]) or dims[0] % 32 == 0
    return False


def divergent_values(fn: Operation) -> set[SSAValue]:
    """The values of `fn` that may differ between lanes of a warp (fixpoint)."""
    warp_slices = _warps_are_tid_x_slices(fn)
    divergent: set[SSAValue] = set()

    def is_warp_index(op: Operation) -> bool:
        if not warp_slices or not isinstance(op, arith.ShRUIOp | arith.DivUIOp | llvm.LShrOp | llvm.UDivOp):
            return False
        source, amount = op.operands
        if not isinstance(source.owner, nvvm.ThreadIdXOp) or (k := constant_int(amount)) is None:
            return False
        return k >= 5 if isinstance(op, arith.ShRUIOp | llvm.LShrOp) else k > 0 and k % 32 == 0

    def mark(values: list[SSAValue] | tuple[SSAValue, ...]) -> bool:
        changed = False
        for v in values:
            if v not in divergent:
                divergent.add(v)
                changed = True
        return changed

    changed = True
    while changed:
        changed = False
        for op in fn.walk():
            if isinstance(op, _DIVERGENT_SOURCES):
                changed |= mark(op.results)
                continue
            if is_warp_index(op):
                continue
            if isinstance(op, scf.ForOp):
                control = any(v in divergent for v in (op.lb, op.ub, op.step))
                yielded = op.body.block.last_op
                assert yielded is not None
                carried = zip(op.iter_args, op.body.block.args[1:], op.results, strict=True)
                for i, (init, arg, result) in enumerate(carried):
                    if control or init in divergent or yielded.operands[i] in divergent:
                        changed |= mark([arg, result])
                if control:
                    changed |= mark([op.body.block.args[0]])
                continue
            if isinstance(op, scf.IfOp):
                yields = [r.block.last_op for r in op.regions if r.blocks]
                for i, result in enumerate(op.results):
                    if op.cond in divergent or any(y is not None and y.operands[i] in divergent for y in yields):
                        changed |= mark([result])
                continue
            if isinstance(op, scf.WhileOp):
                # Loop-carried values: conservatively divergent if anything flowing
                # into them is.
                inner_results = [r for region in op.regions for inner in region.walk() for r in inner.results]
                if any(v in divergent for v in (*op.operands, *inner_results)):
                    changed |= mark([*op.results, *op.before_region.block.args, *op.after_region.block.args])
                continue
            if isinstance(op, func.FuncOp | llvm.FuncOp):
                continue
            if any(v in divergent for v in op.operands):
                changed |= mark(op.results)
    return divergent

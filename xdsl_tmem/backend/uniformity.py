"""Which values are warp-uniform, so that branches on them can be `bra.uni`.

A branch marked `.uni` must be taken the same way by every active thread of the
warp; on a condition that differs between lanes it is undefined behaviour (PTX ISA,
"bra": "the .uni suffix indicates that the branch is guaranteed to be non-divergent")
and ptxas accepts it silently. So the analysis is conservative by construction: a
value is *uniform* only if a rule below proves it equal in every active lane of a
warp; everything else is *divergent*.

Rules (a fixpoint over values, block arguments included):

* Ops declaring `UniformResult` (constants, symbol addresses, the block/grid/cluster
  identities and sizes; dialects/traits.py) have uniform results.
* Ops declaring `UniformPreserving` (arith, integer/float/pointer llvm ops, non-atomic
  loads, `nvvm.mapa`, ...) are functions of their operands: uniform operands give
  uniform results. A non-atomic load through a uniform address is taken as uniform,
  as LLVM's uniformity analysis does (lanes that read one location in one instruction
  see one value unless another thread races with the load).
* Every other op -- unknown ones, the thread and lane identities, clocks, `elect.sync`,
  mbarrier probes, TMEM loads -- has divergent results.
* The warp index: `tid.x >> k` (or `tid.x / 2^k`) with k >= 5 is uniform when the
  block is one-dimensional or `blockDim.x` is a multiple of 32 (a warp is then 32
  consecutive `tid.x`).
* `scf.for`/`scf.if`/`scf.while`: a region argument or result is divergent when a
  value flowing into it is, or when the loop bounds / condition are (lanes leave the
  loop, or take the branch, at different times).
* Blocks of cf/llvm branches: a block argument is divergent when an incoming value
  is (data dependence), when the block is a join of a divergent branch (sync
  dependence: lanes that took different sides of the branch meet there with
  different values, even if every incoming value is uniform), or when it receives a
  value from a cycle that a divergent branch leaves (temporal divergence: lanes
  leave at different iterations). For the same reason a value defined in such a
  cycle and used outside it is divergent. Joins are found below the branch up to its
  immediate post-dominator, where the two sides reconverge.
* Kernel parameters are uniform; any other block argument (a device function's
  parameters included) is divergent unless a rule above covers it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from xdsl.dialects import arith, cf, llvm, scf
from xdsl.dialects.builtin import DenseArrayBase
from xdsl.ir import Block, Operation, Region, SSAValue

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.traits import UniformPreserving, UniformResult, declares
from xdsl_tmem.dialects.utils import constant_int


def _preserves_uniformity(op: Operation) -> bool:
    if isinstance(op, llvm.LoadOp):
        return op.ordering.value.data == 0  # non-atomic
    return declares(type(op), UniformPreserving) or op.dialect_name() == "arith"


def _warps_are_tid_x_slices(fn: Operation) -> bool:
    """True if each warp is 32 consecutive tid.x values (1-D block or x % 32 == 0)."""
    for key in ("nvvm.reqntid", "nvvm.maxntid"):
        attr = fn.attributes.get(key)
        if isinstance(attr, DenseArrayBase):
            dims = [int(v) for v in attr.get_values()]
            return all(d == 1 for d in dims[1:]) or dims[0] % 32 == 0
    return False


def _successor_arguments(op: Operation) -> list[tuple[Block, Sequence[SSAValue]]] | None:
    """(successor, forwarded values) of a known branch; None for an unknown terminator."""
    match op:
        case cf.BranchOp() | llvm.BrOp():
            return [(op.successor, op.arguments)]
        case cf.ConditionalBranchOp() | llvm.CondBrOp():
            return [(op.then_block, op.then_arguments), (op.else_block, op.else_arguments)]
        case _:
            return None


def _branch_condition(op: Operation) -> SSAValue | None:
    return op.cond if isinstance(op, cf.ConditionalBranchOp | llvm.CondBrOp) else None


class _CFG:
    """Successors, reachability and post-dominators of one multi-block region."""

    def __init__(self, region: Region):
        self.blocks = list(region.blocks)
        self.succs: dict[Block, list[Block]] = {
            b: list(b.last_op.successors) if b.last_op is not None else [] for b in self.blocks
        }
        self.preds: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for b in self.blocks:
            for s in self.succs[b]:
                self.preds[s].append(b)
        self.ipdom = self._immediate_post_dominators()
        self._sync_cache: dict[Block, list[SSAValue]] = {}

    def reachable(self, starts: Iterable[Block], stop: Block | None = None) -> set[Block]:
        """Blocks reachable from `starts` (included), not walking past `stop`."""
        seen: set[Block] = set()
        work = list(starts)
        while work:
            b = work.pop()
            if b in seen:
                continue
            seen.add(b)
            if b is not stop:
                work.extend(self.succs[b])
        return seen

    def _immediate_post_dominators(self) -> dict[Block, Block | None]:
        exits = [b for b in self.blocks if not self.succs[b]]
        # Blocks that cannot reach an exit (endless loops) have no post-dominator.
        reaches_exit: set[Block] = set()
        work = list(exits)
        while work:
            b = work.pop()
            if b not in reaches_exit:
                reaches_exit.add(b)
                work.extend(self.preds[b])
        everything = set(reaches_exit)
        pdom: dict[Block, set[Block]] = {b: ({b} if b in exits else set(everything)) for b in reaches_exit}
        changed = True
        while changed:
            changed = False
            for b in self.blocks:
                if b not in reaches_exit or b in exits:
                    continue
                new = set(everything)
                for s in self.succs[b]:
                    if s in pdom:
                        new &= pdom[s]
                new.add(b)
                if new != pdom[b]:
                    pdom[b] = new
                    changed = True
        ipdom: dict[Block, Block | None] = {}
        for b in self.blocks:
            strict = pdom.get(b, {b}) - {b}
            # The closest strict post-dominator is the one all the others post-dominate.
            ipdom[b] = next((p for p in strict if pdom[p] == strict), None)
        return ipdom

    def joins(self, branch_block: Block) -> set[Block]:
        """Blocks where paths from different successors of `branch_block` meet before
        (or at) its immediate post-dominator."""
        stop = self.ipdom[branch_block]
        successors = self.succs[branch_block]
        joined = {s for s in successors if successors.count(s) > 1}
        reach = [self.reachable([s], stop) for s in dict.fromkeys(successors)]
        for i, a in enumerate(reach):
            for b in reach[i + 1 :]:
                joined |= a & b
        return joined

    def cycle_of(self, block: Block) -> set[Block]:
        """The strongly connected blocks around `block` (empty if it is on no cycle)."""
        forward = self.reachable(self.succs[block])
        if block not in forward:
            return set()
        backward: set[Block] = set()
        work = list(self.preds[block])
        while work:
            b = work.pop()
            if b not in backward:
                backward.add(b)
                work.extend(self.preds[b])
        return forward & backward

    def sync_dependent(self, block: Block, region: Region) -> list[SSAValue]:
        """The values that are divergent if `block`'s conditional branch is: the
        arguments of its joins, and, when it lies on a cycle, the arguments of blocks
        entered from the cycle and the values defined in the cycle and used outside it."""
        if block in self._sync_cache:
            return self._sync_cache[block]
        values: list[SSAValue] = [a for join in self.joins(block) for a in join.args]
        cycle: set[Block] = self.cycle_of(block)
        stop = self.ipdom[block]
        if stop is not None and stop in cycle:
            # The branch reconverges inside the cycle: it makes lanes leave the cycle at
            # different iterations only if a cycle exit lies between it and `stop`.
            between = self.reachable(self.succs[block], stop) - {stop}
            if all(s in cycle for b in between & cycle for s in self.succs[b]):
                cycle = set[Block]()
        for inside in cycle:
            for succ in self.succs[inside]:
                if succ not in cycle:
                    values.extend(succ.args)
            for value in [*inside.args, *(r for o in inside.walk() for r in o.results)]:
                if any(_top_block(use.operation, region) not in cycle for use in value.uses):
                    values.append(value)
        self._sync_cache[block] = values
        return values


def _top_block(op: Operation, region: Region) -> Block | None:
    """The block of `region` that (transitively) contains `op`."""
    current: Operation | None = op
    while current is not None:
        block = current.parent_block()
        if block is None:
            return None
        if block.parent is region:
            return block
        current = block.parent_op()
    return None


def divergent_values(fn: Operation) -> set[SSAValue]:
    """The values of `fn` that may differ between lanes of a warp (see the module
    docstring); a least fixpoint over rules that only add divergence."""
    return _Divergence(fn).solve()


class _Divergence:
    """The fixpoint of `divergent_values`: one method per rule of the module docstring."""

    def __init__(self, fn: Operation):
        self.fn = fn
        self.warp_slices = _warps_are_tid_x_slices(fn)
        self.divergent: set[SSAValue] = set()
        self.cfgs = [(region, _CFG(region)) for op in fn.walk() for region in op.regions if len(region.blocks) > 1]

    def solve(self) -> set[SSAValue]:
        for block in self._uncovered_blocks():
            self.mark(block.args)
        changed = True
        while changed:
            changed = False
            for op in self.fn.walk():
                if op is not self.fn:
                    changed |= self.visit(op)
            changed |= _sync_dependence(self.cfgs, self.divergent, self.mark)
        return self.divergent

    def mark(self, values: Iterable[SSAValue]) -> bool:
        """Add `values`; whether any was new."""
        size = len(self.divergent)
        self.divergent.update(values)
        return len(self.divergent) != size

    def any_divergent(self, values: Iterable[SSAValue]) -> bool:
        return any(v in self.divergent for v in values)

    def _uncovered_blocks(self) -> list[Block]:
        """Blocks whose arguments no rule covers: divergent from the start."""
        covered: set[Block] = set()
        if self.fn.regions and self.fn.regions[0].blocks and "nvvm.kernel" in self.fn.attributes:
            covered.add(self.fn.regions[0].blocks[0])  # kernel parameters (a device function's may differ per lane)
        for op in self.fn.walk():
            if isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp):
                covered.update(b for r in op.regions for b in r.blocks)
        for _, cfg in self.cfgs:
            for block in cfg.blocks[1:]:
                if all(_successor_arguments(p.last_op) is not None for p in cfg.preds[block] if p.last_op is not None):
                    covered.add(block)
        return [b for op in self.fn.walk() for r in op.regions for b in r.blocks if b not in covered]

    def visit(self, op: Operation) -> bool:
        """Apply the rule for `op`; whether it marked anything new."""
        if declares(type(op), UniformResult) or self._is_warp_index(op):
            return False
        match op:
            case scf.ForOp():
                return self._for(op)
            case scf.IfOp():
                return self._if(op)
            case scf.WhileOp():
                return self._while(op)
            case _:
                pass
        if (forwarded := _successor_arguments(op)) is not None:
            return self._branch(forwarded)
        if op.results and (not _preserves_uniformity(op) or self.any_divergent(op.operands)):
            return self.mark(op.results)
        return False

    def _is_warp_index(self, op: Operation) -> bool:
        if not self.warp_slices or not isinstance(op, arith.ShRUIOp | arith.DivUIOp | llvm.LShrOp | llvm.UDivOp):
            return False
        source, amount = op.operands
        if not isinstance(source.owner, nvvm.ThreadIdXOp) or (k := constant_int(amount)) is None:
            return False
        return k >= 5 if isinstance(op, arith.ShRUIOp | llvm.LShrOp) else k > 0 and k % 32 == 0

    def _for(self, op: scf.ForOp) -> bool:
        changed = False
        control = self.any_divergent((op.lb, op.ub, op.step))
        yielded = op.body.block.last_op
        assert yielded is not None
        carried = zip(op.iter_args, op.body.block.args[1:], op.results, strict=True)
        for i, (init, arg, result) in enumerate(carried):
            if control or init in self.divergent or yielded.operands[i] in self.divergent:
                changed |= self.mark([arg, result])
        if control:
            changed |= self.mark([op.body.block.args[0]])
        return changed

    def _if(self, op: scf.IfOp) -> bool:
        changed = False
        yields = [r.block.last_op for r in op.regions if r.blocks]
        for i, result in enumerate(op.results):
            if op.cond in self.divergent or any(y is not None and y.operands[i] in self.divergent for y in yields):
                changed |= self.mark([result])
        return changed

    def _while(self, op: scf.WhileOp) -> bool:
        # Conservative: everything the loop carries is divergent if anything flowing
        # into it, or its condition, is.
        inner = [v for region in op.regions for o in region.walk() for v in o.operands]
        if self.any_divergent((*op.operands, *inner)):
            return self.mark([*op.results, *op.before_region.block.args, *op.after_region.block.args])
        return False

    def _branch(self, forwarded: list[tuple[Block, Sequence[SSAValue]]]) -> bool:
        changed = False
        for block, values in forwarded:
            for arg, value in zip(block.args, values, strict=True):
                if value in self.divergent:
                    changed |= self.mark([arg])
        return changed


def _sync_dependence(
    cfgs: list[tuple[Region, _CFG]], divergent: set[SSAValue], mark: Callable[[Iterable[SSAValue]], bool]
) -> bool:
    """Joins and cycle exits of divergent branches (see the module docstring)."""
    changed = False
    for region, cfg in cfgs:
        for block in cfg.blocks:
            terminator = block.last_op
            if terminator is None or len(terminator.successors) < 2:
                continue
            condition = _branch_condition(terminator)
            # A multi-way terminator without a known condition counts as divergent.
            if condition is None or condition in divergent:
                changed |= mark(cfg.sync_dependent(block, region))
    return changed

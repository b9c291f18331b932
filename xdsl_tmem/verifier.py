"""Module-level rules upstream MLIR's verifier enforces and xDSL 0.74's does not.

`verify_located` runs these after xDSL's own verification, so both drivers and
the verification between passes reject what mlir-opt-22 rejects:

* SSA dominance (mlir/lib/IR/Verifier.cpp, `verifyDominanceOfContainedRegions`):
  in an SSACFG region a value is used only where its definition dominates the
  use. Graph regions (`builtin.module`, and unregistered ops, which upstream
  conservatively treats as possibly graph regions) have no such rule.
* `scf.yield` in `scf.if`, `scf.execute_region` and `scf.index_switch` yields
  the parent's result types (upstream `RegionBranchOpInterface` verification).
* `llvm.mlir.addressof` names a global or function of the enclosing symbol table
  (upstream `AddressOfOp::verifySymbolUses`).
* The `nvvm.*` attributes on other ops (`nvvm_attribute_error`).
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import llvm, scf
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.traits import SymbolTable

from xdsl_tmem.dialects.nvvm import nvvm_attribute_error


def has_graph_regions(op: Operation) -> bool:
    """Upstream's `RegionKind::Graph`: `builtin.module` (BuiltinOps.td); an
    unregistered op may be one (Dominance.cpp), so its regions are not checked."""
    graph = _GRAPH_REGIONS.get(type(op))
    if graph is None:  # once per op class: isinstance against the ABC union is slow
        graph = _GRAPH_REGIONS[type(op)] = isinstance(op, ModuleOp | UnregisteredOp)
    return graph


_GRAPH_REGIONS: dict[type[Operation], bool] = {}


class _Dominance:
    """Block order and per-region dominator sets, computed on demand."""

    # Keyed by id (IR nodes hash by identity, through a Python-level `__hash__`); the
    # module being verified keeps every node alive, so no id is reused meanwhile.
    def __init__(self) -> None:
        self._index: dict[int, dict[int, int]] = {}
        self._dominators: dict[int, dict[Block, set[Block]]] = {}

    def index(self, op: Operation) -> int:
        block = op.parent_block()
        assert block is not None
        positions = self._index.get(id(block))
        if positions is None:
            positions = self._index[id(block)] = {id(o): i for i, o in enumerate(block.ops)}
        return positions[id(op)]

    def dominators(self, region: Region) -> dict[Block, set[Block]]:
        """Dominators of each block reachable from the entry (iterative dataflow)."""
        if (known := self._dominators.get(id(region))) is not None:
            return known
        blocks = list(region.blocks)
        successors: dict[Block, list[Block]] = {
            b: list(b.last_op.successors) if b.last_op is not None else [] for b in blocks
        }
        reachable: list[Block] = []
        seen: set[Block] = set()
        stack = [blocks[0]]
        while stack:
            block = stack.pop()
            if block in seen:
                continue
            seen.add(block)
            reachable.append(block)
            stack.extend(successors[block])
        predecessors: dict[Block, list[Block]] = {b: [] for b in reachable}
        for block in reachable:
            for succ in successors[block]:
                predecessors[succ].append(block)
        everything = set(reachable)
        dom: dict[Block, set[Block]] = {b: set(everything) for b in reachable}
        dom[blocks[0]] = {blocks[0]}
        changed = True
        while changed:
            changed = False
            for block in reachable[1:]:
                preds = [dom[p] for p in predecessors[block]]
                new = set[Block].intersection(*preds) if preds else set[Block]()
                new.add(block)
                if new != dom[block]:
                    dom[block] = new
                    changed = True
        self._dominators[id(region)] = dom
        return dom

    def problem(self, value: SSAValue, user: Operation) -> str | None:
        """Why `value` does not dominate its use by `user`, or None if it does."""
        if isinstance(value, BlockArgument):
            def_block: Block | None = value.block
            def_op = None
        elif isinstance(value, OpResult):
            def_op = value.op
            def_block = def_op.parent_block()
        else:
            return None
        if def_block is None or (region := def_block.parent) is None:
            return None
        # The ancestor of the user (or the user) that sits in the defining region.
        anchor: Operation | None = user
        while anchor is not None and ((b := anchor.parent_block()) is None or b.parent is not region):
            anchor = anchor.parent_op()
        if anchor is None:
            return "it is defined in a region that does not enclose this use"
        parent = region.parent_op()
        if parent is not None and has_graph_regions(parent):
            return None
        use_block = anchor.parent_block()
        assert use_block is not None
        dom = self.dominators(region)
        if use_block not in dom:
            return None  # upstream does not check uses in blocks unreachable from the entry
        if use_block is def_block:
            if def_op is None:
                return None
            if def_op is anchor:
                return f"it is a result of '{def_op.name}', used inside that op"
            if self.index(def_op) > self.index(anchor):
                return "it is defined later in the block"
            return None
        if def_block in dom[use_block]:
            return None
        return "its block does not dominate the block of this use"


def _types(types: list[Attribute]) -> str:
    return ", ".join(map(str, types))


def _value_name(value: SSAValue) -> str:
    return f" (%{value.name_hint})" if value.name_hint else ""


def module_violations(root: Operation) -> Iterator[tuple[Operation, str]]:
    """Every op that breaks one of the rules above, with the message, in walk order."""
    dominance = _Dominance()
    for op in root.walk():
        for i, operand in enumerate(op.operands):
            if (why := dominance.problem(operand, op)) is not None:
                yield op, f"{op.name}: operand #{i}{_value_name(operand)} does not dominate this use: {why}"
        for name, value in op.attributes.items():
            if name.startswith("nvvm.") and (message := nvvm_attribute_error(op, name, value)) is not None:
                yield op, message
        if isinstance(op, scf.IfOp | scf.ExecuteRegionOp | scf.IndexSwitchOp):
            # Reported at the op, as upstream's RegionBranchOpInterface verifier does.
            expected = [r.type for r in op.results]
            for i, region in enumerate(op.regions):
                yield_op = region.block.last_op if region.blocks else None
                if not isinstance(yield_op, scf.YieldOp):
                    continue
                yielded = [v.type for v in yield_op.arguments]
                if yielded != expected:
                    yield (
                        op,
                        (
                            f"{op.name}: region #{i} yields {len(yielded)} value(s) ({_types(yielded)}) but the op has "
                            f"{len(expected)} result(s) ({_types(expected)}); each region's scf.yield must yield the "
                            "op's result types"
                        ),
                    )
        if isinstance(op, llvm.AddressOfOp):
            target = SymbolTable.lookup_symbol(op, op.global_name)
            if not isinstance(target, llvm.GlobalOp | llvm.FuncOp):
                found = "is not defined" if target is None else f"names a '{target.name}'"
                yield (
                    op,
                    (
                        f"llvm.mlir.addressof: @{op.global_name.string_value()} {found}; it must name an "
                        "llvm.mlir.global or llvm.func of the enclosing symbol table"
                    ),
                )

"""`tmem-expand-regions`: Mojo `with` blocks → explicit acquire / body / release ops.

Each region op becomes the op sequence Mojo's `__enter__` / `__exit__` perform
(docs/semantics.md §4.3-4.4, §5), with the body inlined in between:

* `output_ring.producer`, `output_ring.per_k_producer`, `warp_context.mma_per_k_stage`:
  acquire_for_mma; body; release_from_mma (with the same `leader`).
* `output_ring.consumer`: acquire_for_epilogue; body; release_from_epilogue (no arrive).
* `output_ring.per_k_consumer`: acquire_for_epilogue; body; arrive_empty,
  release_from_epilogue.
* `warp_context.epilogue_per_k_stage`: acquire_for_epilogue, input consumer_stage; body;
  input consumer_step, arrive_empty, release_from_epilogue.
* `warp_context.mma`: mma_create, mma_enter; body; mma_exit.
* `warp_context.epilogue`: epilogue_create; body; epilogue_exit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker
from xdsl.rewriter import InsertPoint

from xdsl_tmem.dialects import tmem
from xdsl_tmem.passes.op_pattern import OpRewritePattern, OpTypeApplier


def _inline_body(rewriter: PatternRewriter, op: tmem.TmemRegionOp, args: Sequence[SSAValue]) -> list[SSAValue]:
    """Move `op`'s body before `op` with its block arguments bound to `args`;
    return the values its `tmem.yield` passed out."""
    block = op.body.block
    terminator = block.last_op
    assert isinstance(terminator, tmem.YieldOp)  # guaranteed by the verifier
    yielded = list(terminator.values)
    rewriter.erase(terminator)
    rewriter.inline_block(block, InsertPoint.before(op), args)
    return yielded


def _insert(rewriter: PatternRewriter, op: Operation, new: Operation) -> Operation:
    rewriter.insert(new, InsertPoint.before(op))
    return new


_ProducerRegionOp = tmem.ProducerOp | tmem.PerKProducerOp | tmem.MmaPerKStageOp
_ConsumerRegionOp = tmem.ConsumerOp | tmem.PerKConsumerOp


class ExpandProducerPattern(OpRewritePattern[_ProducerRegionOp]):
    """`producer`, `per_k_producer` and `mma_per_k_stage`: acquire, body, release_from_mma."""

    def rewrite(self, op: _ProducerRegionOp, rewriter: PatternRewriter, /) -> None:
        acquire = _insert(rewriter, op, tmem.AcquireForMmaOp(op.ring))
        stage = acquire.results[0]
        yielded = _inline_body(rewriter, op, [stage])
        release = tmem.ReleaseFromMmaOp(op.ring, stage, op.leader)
        rewriter.replace(op, [release], [release.new_ring, *yielded])


class ExpandConsumerPattern(OpRewritePattern[_ConsumerRegionOp]):
    """`consumer` (no arrive, as Mojo's `OutputConsumer`) and `per_k_consumer`
    (`PerKConsumerStage`: arrive_empty before release_from_epilogue)."""

    def rewrite(self, op: _ConsumerRegionOp, rewriter: PatternRewriter, /) -> None:
        acquire = _insert(rewriter, op, tmem.AcquireForEpilogueOp(op.ring))
        stage = acquire.results[0]
        yielded = _inline_body(rewriter, op, [stage])
        exit_ops: list[Operation] = []
        if isinstance(op, tmem.PerKConsumerOp):
            exit_ops.append(tmem.ArriveEmptyOp(op.ring, stage))
        release = tmem.ReleaseFromEpilogueOp(op.ring)
        rewriter.replace(op, [*exit_ops, release], [release.new_ring, *yielded])


class ExpandEpiloguePerKStagePattern(OpRewritePattern[tmem.EpiloguePerKStageOp]):
    """`EpilogueKContext`: acquire_for_epilogue and record the input stage; on exit the
    input consumer_step, the arrive on the output empty[index], release_from_epilogue."""

    def rewrite(self, op: tmem.EpiloguePerKStageOp, rewriter: PatternRewriter, /) -> None:
        acquire = _insert(rewriter, op, tmem.AcquireForEpilogueOp(op.ring))
        input_stage = _insert(rewriter, op, tmem.ConsumerStageOp(op.input))
        stage = acquire.results[0]
        yielded = _inline_body(rewriter, op, [stage, input_stage.results[0]])
        step = tmem.ConsumerStepOp(op.input)
        arrive = tmem.ArriveEmptyOp(op.ring, stage)
        release = tmem.ReleaseFromEpilogueOp(op.ring)
        rewriter.replace(op, [step, arrive, release], [release.new_ring, step.new_pipeline, *yielded])


def _expand_context(
    rewriter: PatternRewriter,
    op: tmem.MmaContextOp | tmem.EpilogueContextOp,
    create: tmem.MmaCreateOp | tmem.EpilogueCreateOp,
    enter: Callable[[SSAValue], Operation] | None,
    exit_: Callable[[SSAValue], Operation],
) -> None:
    """A warp-context region: `create`, `enter` (if any), the body, `exit_`."""
    context = _insert(rewriter, op, create).results[0]
    if enter is not None:
        _insert(rewriter, op, enter(context))
    yielded = _inline_body(rewriter, op, [context])
    rewriter.replace(op, [exit_(context)], yielded)


class ExpandMmaContextPattern(OpRewritePattern[tmem.MmaContextOp]):
    """`with MmaWarpContext.create(...) as ctx`: create, enter, body, exit."""

    def rewrite(self, op: tmem.MmaContextOp, rewriter: PatternRewriter, /) -> None:
        create = tmem.MmaCreateOp(op.slot, op.accum_barriers, op.dealloc_barrier, op.context_type, op.mask)
        _expand_context(rewriter, op, create, tmem.MmaEnterOp, tmem.MmaExitOp)


class ExpandEpilogueContextPattern(OpRewritePattern[tmem.EpilogueContextOp]):
    """`Sync.wait(); with EpilogueWarpContext.create(...) as ctx`: create, body, exit."""

    def rewrite(self, op: tmem.EpilogueContextOp, rewriter: PatternRewriter, /) -> None:
        create = tmem.EpilogueCreateOp(op.slot, op.accum_barriers, op.dealloc_barrier, op.context_type, op.mask)
        _expand_context(rewriter, op, create, None, tmem.EpilogueExitOp)


EXPAND_PATTERNS: tuple[OpRewritePattern[Any], ...] = (
    ExpandProducerPattern(),
    ExpandConsumerPattern(),
    ExpandEpiloguePerKStagePattern(),
    ExpandMmaContextPattern(),
    ExpandEpilogueContextPattern(),
)


@dataclass(frozen=True)
class ExpandTmemRegionsPass(ModulePass):
    """Replace every tmem region op by explicit acquire/release (and context) ops."""

    name = "tmem-expand-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            OpTypeApplier(EXPAND_PATTERNS),
            walk_regions_first=False,
        ).rewrite_module(op)

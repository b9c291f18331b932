"""Translation validation: run a module before and after each pass of a pipeline.

A lowering pass must not change what a kernel does. `validate_lowering` interprets the
input module, then applies the passes one at a time and interprets the result after
each, on the same arguments and under the same schedule policy and seed, and compares
every run with the one before it: the verdict (ran to completion, deadlock, the hazard
class, step limit) and, for runs that complete, every global buffer bit for bit. The
first pass after which anything differs is reported.

A second lowering to PTX (`reference`: llc-22's, `tools/upstream.py`) runs too, on the
module as it is before our `convert-to-ptx` (the NVVM level), and is compared with the
run of that module: both lowerings of one NVVM module must do what it does.

Bit-for-bit is the right bar: both levels run on the same machine model, whose MMA and
memory semantics do not depend on the level the ops are written at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from xdsl_tmem.interpreter.launch import Launch
from xdsl_tmem.interpreter.run import KernelDeadlock, KernelHazard, KernelStepLimit, positional, run_launch

Failure = KernelDeadlock | KernelHazard | KernelStepLimit


@dataclass
class Outcome:
    """What one run did: `outputs` when it completed, `failure` otherwise."""

    outputs: dict[str, NDArray[Any]] | None = None
    failure: Failure | None = None

    @property
    def verdict(self) -> str:
        match self.failure:
            case None:
                return "ran to completion"
            case KernelDeadlock():
                return "deadlock"
            case KernelHazard(kind=kind):
                return f"hazard {kind}"
            case KernelStepLimit():
                return "step limit"


@dataclass
class Stage:
    """The run after `pass_spec` (None: the input module), or of the reference lowering
    named `pass_spec` (`reference` set)."""

    pass_spec: str | None
    outcome: Outcome
    difference: str | None = None
    """How it differs from the run it is compared with (None: it does not)."""
    reference: str | None = None
    """For a reference lowering: the stage it is compared with ("input" or a pass spec)."""


Lowering = Callable[[ModuleOp], ModuleOp]
"""A lowering of an NVVM-level module to a PTX module (llc-22's: `tools/upstream.py`)."""


@dataclass
class Validation:
    """The runs of a translation validation, the input's first (`validate_lowering`)."""

    stages: list[Stage] = field(default_factory=list[Stage])

    @property
    def failed(self) -> Stage | None:
        """The first stage whose run differs from the one before it."""
        return next((s for s in self.stages if s.difference is not None), None)


def run_outcome(module: ModuleOp, launch: Launch) -> Outcome:
    try:
        return Outcome(outputs=run_launch(module, launch).outputs)
    except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
        return Outcome(failure=e)


def compare(before: Outcome, after: Outcome) -> str | None:
    """How `after` differs from `before`, or None."""
    if before.verdict != after.verdict:
        return f"the verdict changes from '{before.verdict}' to '{after.verdict}'"
    if before.outputs is None or after.outputs is None:
        return None
    # By position: instruction selection renames the parameters (`k_param_0`, ...).
    for (name, old), new in zip(before.outputs.items(), after.outputs.values(), strict=True):
        difference = difference_of(old, new)
        if difference is not None:
            return f"buffer '{name}' changes: {difference}"
    return None


def difference_of(old: NDArray[Any], new: NDArray[Any], labels: tuple[str, str] = ("before", "after")) -> str | None:
    """Which elements of two arrays of one shape and type differ bit for bit, or None.
    NaNs too: the NVVM level computes float ops as the PTX they lower to (floats.py), so
    a NaN's payload is the same at every level."""
    old, new = old.reshape(-1), new.reshape(-1)
    bits = (old.view(np.uint8) != new.view(np.uint8)).reshape(old.size, -1).any(axis=1)
    differ = np.flatnonzero(bits)
    if not differ.size:
        return None
    i = int(differ[0])
    first = f"{old[i]} {labels[0]}, {new[i]} {labels[1]}"
    return f"{differ.size} of {old.size} elements differ, the first at index {i} ({first})"


def validate_lowering(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    ctx: Context,
    launch: Launch,
    verify: Callable[[ModuleOp], None] = ModuleOp.verify,
    reference: tuple[str, Lowering] | None = None,
) -> Validation:
    """Interpret `module` with `run_launch(launch)`, then apply `passes` to it in order (in
    place, as a pipeline would; `verify` checks each result) and interpret it after each;
    stop at the first pass that changes the outcome. Arguments are passed by position
    (`positional`), so that a pass may rename the kernel's parameters.

    `reference` (name, lowering): a second lowering to PTX, applied to a copy of the
    module as it is before the first `convert-to-ptx` of `passes` (after all of them where
    there is none) and run as the last stage, compared with the run of that module."""
    launch = positional(module, launch)
    result = Validation([Stage(None, run_outcome(module, launch))])
    nvvm: tuple[ModuleOp, Stage] | None = None
    for p in passes:
        if reference is not None and nvvm is None and p.name == "convert-to-ptx":
            nvvm = (module.clone(), result.stages[-1])
        p.apply(ctx, module)
        verify(module)
        outcome = run_outcome(module, launch)
        stage = Stage(str(p.pipeline_pass_spec()), outcome, compare(result.stages[-1].outcome, outcome))
        result.stages.append(stage)
        if stage.difference is not None:
            return result
    if reference is not None:
        source, before = nvvm or (module, result.stages[-1])
        name, lower = reference
        outcome = run_outcome(lower(source), launch)
        stage = Stage(name, outcome, compare(before.outcome, outcome), reference=before.pass_spec or "input")
        result.stages.append(stage)
    return result

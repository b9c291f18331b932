"""A Blackwell machine model that executes tmem-level and NVVM-level IR (docs/interpreter.md)."""

from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter.launch import (
    Argument,
    BufferArgument,
    Launch,
    LaunchError,
    Limits,
    PointerArgument,
    RacePolicy,
    ScalarArgument,
    ScalarField,
    Schedule,
    StructArgument,
)
from xdsl_tmem.interpreter.run import (
    KernelDeadlock,
    KernelHazard,
    KernelStepLimit,
    RunReport,
    RunResult,
    default_functions,
    run_kernel,
    run_launch,
)

__all__ = [
    "Argument",
    "BufferArgument",
    "FencePolicy",
    "KernelDeadlock",
    "KernelHazard",
    "KernelStepLimit",
    "Launch",
    "LaunchError",
    "Limits",
    "PointerArgument",
    "RacePolicy",
    "RunReport",
    "RunResult",
    "ScalarArgument",
    "ScalarField",
    "Schedule",
    "StructArgument",
    "default_functions",
    "run_kernel",
    "run_launch",
]

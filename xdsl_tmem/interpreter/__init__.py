"""A Blackwell machine model that executes tmem-level and NVVM-level IR (docs/interpreter.md)."""

from xdsl_tmem.interpreter.run import (
    KernelDeadlock,
    KernelHazard,
    KernelStepLimit,
    LaunchError,
    RunReport,
    RunResult,
    default_functions,
    run_kernel,
)

__all__ = [
    "KernelDeadlock",
    "KernelHazard",
    "KernelStepLimit",
    "LaunchError",
    "RunReport",
    "RunResult",
    "default_functions",
    "run_kernel",
]

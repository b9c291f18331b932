"""xdsl-tmem: a compiler, interpreter and verifier for Blackwell TMEM accumulator pipelines.

The public Python API (docs/api.md) is importable from here: `parse`, `lower`,
`apply_passes`, `emit_ptx`, `ptxas`, `run`, `explore`, `validate`, their result types and
`CompileError`; the kernel builder `build_matmul(MatmulConfig(...))` (`xdsl_tmem.kernels`);
numpy reference layouts and GEMMs live in `xdsl_tmem.reference`. Names
load on first use (PEP 562 `__getattr__`), so `import xdsl_tmem` (which the drivers do
for `__version__`) imports nothing else.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

TYPE_CHECKING = False  # as typing.TYPE_CHECKING (which type checkers read so), without importing typing

if TYPE_CHECKING:
    from xdsl_tmem.api import (
        CompileError,
        KernelFailure,
        apply_passes,
        describe_failure,
        emit_ptx,
        explore,
        lower,
        parse,
        ptxas,
        run,
        validate,
    )
    from xdsl_tmem.backend.ptxas import KernelStats
    from xdsl_tmem.fence_policy import FencePolicy
    from xdsl_tmem.interpreter.explore import Exploration
    from xdsl_tmem.interpreter.launch import (
        BufferArgument,
        Launch,
        LaunchOptions,
        PointerArgument,
        ScalarArgument,
        ScalarField,
        StructArgument,
    )
    from xdsl_tmem.interpreter.run import RunReport, RunResult
    from xdsl_tmem.interpreter.tma import TensorMapArgument
    from xdsl_tmem.interpreter.validate import Stage, Validation
    from xdsl_tmem.kernels import KernelConfigError, MatmulConfig, build_matmul, kernel_text
    from xdsl_tmem.universe import make_context

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "CompileError",
            "KernelFailure",
            "apply_passes",
            "describe_failure",
            "emit_ptx",
            "explore",
            "lower",
            "parse",
            "ptxas",
            "run",
            "validate",
        ),
        "xdsl_tmem.api",
    ),
    "KernelStats": "xdsl_tmem.backend.ptxas",
    "FencePolicy": "xdsl_tmem.fence_policy",
    "Exploration": "xdsl_tmem.interpreter.explore",
    **dict.fromkeys(
        (
            "BufferArgument",
            "Launch",
            "LaunchOptions",
            "PointerArgument",
            "ScalarArgument",
            "ScalarField",
            "StructArgument",
        ),
        "xdsl_tmem.interpreter.launch",
    ),
    "RunReport": "xdsl_tmem.interpreter.run",
    "RunResult": "xdsl_tmem.interpreter.run",
    "TensorMapArgument": "xdsl_tmem.interpreter.tma",
    "Stage": "xdsl_tmem.interpreter.validate",
    "Validation": "xdsl_tmem.interpreter.validate",
    **dict.fromkeys(("KernelConfigError", "MatmulConfig", "build_matmul", "kernel_text"), "xdsl_tmem.kernels"),
    "make_context": "xdsl_tmem.universe",
}
"""Each public name and the module that defines it."""

__all__ = [
    "BufferArgument",
    "CompileError",
    "Exploration",
    "FencePolicy",
    "KernelConfigError",
    "KernelFailure",
    "KernelStats",
    "Launch",
    "LaunchOptions",
    "MatmulConfig",
    "PointerArgument",
    "RunReport",
    "RunResult",
    "ScalarArgument",
    "ScalarField",
    "Stage",
    "StructArgument",
    "TensorMapArgument",
    "Validation",
    "apply_passes",
    "build_matmul",
    "describe_failure",
    "emit_ptx",
    "explore",
    "kernel_text",
    "lower",
    "make_context",
    "parse",
    "ptxas",
    "run",
    "validate",
]


_SUBMODULES = ("api", "kernels", "reference")
"""The documented modules, also reachable as attributes (`xdsl_tmem.reference.kmajor_matrix`)."""


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return importlib.import_module(f"xdsl_tmem.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'xdsl_tmem' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})

"""The `ptx` target (`-t ptx{arch=sm_100a}`) and the `convert-to-ptx` pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.target import Target

from xdsl_tmem.backend.isel import select_module
from xdsl_tmem.backend.printer import ptx_text
from xdsl_tmem.backend.targets import DEFAULT_ARCH, Arch, arch_named
from xdsl_tmem.diagnostics import LocatedError
from xdsl_tmem.dialects import ptx


def _arch(module: ModuleOp, name: str) -> Arch:
    try:
        return arch_named(name)
    except ValueError as e:
        raise LocatedError(module, str(e)) from None


def to_ptx_module(module: ModuleOp, arch: str = DEFAULT_ARCH) -> ptx.ModuleOp:
    """The `ptx.module` of `module`: itself if already selected, else selected now."""
    for op in module.body.block.ops:
        if isinstance(op, ptx.ModuleOp):
            return op
    return select_module(module, _arch(module, arch))


def emit_ptx(module: ModuleOp, arch: str = DEFAULT_ARCH) -> str:
    """PTX text for an nvvm-level (or already selected) module."""
    return ptx_text(to_ptx_module(module, arch))


@dataclass(frozen=True)
class PTXTarget(Target):
    """Emit PTX: `-t ptx` or `-t 'ptx{arch=sm_103a}'` (sm_100a, sm_100f, sm_103a, sm_110a)."""

    name = "ptx"
    arch: str = DEFAULT_ARCH

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_ptx(module, self.arch))


@dataclass(frozen=True)
class ConvertToPtxPass(ModulePass):
    """Replace the module's contents by its `ptx.module` (instruction selection)."""

    name = "convert-to-ptx"
    arch: str = DEFAULT_ARCH

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        selected = to_ptx_module(op, self.arch)
        if selected.parent is not None:
            return
        for inner in list(op.body.block.ops):
            inner.detach()
            inner.erase()
        op.body.block.add_op(selected)

"""The PTX targets: the supported architectures and what each can do (`Arch`,
verified with ptxas), the xDSL target `-t ptx{arch=sm_100a}` and the `convert-to-ptx`
pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.target import Target

from xdsl_tmem.backend.isel import select_module
from xdsl_tmem.backend.printer import ptx_text
from xdsl_tmem.diagnostics import LocatedError
from xdsl_tmem.dialects import ptx


@dataclass(frozen=True)
class Arch:
    """A `.target` with the lowest `.version` that carries tcgen05 on it."""

    name: str
    version: str
    mma_i8: bool
    """`tcgen05.mma.kind::i8`: only sm_100a / sm_101a / sm_110a."""
    shift: bool
    """`tcgen05.shift`: only the `a` targets."""
    mma_scale: bool
    """The `scale-input-d` immediate of `tcgen05.mma`: not on sm_110a (ptxas 13.0:
    "Feature 'argument scale-inp-d-imm' not supported on .target 'sm_110a'")."""


ARCHS: dict[str, Arch] = {
    arch.name: arch
    for arch in (
        Arch("sm_100a", "8.6", mma_i8=True, shift=True, mma_scale=True),
        Arch("sm_100f", "8.8", mma_i8=False, shift=False, mma_scale=True),
        Arch("sm_103a", "8.8", mma_i8=False, shift=True, mma_scale=True),
        Arch("sm_110a", "9.0", mma_i8=True, shift=True, mma_scale=False),
    )
}
DEFAULT_ARCH = "sm_100a"


def arch_named(name: str) -> Arch:
    """The target called `name`; ValueError listing the supported ones otherwise."""
    if name not in ARCHS:
        raise ValueError(f"unsupported PTX target '{name}'; supported: {', '.join(ARCHS)}")
    return ARCHS[name]


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
    """The PTX target: sm_100a (default), sm_100f, sm_103a or sm_110a."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(emit_ptx(module, self.arch))


@dataclass(frozen=True)
class ConvertToPtxPass(ModulePass):
    """Replace the module's contents by its `ptx.module` (instruction selection)."""

    name = "convert-to-ptx"
    arch: str = DEFAULT_ARCH
    """The PTX target: sm_100a (default), sm_100f, sm_103a or sm_110a."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        selected = to_ptx_module(op, self.arch)
        if selected.parent is not None:
            return
        for inner in list(op.body.block.ops):
            inner.detach()
            inner.erase()
        op.body.block.add_op(selected)

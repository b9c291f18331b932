"""Entry point (`xdsl.universe`) through which stock `xdsl-opt` sees our dialects and passes.

Factories import lazily so that loading the plugin costs nothing until a dialect
or pass is asked for.
"""

from collections.abc import Callable
from functools import cache

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target


def _tmem() -> Dialect:
    from xdsl_tmem.dialects.tmem import Tmem

    return Tmem


def _nvvm() -> Dialect:
    from xdsl_tmem.dialects.nvvm import NVVM

    return NVVM


def _expand_tmem_regions() -> type[ModulePass]:
    from xdsl_tmem.passes.expand_tmem_regions import ExpandTmemRegionsPass

    return ExpandTmemRegionsPass


def _convert_tmem_to_nvvm() -> type[ModulePass]:
    from xdsl_tmem.passes.convert_tmem_to_nvvm import ConvertTmemToNvvmPass

    return ConvertTmemToNvvmPass


def _lower_tmem() -> type[ModulePass]:
    from xdsl_tmem.passes.lower_tmem import LowerTmemPass

    return LowerTmemPass


def _convert_to_ptx() -> type[ModulePass]:
    from xdsl_tmem.backend.target import ConvertToPtxPass

    return ConvertToPtxPass


def _recognize_ptx() -> type[ModulePass]:
    from xdsl_tmem.frontend.recognize import RecognizePtxPass

    return RecognizePtxPass


def _ptx_dialect() -> Dialect:
    from xdsl_tmem.dialects.ptx import PTX

    return PTX


def _ptx_target() -> type[Target]:
    from xdsl_tmem.backend.target import PTXTarget

    return PTXTarget


TMEM_UNIVERSE = Universe(
    all_dialects={"tmem": _tmem, "nvvm": _nvvm, "ptx": _ptx_dialect},
    all_passes={
        "tmem-expand-regions": _expand_tmem_regions,
        "convert-tmem-to-nvvm": _convert_tmem_to_nvvm,
        "lower-tmem": _lower_tmem,
        "convert-to-ptx": _convert_to_ptx,
        "recognize-ptx": _recognize_ptx,
    },
    all_targets={"ptx": _ptx_target},
)


@cache
def multiverse() -> Universe:
    """xDSL's `Universe.get_multiverse()`, once per process: it scans every installed
    distribution's entry points (~10 ms each call), and a driver asks for dialects,
    passes and targets separately. Installed packages do not change during a run."""
    return Universe.get_multiverse()


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass both drivers accept after `-p`: all of xDSL's (plugins included, which
    contain ours when the package is installed), then ours for an uninstalled checkout."""
    passes = dict(multiverse().all_passes)
    for name, factory in TMEM_UNIVERSE.all_passes.items():
        passes.setdefault(name, factory)
    return passes


def add_tmem_dialects(ctx: Context) -> None:
    """Our dialects, where xDSL's entry-point plugins have not registered them already
    (an uninstalled checkout), and the llvm ops and attributes that upstream NVVM
    programs use and xDSL's llvm dialect lacks."""
    from xdsl_tmem.dialects.llvm_ext import load_llvm_extensions

    known = set(ctx.registered_dialect_names)
    for name, factory in TMEM_UNIVERSE.all_dialects.items():
        if name not in known:
            ctx.register_dialect(name, factory)
    load_llvm_extensions(ctx)


def make_context() -> Context:
    """Every dialect `xdsl-tmem-opt` knows: all of xDSL's (plugins included), then ours."""
    ctx = Context()
    for name, factory in multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    add_tmem_dialects(ctx)
    return ctx

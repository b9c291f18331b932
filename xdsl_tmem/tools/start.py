"""The console scripts' entry points: the driver imported with the cyclic garbage collector
paused, then its objects frozen out of the collector's generations.

Importing a driver builds ~600 op and attribute classes and their definitions: ~95,000
long-lived objects, over which the collector runs ~190 times as they accumulate, freeing
~500 (~10% of the import's CPU time on the 2-core machine). Frozen (`gc.freeze`), they are
also skipped by every later collection during the run; collection itself stays on, so the
IR that passes erase is still reclaimed."""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable
from typing import cast


def _start(module: str) -> None:
    gc.disable()
    try:
        entry = cast(Callable[[], None], importlib.import_module(module).entry)
    finally:
        gc.enable()
    gc.freeze()
    entry()


def opt() -> None:
    """`xdsl-tmem-opt` (`xdsl_tmem.tools.opt`)."""
    _start("xdsl_tmem.tools.opt")


def run() -> None:
    """`xdsl-tmem-run` (`xdsl_tmem.tools.run`)."""
    _start("xdsl_tmem.tools.run")

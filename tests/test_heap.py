"""The cyclic collector around a run (interpreter/heap.py): the objects older than the run
are frozen while it executes and given back after; the run's own state is freed at its end."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
from xdsl.parser import Parser

from xdsl_tmem.interpreter import run_kernel
from xdsl_tmem.interpreter.executor import Warp
from xdsl_tmem.tools.run import make_context

REFERENCE = Path(__file__).resolve().parent.parent / "lit_tests" / "nvvm" / "ref_pipeline.mlir"


def _run() -> np.ndarray:
    module = Parser(make_context(), REFERENCE.read_text()).parse_module()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(128 * 32).astype(np.float16)
    b = rng.standard_normal(256 * 32).astype(np.float16)
    args = {"out": np.zeros(128 * 256, np.float32), "a": a, "b": b, "ntiles": 1}
    return run_kernel(module, "ref_pipeline", block=160, args=args).outputs["out"]


def _warps() -> int:
    return sum(isinstance(o, Warp) for o in gc.get_objects())


def test_a_run_frees_its_warps_and_unfreezes() -> None:
    gc.collect()
    before = _warps()
    out = _run()
    assert gc.get_freeze_count() == 0
    assert _warps() == before  # its five warps, in cycles with their cluster, are gone
    assert np.count_nonzero(out)


def test_a_callers_freeze_is_left_alone() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        _run()
        # Still frozen (unfreezing would have released them all), less what died meanwhile.
        assert 0 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()

"""Both drivers' --help: our passes and targets with their options (from the pass
registry), the --arg forms and the limits' defaults; not xDSL's ~100 stock passes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from xdsl_tmem.backend.target import ARCHS
from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter.launch import Limits
from xdsl_tmem.universe import TMEM_UNIVERSE

STOCK = ("apply-eqsat-pdl", "convert-stencil-to-csl-stencil", "convert-riscv-scf-to-riscv-cf")
"""Stock xDSL passes, unrelated to ours, that a long list would show."""


def _help(module: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert not done.stderr
    return done.stdout


@pytest.mark.parametrize("module", ["xdsl_tmem.tools.run", "xdsl_tmem.tools.opt"])
def test_help_names_our_passes_and_targets_with_their_options(module: str) -> None:
    text = _help(module)
    for name in [*TMEM_UNIVERSE.all_passes, *TMEM_UNIVERSE.all_targets]:
        assert f"\n  {name}\n" in text, name
    ours = text.split("passes of xdsl-tmem")[1]
    for value in FencePolicy:
        assert value.value in ours.split("fence-policy=")[1]
    for arch in ARCHS:
        assert arch in ours.split("arch=")[1]
    for stock in STOCK:
        assert stock not in text


def test_run_help_has_the_arg_forms_and_the_defaults() -> None:
    text = _help("xdsl_tmem.tools.run")
    for form in ("FILE.npy", "zeros:DTYPE:SHAPE", "rand:DTYPE:SHAPE:SEED", "ptr:BUF", "struct:OFF=", "tensormap:"):
        assert form in text, form
    limits = Limits()
    assert f"(default {limits.max_steps})" in " ".join(text.split())
    assert f"(default {limits.max_states})" in " ".join(text.split())
    assert f"(default {limits.max_memory >> 20} MiB)" in " ".join(text.split())
    for code in ("2 deadlock", "3 hazard", "5 translation validation"):
        assert code in " ".join(text.split())

"""Progress of long work: the interpreter's `progress` callbacks count what the results
count, and the drivers' tqdm bar appears only on a terminal (tools/progress.py)."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import pytest
from support import CLEAN, SCHEDULES, run_cli
from test_timeline import TMA_LAUNCH
from xdsl.dialects.builtin import ModuleOp

from xdsl_tmem.diagnostics import SourceMap, load_source
from xdsl_tmem.interpreter.explore import explore_exhaustive, explore_random
from xdsl_tmem.interpreter.launch import Launch
from xdsl_tmem.interpreter.run import run_launch
from xdsl_tmem.tools import progress as progress_module
from xdsl_tmem.tools import run
from xdsl_tmem.tools.progress import progress_bar
from xdsl_tmem.tools.run import EXIT_DEADLOCK, EXIT_OK
from xdsl_tmem.universe import make_context

CG1, CG1_LAUNCH = CLEAN[0]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _launch(path: str, launch: str) -> tuple[ModuleOp, Launch]:
    parsed = run.build_parser().parse_args([path, *shlex.split(launch)])
    ctx = make_context()
    module = load_source(ctx, Path(path).read_bytes(), path, SourceMap())
    return module, run.parse_launch(parsed, None)


def test_the_callbacks_count_what_the_results_count() -> None:
    module, launch = _launch(str(CG1), CG1_LAUNCH)
    seen: list[tuple[int, int | None]] = []
    result = explore_random(module, launch, 3, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert result.explored == 3
    seen.clear()
    result = explore_exhaustive(module, launch, progress=lambda done, total: seen.append((done, total)))
    assert [d for d, _ in seen] == list(range(1, result.explored + 1))
    assert {t for _, t in seen} == {None}


def test_a_run_counts_its_clusters() -> None:
    path = str(CG1).replace("matmul_cg1", "tma_gemm_cg1")
    launch = TMA_LAUNCH.replace("128x128:1", "512x128:1").replace("m=128", "m=512")
    launch = launch.replace("128x128:256:64x128", "128x512:256:64x128").replace(
        "zeros:f32:128x256", "zeros:f32:512x256"
    )
    module, parsed = _launch(path, launch + " --grid 4")
    seen: list[tuple[int, int | None]] = []
    run_launch(module, parsed, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4)]  # 4 clusters of one CTA, told before each


def test_no_bar_off_a_terminal() -> None:
    with progress_bar("x", "state", io.StringIO()) as update:
        assert update is None


def test_a_bar_on_a_terminal_is_drawn_then_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(progress_module, "REFRESH", 0.0)
    screen = _Terminal()
    with progress_bar("explore random", "schedule", screen) as update:
        assert update is not None
        for done in range(1, 4):
            update(done, 3)
    text = screen.getvalue()
    assert "explore random" in text
    assert "3/3" in text
    assert "schedule/s" in text
    assert text.endswith("\r")  # the bar's line is blanked at the end (leave=False)


def test_the_driver_shows_progress_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = run_cli(capsys, str(SCHEDULES / "alloc_order_deadlock.mlir"), "--kernel", "k", "--block", "64",
                    "--explore", "exhaustive")  # fmt: skip
    assert plain.code == EXIT_DEADLOCK
    assert "states/s" not in plain.err
    assert "state/s" not in plain.err
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(progress_module, "REFRESH", 0.0)
    screen = _Terminal()
    monkeypatch.setattr(progress_module.sys, "stderr", screen)
    result = run_cli(capsys, str(CG1), *shlex.split(CG1_LAUNCH), "--explore", "random:3")
    assert result.code == EXIT_OK
    assert "explore random" in screen.getvalue()
    assert "3/3" in screen.getvalue()
    assert result.out.startswith("explore random: SAFE: 3 schedules")

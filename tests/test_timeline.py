"""`xdsl-tmem-run --timeline FILE.png|svg`: the picture of a run (interpreter/timeline.py).

Expectations come from the programs, not from the drawing code: the lanes a launch has
(block / 32 warps, a tensor core per CTA, a TMA engine where the kernel issues TMA), the
MMAs and box copies the kernel's loops issue, the hazard class or deadlock a seeded-bug
program's header names, and the CLI contract for a misused flag (one error line, exit 1).
The SVG keeps its text as text, so the labels are read back from the file.
"""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import CLEAN, CORPUS, EXAMPLES, SCHEDULES, run_cli

from xdsl_tmem.interpreter.timeline import MAX_LANES, TMA_TID, _collect  # pyright: ignore[reportPrivateUsage]
from xdsl_tmem.interpreter.trace import CORE_TID
from xdsl_tmem.tools.run import EXIT_DEADLOCK, EXIT_ERROR, EXIT_HAZARD, EXIT_OK

CG1, CG1_LAUNCH = CLEAN[0]
TMA_LAUNCH = (
    "--kernel tma_gemm_cg1 --block 192 --dynamic-shared 196608 --arg a=rand:f16:128x128:1 --arg b=rand:f16:256x128:2 "
    "--arg tma_a=tensormap:a:f16:128x128:256:64x128:swizzle=128B --arg tma_b=tensormap:b:f16:128x256:256:64x256:"
    "swizzle=128B --arg c=zeros:f32:128x256 --arg m=128 --arg n=256 --arg k=128"
)


def _texts(svg: Path) -> list[str]:
    return [t.text or "" for t in ET.parse(svg).iter() if t.tag.endswith("text")]


def _header(path: Path, field: str) -> str:
    return next(
        line.split(":", 1)[1].strip() for line in path.read_text().splitlines() if line.startswith(f"// {field}:")
    )


def test_a_correct_run_draws_every_warp_and_no_failure(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    svg = tmp_path / "cg1.svg"
    plain = run_cli(capsys, str(CG1), *shlex.split(CG1_LAUNCH))
    drawn = run_cli(capsys, str(CG1), *shlex.split(CG1_LAUNCH), "--timeline", str(svg))
    assert drawn.code == plain.code == EXIT_OK
    # The summary is the same but for the run's wall time.
    assert drawn.out.split("schedule rr")[1].split("\n", 1)[1] == plain.out.split("schedule rr")[1].split("\n", 1)[1]
    texts = _texts(svg)
    for lane in [f"CTA (0, 0, 0) warp {w}" for w in range(160 // 32)] + ["CTA (0, 0, 0) tensor core"]:
        assert lane in texts
    assert not any("hazard" in t or "deadlock" in t for t in texts)
    assert any("ran to completion" in t for t in texts)
    assert "CTA (0, 0, 0) TMA engine" not in texts  # the thread-copy example issues no TMA


def test_the_lanes_hold_the_kernels_mmas_and_box_copies(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    assert (
        run_cli(capsys, str(EXAMPLES / "tma_gemm_cg1.mlir"), *shlex.split(TMA_LAUNCH), "--trace", str(trace)).code == 0
    )
    lanes = _collect(json.loads(trace.read_text())["traceEvents"])
    # k = 128: two 64-wide k-blocks, an A and a B box each; four MMAs of K = 16 per block.
    assert len(lanes.turns[0, TMA_TID]) == 2 * 2
    assert len(lanes.flights[0, CORE_TID]) == 2 * 4
    assert lanes.names[0, TMA_TID] == "CTA (0, 0, 0) TMA engine"
    png = tmp_path / "t.png"
    assert (
        run_cli(capsys, str(EXAMPLES / "tma_gemm_cg1.mlir"), *shlex.split(TMA_LAUNCH), "--timeline", str(png)).code == 0
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_hazard_is_marked_with_its_class(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = CORPUS / "tmem_write_after_read.mlir"
    svg = tmp_path / "war.svg"
    launch = shlex.split(_header(path, "Run"))
    plain = run_cli(capsys, str(path), *launch)
    drawn = run_cli(capsys, str(path), *launch, "--timeline", str(svg))
    assert drawn.code == plain.code == EXIT_HAZARD
    assert drawn.err == plain.err  # the diagnostic is unchanged
    assert f"hazard {_header(path, 'Hazard class')}" in _texts(svg)


def test_a_deadlock_is_marked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = CORPUS / "missing_commit.mlir"
    svg = tmp_path / "dl.svg"
    assert run_cli(capsys, str(path), *shlex.split(_header(path, "Run")), "--timeline", str(svg)).code == EXIT_DEADLOCK
    assert "deadlock (missing-commit)" in _texts(svg)


def test_explore_draws_the_failing_schedule_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    svg = tmp_path / "x.svg"
    failing = run_cli(capsys, str(SCHEDULES / "alloc_order_deadlock.mlir"), "--kernel", "k", "--block", "64",
                      "--explore", "exhaustive", "--timeline", str(svg))  # fmt: skip
    assert failing.code == EXIT_DEADLOCK
    assert f"timeline of the failing schedule written to {svg}" in failing.out
    assert any(t.startswith("deadlock") for t in _texts(svg))
    safe = tmp_path / "safe.svg"
    result = run_cli(capsys, str(CG1), *shlex.split(CG1_LAUNCH), "--explore", "random:2", "--timeline", str(safe))
    assert result.code == EXIT_OK
    assert f"no failing schedule: no timeline written to {safe}" in result.out
    assert not safe.exists()


def test_a_large_grid_says_which_lanes_it_shows(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    launch = TMA_LAUNCH.replace("128x128:1", "1024x128:1").replace("m=128", "m=1024") + " --grid 8"
    launch = launch.replace("128x128:256:64x128", "128x1024:256:64x128").replace(
        "c=zeros:f32:128x256", "c=zeros:f32:1024x256"
    )
    result = run_cli(
        capsys, str(EXAMPLES / "tma_gemm_cg1.mlir"), *shlex.split(launch), "--timeline", str(tmp_path / "g.png")
    )
    assert result.code == EXIT_OK, result.err
    lanes = 8 * (192 // 32 + 2)  # 8 CTAs: 6 warps, a tensor core and a TMA engine each
    assert f"note: the timeline shows the first {MAX_LANES} of {lanes} lanes" in result.out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--timeline", "x.pdf"], "error: --timeline: 'x.pdf' must end in .png or .svg (the picture's format)\n"),
        (["--timeline", "/nonexistent/dir/x.png"], "error: --timeline '/nonexistent/dir/x.png': the directory"),
        (["--timeline", "x.png", "-p", "lower-tmem", "--validate-lowering"],
         "error: --timeline cannot be combined with --validate-lowering\n"),
    ],
)  # fmt: skip
def test_misuse_is_one_error_line(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    result = run_cli(capsys, str(CG1), *shlex.split(CG1_LAUNCH), *flags)
    assert result.code == EXIT_ERROR
    assert result.err.startswith(message)
    assert result.err.count("\n") == 1

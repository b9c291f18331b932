"""The seeded-bug corpus (tests/corpus/): one program per hazard class of
semantics.md §9, each flagged with its class and exit code; and no false alarms."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support import CLEAN, CORPUS, header, run_cli

from xdsl_tmem.tools import run

CLASSES = {
    "tmem-read-before-commit",
    "tmem-write-after-read",
    "release-before-wait-ld",
    "missing-commit",
    "duplicate-commit",
    "missing-epilogue-arrive",
    "parity-aliasing",
    "dealloc-while-in-use",
    "alloc-after-relinquish",
    "missing-dealloc",
    "lane-quarter-violation",
    "divergent-sync-aligned",
    "barrier-before-init",
    "remote-arrive-before-fence",
    "mixed-cta-group",
    "ncols-invalid",
    "exit-with-pending-remote",
}
PROGRAMS = sorted(CORPUS.glob("*.mlir"))


def test_the_corpus_covers_every_class() -> None:
    assert {header(p, "Hazard class") for p in PROGRAMS} == CLASSES


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_seeded_bug_is_caught_with_its_class(capsys: pytest.CaptureFixture[str], program: Path) -> None:
    """Exit 3 with `error: hazard <class>:` for a hazard; a deadlock (exit 2) names the
    class that explains it."""
    klass, expected = header(program, "Hazard class"), int(header(program, "Exit"))
    result = run_cli(capsys, str(program), *shlex.split(header(program, "Run")))
    code, err = result.code, result.err
    assert code == expected, err
    if expected == run.EXIT_HAZARD:
        assert re.search(rf"^\S+: error: hazard {klass}: ", err, re.M), err
    else:
        assert err.startswith("error: deadlock:")
        assert f"note: cause: hazard {klass}: " in err


def test_missing_fences_are_a_hazard_only_under_the_strict_policy(capsys: pytest.CaptureFixture[str]) -> None:
    program = CORPUS / "strict_fences.mlir"
    args = shlex.split(header(program, "Run"))
    assert run_cli(capsys, str(program), *args).code == run.EXIT_HAZARD
    assert run_cli(capsys, str(program), *args, "--fence-policy", "mojo").code == run.EXIT_OK


def test_a_race_report_names_both_accesses(capsys: pytest.CaptureFixture[str]) -> None:
    program = CORPUS / "tmem_write_after_read.mlir"
    result = run_cli(capsys, str(program), *shlex.split(header(program, "Run")))
    code, err = result.code, result.err
    assert code == run.EXIT_HAZARD
    lines = err.splitlines()
    assert re.match(
        r"\S+:\d+:\d+: error: hazard tmem-write-after-read: nvvm.tcgen05.mma by warp 4 lane 0 \(TMEM lanes 0-127, "
        r"columns 0-255\) is not ordered after nvvm.tcgen05.ld by warp \d \(TMEM lanes \d+-\d+, columns \d+-\d+\)",
        lines[0],
    ), err
    assert any(re.match(r"\S+:\d+:\d+: note: the earlier access: nvvm.tcgen05.ld", line) for line in lines), err


@pytest.mark.parametrize("policy", ["strict", "mojo"])
@pytest.mark.parametrize("lowered", [False, True], ids=["as-written", "lowered"])
@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_no_false_alarms(
    capsys: pytest.CaptureFixture[str], program: Path, args: str, lowered: bool, policy: str
) -> None:
    """Every shipped example and the reference pipeline are clean, at the tmem level and
    lowered with the matching fence policy, checked under that policy."""
    passes = ["-p", f"lower-tmem{{fence-policy={policy}}}"] if lowered else []
    result = run_cli(capsys, str(program), *passes, *shlex.split(args), "--fence-policy", policy)
    code, err = result.code, result.err
    assert code == run.EXIT_OK, err

"""The documentation's code runs as written.

* Every ```python fence of README.md and docs/*.md runs, through `pytest-markdown-docs`
  (its `--markdown-docs` collector, in a pytest subprocess, so that its import of every
  collected `.py` file stays out of the main suite); each fence must pass.
* Every command of README.md's ```sh blocks runs with bash from a scratch directory that
  sees the clone's files (so that what a command writes, e.g. a `--trace` file, lands
  there), and must exit 0. A ```console block is a transcript: each `$ command` runs and
  its output must be the one shown (`...` stands for any lines, wall times `0.029 s` for
  any time), with exit code 1 where it shows an `error:` and 0 otherwise.

Commands that install software, the test suite itself, and the few that take long are
skipped, each with its reason; a command needing mlir-opt-22 / llc-22 skips without them
(fails under CI).
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import ROOT, missing

from xdsl_tmem.tools import run

README = ROOT / "README.md"
MARKDOWN = [README, *sorted((ROOT / "docs").glob("*.md"))]
VISIBLE = ("examples", "tests", "lit_tests", "benchmarks", "docs", "silicon")
"""What a command may read, linked into its scratch directory."""

FENCE = re.compile(r"^( *)```(\w+)([^\n]*)\n(.*?)^\1```$", re.M | re.S)

SKIP = {
    "pip install": "installs packages",
    "python -m pytest": "the test suite itself",
    "--explore random:1000": "long: 1000 schedules take ~35 s on 2 cores (tests/test_explore_jobs.py runs --jobs)",
    "--explore random:100 ": "long: ~13 s on 2 cores (tests/test_explore.py runs random exploration)",
    "tma_gemm_cg1.mlir $ARGS -p lower-tmem -t ptx --validate-lowering": "long: ~10 s on 2 cores "
    "(tests/test_tma_gemm.py compares every level of the same GEMM)",
}
"""A command containing the key is skipped for the reason given."""
UPSTREAM_TOOLS = ("mlir-opt-22", "mlir-translate-22", "llc-22")
TIMEOUT = 120


@dataclass(frozen=True)
class Fence:
    path: Path
    line: int
    lang: str
    info: str
    body: str


def fences(path: Path) -> list[Fence]:
    text = path.read_text()
    found: list[Fence] = []
    for m in FENCE.finditer(text):
        indent = len(m.group(1))
        body = "\n".join(line[indent:] for line in m.group(4).splitlines())
        found.append(Fence(path, text.count("\n", 0, m.start()) + 1, m.group(2), m.group(3).strip(), body))
    return found


# --------------------------------------------------------------------------------------
# Python fences
# --------------------------------------------------------------------------------------


def python_fences(path: Path) -> list[Fence]:
    return [f for f in fences(path) if f.lang in ("python", "python3", "py") and "notest" not in f.info.split()]


def test_fences_are_found() -> None:
    """The fence parser sees the snippets a reader sees (guards the runners below)."""
    assert len(python_fences(ROOT / "docs" / "interpreter.md")) == 2
    commands = [c for f in fences(README) if f.lang == "sh" for c in commands_of(f.body)[1]]
    assert any(c.startswith("xdsl-tmem-opt examples/matmul_cg1.mlir") for c in commands)


def test_every_python_snippet_runs(tmp_path: Path) -> None:
    expected = {p: len(python_fences(p)) for p in MARKDOWN if python_fences(p)}
    assert sum(expected.values()) >= 4
    report = tmp_path / "snippets.xml"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--markdown-docs"]
    argv += [f"--junitxml={report}", *(str(p.relative_to(ROOT)) for p in expected)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    ran: dict[str, int] = {}
    for case in ElementTree.parse(report).iter("testcase"):
        outcome = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        assert not outcome, f"{case.get('classname')} {case.get('name')}: {outcome}"
        source = case.get("classname", "")  # e.g. docs.interpreter.md
        ran[source] = ran.get(source, 0) + 1
    assert ran == {".".join(p.relative_to(ROOT).parts): n for p, n in expected.items()}


# --------------------------------------------------------------------------------------
# Shell commands
# --------------------------------------------------------------------------------------


def logical_lines(body: str) -> list[str]:
    """Lines with backslash continuations joined."""
    lines: list[str] = []
    pending = ""
    for line in body.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    assert not pending, f"a continuation runs off the block: {pending!r}"
    return lines


def commands_of(body: str) -> tuple[list[str], list[str]]:
    """(the block's variable assignments, its commands), comments and blank lines dropped."""
    assignments: list[str] = []
    commands: list[str] = []
    for line in logical_lines(body):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        (assignments if re.match(r"^[A-Z_]+=", stripped) else commands).append(stripped)
    return assignments, commands


@dataclass(frozen=True)
class Command:
    where: str
    script: str
    command: str
    expected: list[str] | None = None
    """A transcript's output (console blocks); None: the command must only exit 0."""


def transcript(body: str) -> list[tuple[str, list[str]]]:
    """A console block's (command, expected output lines) pairs."""
    steps: list[tuple[str, list[str]]] = []
    for line in logical_lines(body):
        if line.startswith("$ "):
            steps.append((line[2:].strip(), []))
        else:
            assert steps, f"output before any command: {line!r}"
            steps[-1][1].append(line.rstrip())
    return steps


def readme_commands() -> list[Command]:
    found: list[Command] = []
    for fence in fences(README):
        where = f"README.md:{fence.line}"
        if fence.lang == "sh":
            assignments, commands = commands_of(fence.body)
            found += [Command(where, "\n".join([*assignments, c]), c) for c in commands]
        elif fence.lang == "console":
            found += [Command(where, c, c, out) for c, out in transcript(fence.body)]
    return found


COMMANDS = readme_commands()


def normalised(lines: list[str]) -> list[str]:
    return [re.sub(r"\b\d+\.\d+ s\b", "<t> s", line.rstrip()) for line in lines]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line; a line `...` matches any number of lines."""
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def scratch(tmp_path: Path) -> Path:
    for name in VISIBLE:
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def test_readme_commands_are_found() -> None:
    assert len(COMMANDS) >= 10
    assert sum(c.expected is not None for c in COMMANDS) >= 2


@pytest.mark.parametrize("command", COMMANDS, ids=[f"{c.where}:{c.command[:60]}" for c in COMMANDS])
def test_readme_command(command: Command, tmp_path: Path) -> None:
    for key, reason in SKIP.items():
        if key in command.command + " ":
            pytest.skip(reason)
    for tool in UPSTREAM_TOOLS:
        if re.search(rf"\b{tool}\b", command.command) and shutil.which(tool) is None:
            missing(tool, "apt-get install -y mlir-22-tools llvm-22")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["OPENBLAS_NUM_THREADS"] = "1"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail\n{command.script}"],
        cwd=scratch(tmp_path), env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    if command.expected is None:
        assert done.returncode == 0, output[-4000:]
        return
    expected_code = 1 if any(": error: " in line for line in command.expected) else 0
    assert done.returncode == expected_code, output[-4000:]
    assert matches(normalised(command.expected), normalised(output.splitlines())), output


# --------------------------------------------------------------------------------------
# docs/ shell commands: checked without running (most take 5-20 s each on 2 cores; the
# README's cover each tool and mode)
# --------------------------------------------------------------------------------------

REPO_PATH = re.compile(r"^(?:examples|tests|lit_tests|benchmarks|docs|silicon)/[\w./-]+$")


def docs_commands() -> list[Command]:
    found: list[Command] = []
    for path in MARKDOWN[1:]:
        for fence in fences(path):
            if fence.lang == "sh":
                assignments, commands = commands_of(fence.body)
                where = f"{path.relative_to(ROOT)}:{fence.line}"
                found += [Command(where, "\n".join([*assignments, c]), c) for c in commands]
    return found


DOCS_COMMANDS = docs_commands()


def expanded(command: Command) -> list[str]:
    """The command's words, the block's `NAME="..."` variables substituted."""
    variables: dict[str, str] = {}
    for line in command.script.splitlines()[:-1]:
        name, _, value = line.partition("=")
        variables[name] = " ".join(shlex.split(value))
    text = re.sub(r"\$(\w+)", lambda m: variables.get(m.group(1), m.group(0)), command.command)
    return shlex.split(text, comments=True)


@pytest.mark.parametrize("command", DOCS_COMMANDS, ids=[f"{c.where}:{c.command[:50]}" for c in DOCS_COMMANDS])
def test_docs_command_names_real_files_and_options(command: Command) -> None:
    """No placeholder files: every repository path a docs/ command names exists, and an
    `xdsl-tmem-run` command line is one its argument parser accepts."""
    words = expanded(command)
    assert not [w for w in words if w.startswith("$")], f"undefined variable in {command.command!r}"
    for word in words:
        if REPO_PATH.match(word):
            assert (ROOT / word).exists(), f"{command.where}: {word} does not exist"
    if words[0] == "xdsl-tmem-run":
        argv = list(itertools.takewhile(lambda w: w not in ("|", "&&", ">"), words[1:]))
        try:
            run.build_parser().parse_args(argv)
        except (SystemExit, run.UsageError) as e:
            pytest.fail(f"{command.where}: xdsl-tmem-run rejects {argv}: {e}")

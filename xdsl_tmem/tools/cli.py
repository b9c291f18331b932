"""What both drivers check on their command line: pass pipelines, targets, output paths.

Every mistake raises `CliError`, whose message says what was wrong and what is
allowed; the drivers print it as one `error:` line and exit with code 1. Ctrl-C ends
a driver with `EXIT_INTERRUPTED` and one line, never a traceback.
"""

from __future__ import annotations

import ast
import atexit
import dataclasses
import difflib
import inspect
import itertools
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType, get_pass_option_infos
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from xdsl_tmem.universe import TMEM_UNIVERSE

EXIT_INTERRUPTED = 130
"""128 + SIGINT: what a shell reports for a command that Ctrl-C stopped."""


class CliError(Exception):
    """A command-line mistake."""


def exit_now(code: int) -> None:
    """End the driver process with `code` without tearing the interpreter down.

    Python's shutdown frees every module and object one by one (the dialects' hundreds of
    op classes, the IR): ~10% of a one-kernel `xdsl-tmem-opt` run, with nothing left to
    do. The streams are flushed and the `atexit` handlers run (temporary directories,
    process pools, ...) first; when a flush fails (e.g. a closed pipe), the ordinary
    `sys.exit` reports it as it always has."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        sys.exit(code)
    atexit._run_exitfuncs()  # pyright: ignore[reportPrivateUsage]
    os._exit(code)  # pyright: ignore[reportPrivateUsage]


def spec_syntax_error(what: str, text: str, error: ArgSpecParseError) -> CliError:
    # xDSL renders the position as `pass-pipeline:1:COL` and the reason as the last line.
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    column = lines[1].rpartition(":")[2] if len(lines) > 1 else "?"
    reason = lines[-1].removesuffix(" here")
    return CliError(f"invalid {what} '{text}' at column {column}: {reason[:1].lower()}{reason[1:]}")


def parse_specs(what: str, text: str) -> list[ArgSpec]:
    """`name{opt=value ...},...` as a list of specs (`what` names it in messages)."""
    try:
        return list(parse_pipeline(text))
    except ArgSpecParseError as e:
        raise spec_syntax_error(what, text, e) from None


def _options(cls: type[Any]) -> list[str]:
    return [f.name.replace("_", "-") for f in dataclasses.fields(cls) if f.init and f.name != "name"]


def _typed_options(cls: type[Any]) -> str:
    """`fence-policy: str = strict, ...` (xDSL's own description of each option)."""
    return ", ".join(
        f"{info.name.replace('_', '-')}: {info.expected_type}"
        + (f" = {info.default_value}" if info.default_value is not None else "")
        for info in get_pass_option_infos(cls)
        if info.name != "name"
    )


def ours_help() -> str:
    """The passes and targets of xdsl-tmem, for the drivers' --help: each with its options
    (xDSL's description of them: name, type, default) and its docstring's first sentence."""
    lines = ["passes of xdsl-tmem (-p NAME or NAME{option=value ...}, comma-separated; stock xDSL passes too):"]
    for name, factory in TMEM_UNIVERSE.all_passes.items():
        lines += _described(name, factory())
    lines.append("targets of xdsl-tmem (-t NAME or NAME{option=value}):")
    for name, factory in TMEM_UNIVERSE.all_targets.items():
        lines += _described(name, factory())
    return "\n".join(lines) + "\n"


def _described(name: str, cls: type[Any]) -> list[str]:
    summary = " ".join((cls.__doc__ or "").split()).split(". ")[0].rstrip(".")
    lines = [f"  {name}", f"      {summary}"]
    documented = attribute_docs(cls)
    for info in get_pass_option_infos(cls):
        if info.name != "name":
            option = info.name.replace("_", "-")
            lines.append(f"      {option}={info.default_value}: {documented.get(info.name, info.expected_type)}")
    return lines


def attribute_docs(cls: type[Any]) -> dict[str, str]:
    """The docstrings under a class's annotated fields (`field: T = default` then a string)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(body, ast.ClassDef)
    docs: dict[str, str] = {}
    for field, after in itertools.pairwise(body.body):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):  # fmt: skip
            docs[field.target.id] = " ".join(after.value.value.split())
    return docs


def instantiate(what: str, spec: ArgSpec, cls: type[Any]) -> Any:
    """`cls.from_spec(spec)` for a pass or target class, with its option names checked."""
    options = _options(cls)
    for given in spec.normalize_parameter_names().parameters:
        if given.replace("_", "-") not in options:
            allowed = f"its options: {', '.join(options)}" if options else "it takes no options"
            raise CliError(f"{what} '{spec.name}' has no option '{given.replace('_', '-')}'; {allowed}")
    try:
        return cls.from_spec(spec)
    except (ValueError, TypeError) as e:
        raise CliError(f"{what} '{spec.name}': {e}; its options: {_typed_options(cls)}") from None


def _unknown(what: str, name: str, known: Iterable[str], ours: Iterable[str]) -> CliError:
    close = difflib.get_close_matches(name, list(known), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return CliError(f"unknown {what} '{name}'{hint} (xdsl-tmem's: {', '.join(sorted(ours))}; --help lists all)")


def parse_pass_pipeline(
    available: Mapping[str, Callable[[], type[ModulePass]]], text: str, callback: PassPipelineCallbackType | None
) -> PassPipeline:
    """`-p`: every pass known and every option valid before anything runs."""
    passes: list[ModulePass] = []
    for spec in parse_specs("pass pipeline", text):
        factory = available.get(spec.name)
        if factory is None:
            raise _unknown("pass", spec.name, available, TMEM_UNIVERSE.all_passes)
        passes.append(instantiate("pass", spec, factory()))
    return PassPipeline(tuple(passes), callback)


def check_output_file(flag: str, path: Path) -> None:
    """A file the driver will write: its directory exists, and it is not a directory."""
    if path.is_dir():
        raise CliError(f"{flag} '{path}' is a directory; give a file name")
    parent = path.parent
    if not parent.is_dir():
        raise CliError(f"{flag} '{path}': the directory '{parent}' does not exist; create it first")
    if not os.access(parent, os.W_OK):
        raise CliError(f"{flag} '{path}': the directory '{parent}' is not writable")


def check_output_dir(flag: str, path: Path) -> None:
    """A directory the driver will create if needed: no file in its way, and writable."""
    existing = path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        what = "is" if existing == path else f"is inside '{existing}', which is"
        raise CliError(f"{flag} '{path}' {what} a file, not a directory; give a directory")
    if not os.access(existing, os.W_OK):
        raise CliError(f"{flag} '{path}': '{existing}' is not writable")

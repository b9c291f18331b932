"""(Re)compile every client kernel under `triton/` and `cute/` to sm_100a PTX, next to its source.

    pip install -e '.[clients]'            # triton 3.9.0, nvidia-cutlass-dsl 4.8.1; no GPU needed
    python tests/clients/regenerate.py                 # writes name.ptx + name.json for every kernel
    python tests/clients/regenerate.py --check         # compiles again and compares, writes nothing
    python tests/clients/regenerate.py --only gemm_dot # one kernel (file stem), either mode
    python tests/clients/regenerate.py --stats         # README tables from the committed PTX (no compiler)

Each kernel module defines `build() -> (ptx, Sidecar)`; the PTX is committed in `sidecar.normalise`d
form (comment lines dropped) and the sidecar as JSON. Exit 1 when a kernel fails to compile or,
with `--check`, when what it compiles to differs from what is committed.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import cast

HERE = Path(__file__).resolve().parent
FRONT_ENDS = ("triton", "cute")

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from sidecar import Sidecar, entry_signatures, instructions, normalise  # noqa: E402


def kernel_sources() -> list[Path]:
    """Every kernel module: `<front end>/<name>.py`, helpers (`_*.py`) excluded."""
    return sorted(p for fe in FRONT_ENDS for p in (HERE / fe).glob("*.py") if not p.name.startswith("_"))


def compile_kernel(path: Path) -> tuple[str, str]:
    """(normalised PTX, JSON text) of one kernel module."""
    name = f"clients_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))  # the front end's private helpers (`_gemm.py`)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    build = cast(Callable[[], tuple[str, Sidecar]], module.build)
    ptx, sidecar = build()
    ptx = normalise(ptx)
    sidecar.source = path.relative_to(HERE).as_posix()
    entry = entry_signatures(ptx).get(sidecar.kernel)
    if entry is None:
        raise SystemExit(f"{path}: the PTX has no entry '{sidecar.kernel}'")
    if [p.name for p in entry.params] != [p.name for p in sidecar.params]:
        raise SystemExit(f"{path}: sidecar parameters {[p.name for p in sidecar.params]} != PTX {entry.params}")
    for directive in (".reqntid", ".maxntid"):
        if directive in entry.directives and entry.directives[directive][0] != sidecar.block[0]:
            raise SystemExit(
                f"{path}: block {sidecar.block} but the PTX says {directive} {entry.directives[directive]}"
            )
    return ptx, json.dumps(sidecar.to_json(), indent=1) + "\n"


def stats() -> str:
    """Markdown: per PTX file its lines, instructions and distinct opcodes; then every distinct
    opcode of the corpus (with its modifiers) and how many files use it."""
    rows = ["| file | lines | instructions | distinct opcodes |", "|---|---:|---:|---:|"]
    used: dict[str, set[str]] = {}
    total: dict[str, int] = {}
    for ptx in sorted(HERE.glob("*/*.ptx")):
        name = ptx.relative_to(HERE).as_posix()
        ops = instructions(ptx.read_text())
        for op in ops:
            used.setdefault(op, set()).add(name)
            total[op] = total.get(op, 0) + 1
        rows.append(f"| `{name}` | {len(ptx.read_text().splitlines())} | {len(ops)} | {len(set(ops))} |")
    rows += ["", f"{len(used)} distinct opcodes:", "", "| opcode | count | files |", "|---|---:|---|"]
    for op in sorted(used):
        files = ", ".join(f.removesuffix(".ptx") for f in sorted(used[op]))
        rows.append(f"| `{op}` | {total[op]} | {files} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    parser.add_argument("--only", action="append", default=[], help="a kernel's file stem (repeatable)")
    parser.add_argument("--stats", action="store_true", help="print the README's opcode tables and exit")
    args = parser.parse_args(argv)
    if args.stats:
        print(stats(), end="")
        return 0
    sources = [p for p in kernel_sources() if not args.only or p.stem in args.only]
    if not sources:
        print(f"no kernel matches {args.only}", file=sys.stderr)
        return 1
    failures = 0
    for path in sources:
        ptx, sidecar = compile_kernel(path)
        outputs = {path.with_suffix(".ptx"): ptx, path.with_suffix(".json"): sidecar}
        for target, text in outputs.items():
            if not args.check:
                target.write_text(text)
                continue
            committed = target.read_text() if target.exists() else ""
            if committed != text:
                failures += 1
                diff = difflib.unified_diff(committed.splitlines(), text.splitlines(), str(target), "regenerated")
                print("\n".join(list(diff)[:40]), file=sys.stderr)
        print(f"{'checked' if args.check else 'wrote'} {path.relative_to(HERE).with_suffix('')}", file=sys.stderr)
    if failures:
        print(f"{failures} file(s) differ from what is committed", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

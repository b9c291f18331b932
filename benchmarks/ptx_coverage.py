"""How much parsed PTX the recognizer turns into typed ptx ops (not a test).

Per file: instructions recognized / total, then the mnemonics that stayed `ptx.inst`
with their counts over all files, by opcode — the to-do list for typed ops. The files:
our backend's PTX and llc-22's PTX of every example (generated here), the files in
tests/ptx_corpus/ and every tests/clients/**/*.ptx.

    python benchmarks/ptx_coverage.py            # the table (markdown)
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import emit_ptx
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.frontend.recognize import Coverage, recognize
from xdsl_tmem.tools.opt import TmemOptMain

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the external oracles live with the tests
from external import Upstream  # noqa: E402


def nvvm_level(program: Path) -> ModuleOp:
    tool = TmemOptMain(["-p", "lower-tmem"])
    module = Parser(tool.ctx, program.read_text(), str(program)).parse_module()
    tool.apply_passes(module)
    return module


def sources() -> list[tuple[str, str]]:
    """(name, PTX text) of every file measured."""
    files: list[tuple[str, str]] = []
    upstream = Upstream.find()
    for program in sorted((ROOT / "examples").glob("*.mlir")):
        module = nvvm_level(program)
        files.append((f"backend: {program.stem}", emit_ptx(module, "sm_100a")))
        if upstream is not None:
            files.append((f"llc-22: {program.stem}", upstream.to_ptx(str(module))))
    for path in [
        *sorted((ROOT / "tests" / "ptx_corpus").glob("*.ptx")),
        *sorted((ROOT / "tests" / "clients").glob("**/*.ptx")),
        *sorted((ROOT / "silicon" / "programs").glob("**/*.ptx")),
    ]:
        files.append((str(path.relative_to(ROOT / path.relative_to(ROOT).parts[0])), path.read_text()))
    return files


def coverage(text: str, name: str) -> tuple[Coverage, float]:
    module = load_ptx(text, name, SourceMap(), typed=False)
    start = time.perf_counter()
    result = recognize(module)
    return result, time.perf_counter() - start


def main() -> int:
    recognize(ModuleOp([]))  # build the form index once, outside the timings
    unrecognized: Counter[str] = Counter()
    by_opcode: Counter[str] = Counter()
    refused: dict[str, str] = {}
    recognized_all = total_all = 0
    print("| file | recognized / instructions | | seconds |")
    print("|---|---|---|---|")
    for name, text in sources():
        result, seconds = coverage(text, name)
        recognized_all += result.recognized
        total_all += result.total
        unrecognized.update(result.unrecognized)
        for mnemonic, count in result.unrecognized.items():
            by_opcode[mnemonic.split(".")[0]] += count
        refused.update(result.refused)
        share = 100 * result.recognized / result.total if result.total else 100
        print(f"| {name} | {result.recognized} / {result.total} | {share:.0f}% | {seconds:.2f} |")
    print(f"| **all** | {recognized_all} / {total_all} | {100 * recognized_all / total_all:.0f}% | |")
    print()
    print("Unrecognized, by opcode: " + ", ".join(f"`{op}` {n}" for op, n in by_opcode.most_common()))
    print()
    print("| mnemonic left as `ptx.inst` | count |")
    print("|---|---|")
    for mnemonic, count in sorted(unrecognized.items(), key=lambda item: (-item[1], item[0])):
        print(f"| `{mnemonic}` | {count} |")
    if refused:
        print()
        print("Spelled as a typed form but refused by its verifier:")
        for mnemonic, message in sorted(refused.items()):
            print(f"* `{mnemonic}`: {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

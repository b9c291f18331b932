"""Code-structure metrics of the `xdsl_tmem` package (issue 12's closing note).

1. Import cycles: strongly connected groups of the runtime import graph between the
   package's modules (`import` statements anywhere in a module, those under
   `if TYPE_CHECKING:` left out, since only the type checker reads them).
2. Functions with more than 8 parameters (`self`/`cls` not counted).
3. Functions of cyclomatic complexity over 15 (ruff's C901, the mccabe measure).
4. Duplicated blocks of 6 or more lines: pylint's `duplicate-code` checker
   (`--min-similarity-lines=6`; comments, docstrings, imports and signatures ignored) where
   pylint is importable, and the `duplicates` tool's pairs where it is on PATH.
5. Hand-kept op lists: module- or class-level tuples, lists, sets and dicts written out in
   the source whose elements (or keys, or values) are op classes. A list derived from the
   ops (a comprehension over a dialect's op list filtered by a trait) names no op class and
   is not counted. Where a list is the definition (upstream ops we cannot annotate), it is
   named in `DOCUMENTED` and counted apart.

Usage: python benchmarks/code_metrics.py [--root CHECKOUT]
(another checkout's package is imported from CHECKOUT, to measure a base revision)
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any

MAX_PARAMETERS = 8
MAX_COMPLEXITY = 15
MIN_DUPLICATE_LINES = 6
DOCUMENTED = {
    "xdsl_tmem.dialects.traits.UPSTREAM_TRAITS": "the traits of xDSL's own ops, which we cannot annotate",
    "xdsl_tmem.dialects.llvm_ext.LLVM_EXTENSION_OPS": "the registration of our llvm ops, as a dialect's op list",
    "xdsl_tmem.passes.convert_tmem_to_nvvm.FORWARDING_OPS": "upstream's SCF structural type conversion, by name",
    "xdsl_tmem.backend.isel.arith._INT_BINARY": "the isel rules of upstream's integer ops (a missing one is refused)",
    "xdsl_tmem.backend.isel.arith._FLOAT_BINARY": "the isel rules of upstream's float ops (a missing one is refused)",
}
"""Lists that are the definition of what they list (each says why where it is defined)."""


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module


def modules(root: Path) -> list[Module]:
    package = root / "xdsl_tmem"
    found: list[Module] = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append(Module(name, path, ast.parse(path.read_text(), str(path))))
    return found


# --------------------------------------------------------------------------------------
# 1. Import cycles
# --------------------------------------------------------------------------------------


def _imports(module: Module, names: set[str]) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & names
            found.update(submodules if len(submodules) == len(node.names) else {node.module, *submodules})
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(module.tree)
    return (found & names) - {module.name}


def import_cycles(mods: list[Module]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    names = {m.name for m in mods}
    graph = {m.name: sorted(_imports(m, names)) for m in mods}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return components


# --------------------------------------------------------------------------------------
# 2. Long parameter lists
# --------------------------------------------------------------------------------------


def _functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    """(qualified name, function, is a method) of every function, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            for name, fn, _ in _functions(node, f"{prefix}{node.name}."):
                yield name, fn, fn in node.body
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{node.name}", node, False
            yield from _functions(node, f"{prefix}{node.name}.")
        else:
            yield from _functions(node, prefix)


def long_parameter_lists(mods: list[Module], root: Path) -> list[tuple[str, int]]:
    rows: list[tuple[str, int]] = []
    for module in mods:
        for name, fn, method in _functions(module.tree):
            params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
            if method and not static and params and params[0].arg in ("self", "cls"):
                params = params[1:]
            if len(params) > MAX_PARAMETERS:
                rows.append((f"{module.path.relative_to(root)}:{fn.lineno} {name}", len(params)))
    return rows


# --------------------------------------------------------------------------------------
# 3. Cyclomatic complexity
# --------------------------------------------------------------------------------------


def complex_functions(root: Path) -> list[str] | None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        return None
    proc = subprocess.run(
        [ruff, "check", "--isolated", "--select", "C901", "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}",
         "--output-format", "concise", "xdsl_tmem"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    return [line for line in proc.stdout.splitlines() if "C901" in line]


# --------------------------------------------------------------------------------------
# 4. Duplicated blocks
# --------------------------------------------------------------------------------------


def pylint_duplicates(root: Path) -> list[str] | None:
    if find_spec("pylint") is None:
        return None
    proc = subprocess.run(
        [sys.executable, "-m", "pylint", "--disable=all", "--enable=duplicate-code",
         f"--min-similarity-lines={MIN_DUPLICATE_LINES}", "--score=n", "xdsl_tmem"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    # One message per similar block: "...: R0801: Similar lines in N files" then the places.
    blocks: list[str] = []
    for chunk in re.split(r"^(?=\S.*R0801)", proc.stdout, flags=re.M):
        if "R0801" in chunk:
            places = re.findall(r"^==(\S+):\[(\d+):(\d+)\]", chunk, flags=re.M)
            blocks.append(" ~ ".join(f"{name}:{a}-{b}" for name, a, b in places))
    return blocks


def duplicates_tool(root: Path) -> list[str] | None:
    tool = shutil.which("duplicates")
    if tool is None:
        return None
    proc = subprocess.run(
        [tool, "--repo", str(root / "xdsl_tmem"), "--most", "200", "--min-lines", str(MIN_DUPLICATE_LINES)],
        capture_output=True, text=True,
    )  # fmt: skip
    return proc.stdout.splitlines()


# --------------------------------------------------------------------------------------
# 5. Hand-kept op lists
# --------------------------------------------------------------------------------------


def _is_op_class(value: object) -> bool:
    from xdsl.ir import Operation

    return isinstance(value, type) and issubclass(value, Operation)


_MISSING = object()


def _resolve(node: ast.expr, namespace: dict[str, Any]) -> object:
    """What a name (`Op`) or attribute chain (`nvvm.Op`) denotes in a module."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id, _MISSING)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, namespace)
        return _MISSING if owner is _MISSING else getattr(owner, node.attr, _MISSING)
    return _MISSING


def op_classes_named(node: ast.AST, namespace: dict[str, Any]) -> set[type]:
    """The op classes that names and attribute chains in `node` denote."""
    found: set[type] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name | ast.Attribute) and isinstance(sub.ctx, ast.Load):
            value = _resolve(sub, namespace)
            if isinstance(value, type) and _is_op_class(value):
                found.add(value)
    return found


def literal_assignments(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of module- and class-level assignments of a literal container."""
    bodies: list[tuple[str, list[ast.stmt]]] = [("", tree.body)]
    bodies += [(f"{n.name}.", n.body) for n in tree.body if isinstance(n, ast.ClassDef)]
    for prefix, body in bodies:
        for stmt in body:
            target, value = None, None
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
            elif isinstance(stmt, ast.AnnAssign):
                target, value = stmt.target, stmt.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Tuple | ast.List | ast.Set | ast.Dict):
                yield prefix + target.id, value


def op_lists(mods: list[Module]) -> list[tuple[str, int]]:
    rows: list[tuple[str, int]] = []
    for module in mods:
        try:
            namespace = vars(importlib.import_module(module.name))
        except Exception as e:  # a module that does not import is reported, not skipped silently
            rows.append((f"{module.name} (not imported: {type(e).__name__})", -1))
            continue
        for name, value in literal_assignments(module.tree):
            ops = op_classes_named(value, namespace)
            if ops:
                rows.append((f"{module.name}.{name}", len(ops)))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    root: Path = args.root.resolve()
    sys.path.insert(0, str(root))
    mods = modules(root)

    cycles = import_cycles(mods)
    print(f"import cycles: {len(cycles)}")
    for cycle in cycles:
        print("  " + " <-> ".join(cycle))

    long = long_parameter_lists(mods, root)
    outside = [row for row in long if "/dialects/" not in row[0]]
    print(f"\nfunctions with > {MAX_PARAMETERS} parameters: {len(long)} ({len(outside)} outside dialects/)")
    for where, count in long:
        print(f"  {count:3} {where}")

    complex_ = complex_functions(root)
    if complex_ is None:
        print("\nC901 > 15: not measured (ruff not found)")
    else:
        print(f"\nfunctions of cyclomatic complexity > {MAX_COMPLEXITY} (ruff C901): {len(complex_)}")
        for line in complex_:
            print("  " + line)

    blocks = pylint_duplicates(root)
    if blocks is None:
        print(f"\nduplicated blocks of >= {MIN_DUPLICATE_LINES} lines (pylint): not measured (pylint not importable)")
    else:
        print(f"\nduplicated blocks of >= {MIN_DUPLICATE_LINES} lines (pylint duplicate-code): {len(blocks)}")
        for block in blocks:
            print("  " + block)
    pairs = duplicates_tool(root)
    if pairs is None:
        print("duplicates tool: not on PATH")
    else:
        print("duplicates tool: " + (pairs[0] if pairs else "no output"))
        for line in pairs[1:]:
            print("  " + line)

    lists = op_lists(mods)
    kept = [row for row in lists if row[0] not in DOCUMENTED]
    documented = [row for row in lists if row[0] in DOCUMENTED]
    print(f"\nhand-kept op lists: {len(kept)} lists, {sum(max(n, 0) for _, n in kept)} op classes")
    for name, count in kept:
        print(f"  {count:3} {name}")
    for name, count in documented:
        print(f"  documented ({DOCUMENTED[name]}): {name}, {count} op classes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

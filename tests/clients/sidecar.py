"""What a launcher needs to run one client kernel's PTX, and the PTX facts it is checked against.

`regenerate.py` writes one `name.json` per `name.ptx` from a `Sidecar`; `tests/test_clients.py`
reads them back and checks them against the PTX's `.entry` signature (`entry_signature`). The
launch built from a sidecar (`launch_arguments`, `run_client`) is the one place both the tests and
`benchmarks/compare_sentryward.py` take it from. This module needs neither Triton nor CuTe DSL
(nor, at import, xdsl_tmem).

Conventions of the JSON (see README.md): tensor shapes and strides are in elements, row-major
order as numpy writes them; a tensor map's `global_dims`, `global_strides_bytes`, `box_dims` and
`element_strides` are innermost dimension first, the order `cuTensorMapEncodeTiled` takes them
(CUDA driver API, "Tensor Map Object Management").
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

ParamKind = Literal["pointer", "scalar", "tensormap", "struct"]


@dataclass(frozen=True)
class Param:
    """One `.param` of the entry, in order. `name` is the PTX name; the rest says what to pass.

    * `pointer`: the address of tensor `tensor` (`None`: pass a null pointer, see `meaning`).
    * `scalar`: the integer `value` of PTX type `ptx_type`.
    * `tensormap`: a 128-byte `CUtensorMap` (passed by value) for tensor `tensor`, described by
      `tensormap`.
    * `struct`: a by-value aggregate of `size` bytes whose layout `meaning` describes.
    """

    name: str
    kind: ParamKind
    ptx_type: str
    meaning: str
    tensor: str | None = None
    value: int | None = None
    tensormap: dict[str, Any] | None = None
    size: int | None = None
    fields: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class Tensor:
    """A buffer the launcher allocates: numpy dtype name, shape, strides (elements), and how
    it is filled (`init`: `zeros`, or `rand:<seed>` = uniform in [-1, 1) from
    `numpy.random.default_rng(seed)`, rounded to `dtype`)."""

    dtype: str
    shape: list[int]
    strides: list[int]
    init: str


@dataclass
class Sidecar:
    source: str
    compiler: dict[str, str]
    kernel: str
    grid: list[int]
    block: list[int]
    cluster: list[int]
    dynamic_shared_bytes: int
    params: list[Param]
    tensors: dict[str, Tensor]
    expected: dict[str, str]
    """Output tensor name → numpy expression over the tensor names (`np` is numpy)."""
    tolerance: dict[str, float]
    exercises: list[str]
    compiler_facts: dict[str, Any] = field(default_factory=lambda: {})
    """Raw figures read from the compiler (Triton's metadata, CuTe's launch), for reference."""
    unverified: list[str] = field(default_factory=lambda: [])
    """Facts that could not be read from the compiler objects, and where they came from instead."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["params"] = [{k: v for k, v in asdict(p).items() if v is not None} for p in self.params]
        return data


@dataclass(frozen=True)
class EntryParam:
    name: str
    ptx_type: str
    align: int | None
    array: int | None
    """`K` of a byval `.b8 name[K]`; `None` for a scalar parameter."""


@dataclass(frozen=True)
class Entry:
    name: str
    params: list[EntryParam]
    directives: dict[str, list[int]]
    """Performance-tuning directives after the signature: `.reqntid`, `.maxntid`,
    `.reqnctapercluster`, `.explicitcluster` (no values), `.minnctapersm`, `.maxnreg`."""


_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\(([^)]*)\)([^{]*)\{", re.S)
_PARAM = re.compile(
    r"\.param\s+(?:\.align\s+(\d+)\s+)?(\.[a-z]\w*)\s+(?:\.ptr(?:\s+\.(?:const|global|local|shared))?(?:\s+\.align\s+\d+)?\s+)?([\w$]+)(?:\[(\d+)\])?"
)
_DIRECTIVE = re.compile(r"(\.(?:reqntid|maxntid|reqnctapercluster|minnctapersm|maxnreg|explicitcluster))\b([\d,\s]*)")


def _strip_comments(ptx: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", ptx, flags=re.S)


def entry_signatures(ptx: str) -> dict[str, Entry]:
    """Every `.entry` of a PTX module: its parameters in order and its launch directives
    (PTX ISA 9.0 §5.1.5 "Kernel Function Parameters", §11.4 "Performance-Tuning Directives")."""
    entries: dict[str, Entry] = {}
    for match in _ENTRY.finditer(_strip_comments(ptx)):
        name, params_text, tail = match.groups()
        params: list[EntryParam] = []
        for item in filter(None, (p.strip() for p in params_text.split(","))):
            param = _PARAM.match(item)
            if param is None:
                raise ValueError(f"entry {name}: cannot read parameter '{item}'")
            align, ptx_type, pname, array = param.groups()
            params.append(EntryParam(pname, ptx_type, int(align) if align else None, int(array) if array else None))
        directives: dict[str, list[int]] = {}
        for directive, values in _DIRECTIVE.findall(tail):
            directives[directive] = [int(v) for v in re.findall(r"\d+", values)]
        entries[name] = Entry(name, params, directives)
    return entries


VOLATILE = [
    re.compile(r"^\s*//.*$"),
]
"""Lines dropped before PTX is committed or compared: comments only. Both compilers put
their own build's version and the dump's path or time in comments (Triton: `// Generated by
LLVM NVPTX Back-End`; CuTe DSL: the dump's source path); no instruction or directive varies."""


def normalise(ptx: str) -> str:
    """The committed form of a compiler's PTX: comment-only lines dropped, trailing blanks
    stripped, one final newline. `.loc`/`.file` lines are kept only if the compiler wrote
    them with stable paths (checked by `regenerate.py`)."""
    lines = [line.rstrip() for line in ptx.splitlines() if not any(v.match(line) for v in VOLATILE)]
    return "\n".join(lines).strip("\n") + "\n"


_LABEL = re.compile(r"^[$%\w]+:")
_GUARD = re.compile(r"^@!?%?[\w$]+\s+")


def instructions(ptx: str) -> list[str]:
    """The opcodes (with all their `.modifiers`) of every instruction in the module, in order:
    statements inside `{ }` bodies that are not directives (`.reg`, `.shared`, `.loc`, ...) or
    labels, with a `@p`/`@!p` guard removed (PTX ISA §4.3 "Statements"). `.loc` and `.file`
    end at the line's end, not at a `;` (§11.6 "Debugging Directives")."""
    text = re.sub(r"^[ \t]*\.(?:loc|file)\b[^\n]*", "", _strip_comments(ptx), flags=re.M)
    opcodes: list[str] = []
    depth = 0
    operand_braces = 0
    statement = ""
    for char in text:
        if char == "{" and operand_braces == 0 and (not statement.strip() or (depth == 0 and "=" not in statement)):
            # A block (a function body, or a scope); a `{` after an opcode opens a vector operand
            # and one after `=` at module level an initialiser.
            depth += 1
            statement = ""
        elif char == "}" and operand_braces == 0:
            depth -= 1
            statement = ""
        elif char == ";" and operand_braces == 0:
            body = statement.strip()
            statement = ""
            if depth == 0:
                continue
            while (label := _LABEL.match(body)) is not None:
                body = body[label.end() :].strip()
            body = _GUARD.sub("", body)
            if body and not body.startswith("."):
                opcodes.append(body.split()[0])
        else:
            operand_braces += {"{": 1, "}": -1}.get(char, 0)
            statement += char
    return opcodes


def make_tensors(tensors: dict[str, Any]) -> dict[str, Any]:
    """The launch's buffers, from a sidecar's `tensors` (JSON form), as numpy arrays: `zeros`, or
    `rand:<seed>` = uniform in [-1, 1) from `numpy.random.default_rng(seed)`, rounded to the dtype."""
    import numpy as np

    arrays: dict[str, Any] = {}
    for name, spec in tensors.items():
        dtype = np.dtype(spec["dtype"])
        shape = tuple(int(d) for d in spec["shape"])
        init = str(spec["init"])
        if init == "zeros":
            arrays[name] = np.zeros(shape, dtype)
        elif init.startswith("rand:"):
            rng = np.random.default_rng(int(init.removeprefix("rand:")))
            arrays[name] = rng.uniform(-1.0, 1.0, shape).astype(dtype)
        else:
            raise ValueError(f"tensor {name}: unknown init '{init}'")
    return arrays


FENCE_POLICY = "mojo"
"""The fence policy client kernels run under: thread synchronisation orders tcgen05 work. No
client PTX has a `tcgen05.fence` (Triton 3.9 and the CuTe DSL 4.8 emit none), so the `strict`
policy (the PTX ISA's tcgen05 memory consistency model) reports the first tcgen05 handoff
ordered only by a barrier (tests/test_clients.py shows it for gemm_dot; the other GEMMs are
not run under `strict`)."""


def launch_arguments(sidecar: dict[str, Any]) -> dict[str, object]:
    """A sidecar's parameters as `run_kernel` arguments (by position, `argI`), its tensors as
    named buffers made by `make_tensors`."""
    from xdsl_tmem.interpreter import PointerArgument, ScalarField, StructArgument

    args: dict[str, object] = dict(make_tensors(sidecar["tensors"]))
    for i, param in enumerate(sidecar["params"]):
        if param["kind"] == "pointer":
            args[f"arg{i}"] = PointerArgument(param.get("tensor"))
        elif param["kind"] == "scalar":
            args[f"arg{i}"] = param["value"]
        elif param["kind"] == "struct":
            fields = {
                f["offset"]: PointerArgument(f["pointer_to"])
                if "pointer_to" in f
                else ScalarField(f["value"], f["type"])
                for f in param["fields"]
            }
            args[f"arg{i}"] = StructArgument(fields)
        elif param["kind"] == "tensormap":
            args[f"arg{i}"] = tensor_map_argument(param["tensormap"])
        else:
            raise ValueError(f"parameter {param['name']}: kind {param['kind']} is not launched yet")
    return args


def tensor_map_argument(desc: dict[str, Any]) -> Any:
    """A sidecar's `tensormap` as the launch's `TensorMapArgument` over its tensor (offset 0).
    The sidecar writes enum values in words where the compiler left them at their default
    ("none (zeros)", "not read: ..."): those are NONE, as `cuTensorMapEncodeTiled`'s zero enums."""
    from xdsl_tmem.interpreter.tma import SHORT_TYPES, TensorMap, TensorMapArgument

    def enum(value: str, prefix: str = "") -> str:
        word = value.split()[0]
        return f"{prefix}{word}" if word[0].isdigit() else "NONE"

    template = TensorMap(
        data_type=SHORT_TYPES[desc["element_type"]],
        global_address=0,
        global_dims=tuple(desc["global_dims"]),
        global_strides=tuple(desc["global_strides_bytes"]),
        box_dims=tuple(desc["box_dims"]),
        element_strides=tuple(desc["element_strides"]),
        interleave=enum(desc["interleave"]),
        swizzle=enum(desc["swizzle"]),
        l2_promotion=enum(desc["l2_promotion"], "L2_"),
        oob_fill="NAN_REQUEST_ZERO_FMA" if desc["oob_fill"].startswith("nan") else "NONE",
    )
    return TensorMapArgument(desc["tensor"], 0, template)


_SHAPE_SCALAR = re.compile(r"^(\w+)_desc\.(shape|strides)\[(\d)\]$")


def gemm_at_shape(sidecar: dict[str, Any], m: int, n: int, k: int, grid: list[int] | None = None) -> dict[str, Any]:
    """A Triton GEMM's sidecar at another shape: c[m, n] = a[m, k] @ b (b is [k, n], or [n, k]
    where `expected` multiplies by `b.T`), row-major. Triton passes the shapes and strides as
    run-time parameters (`M`/`N`/`K` scalars, a descriptor's `shape[i]`/`strides[i]`, its
    tensor map's global dims and strides), so the same PTX runs at the new shape. `grid`
    defaults to one program per output tile (the tile count scaled from the sidecar's, which
    launches one program per tile); a persistent kernel gives its own. The tiles must divide
    the shape: the kernels are compiled without masks."""
    transposed = "b.astype(np.float32).T" in sidecar["expected"]["c"]
    shapes = {"a": [m, k], "b": [n, k] if transposed else [k, n], "c": [m, n]}
    old_c = sidecar["tensors"]["c"]["shape"]
    if grid is None:
        tiles = sidecar["grid"][0] * m * n
        if tiles % (old_c[0] * old_c[1]) != 0:
            raise ValueError(f"{m}x{n} is not a whole number of the sidecar's tiles")
        grid = [tiles // (old_c[0] * old_c[1]), 1, 1]
    out = json.loads(json.dumps(sidecar))
    out["grid"] = list(grid)
    for name, shape in shapes.items():
        out["tensors"][name]["shape"] = shape
        out["tensors"][name]["strides"] = [shape[1], 1]
    for param in out["params"]:
        tensor = out["tensors"].get(param.get("tensor") or "")
        if param["kind"] == "tensormap":
            itemsize = 2 if tensor["dtype"] == "float16" else 4
            param["tensormap"]["global_dims"] = tensor["shape"][::-1]
            param["tensormap"]["global_strides_bytes"] = [tensor["strides"][0] * itemsize]
        elif param["kind"] == "scalar":
            param["value"] = _scalar_at_shape(param["meaning"], out["tensors"], {"M": m, "N": n, "K": k})
    return out


def _scalar_at_shape(meaning: str, tensors: dict[str, Any], dims: dict[str, int]) -> int:
    """A Triton GEMM scalar parameter's value from its sidecar meaning (`M: ...`,
    `a_desc.shape[0]`, `c_desc.strides[1]`)."""
    name = meaning.split(":")[0]
    if name in dims:
        return dims[name]
    match = _SHAPE_SCALAR.match(name)
    if match is None:
        raise ValueError(f"scalar parameter '{meaning}': not a GEMM dimension, shape or stride")
    tensor, what, axis = match.groups()
    return int(tensors[tensor][what][int(axis)])


def _tensor_map_flag(tensor: str, desc: dict[str, Any]) -> str:
    """A sidecar's `tensormap` as `xdsl-tmem-run --arg` spells it (`tma.TENSORMAP_ARG_FORM`),
    from the same map `tensor_map_argument` launches."""
    template = tensor_map_argument(desc).template

    def word(value: str) -> str:
        return {"NONE": "none", "NAN_REQUEST_ZERO_FMA": "nan"}.get(value, value.removeprefix("L2_"))

    def dims(values: tuple[int, ...]) -> str:
        return "x".join(map(str, values)) or "-"

    options = ",".join([
        f"estrides={dims(template.element_strides)}", f"swizzle={word(template.swizzle)}",
        f"interleave={word(template.interleave)}", f"l2={word(template.l2_promotion)}",
        f"oob={word(template.oob_fill)}",
    ])  # fmt: skip
    return (
        f"tensormap:{tensor}:{desc['element_type']}:{dims(template.global_dims)}:{dims(template.global_strides)}:"
        f"{dims(template.box_dims)}:{options}"
    )


def cli_arguments(ptx: Path, directory: Path) -> list[str]:
    """The `xdsl-tmem-run` command line (after the file) of a client kernel's sidecar launch:
    kernel, grid, cluster, dynamic shared memory, each tensor an `.npy` written into
    `directory` (`make_tensors`), each parameter by position."""
    import numpy as np

    sidecar = json.loads(ptx.with_suffix(".json").read_text())
    argv = ["--kernel", sidecar["kernel"]]
    for flag in ("grid", "cluster"):
        argv += [f"--{flag}", "x".join(map(str, sidecar[flag]))]
    argv += ["--dynamic-shared", str(sidecar["dynamic_shared_bytes"])]
    for tensor, array in make_tensors(sidecar["tensors"]).items():
        np.save(directory / f"{tensor}.npy", array)
        argv += ["--arg", f"{tensor}={directory / tensor}.npy"]
    for i, param in enumerate(sidecar["params"]):
        kind = param["kind"]
        if kind == "pointer":
            value = f"ptr:{param['tensor']}" if param.get("tensor") else "null"
        elif kind == "scalar":
            value = str(param["value"])
        elif kind == "struct":
            fields: list[dict[str, Any]] = param["fields"]
            value = "struct:" + ",".join(
                f"{f['offset']}=" + (f"ptr:{f['pointer_to']}" if "pointer_to" in f else f"{f['type']}:{f['value']}")
                for f in fields
            )
        else:
            value = _tensor_map_flag(param["tensormap"]["tensor"], param["tensormap"])
        argv += ["--arg", f"arg{i}={value}"]
    return argv


def run_client(ptx: Path, text: str | None = None, source_map: Any = None, *,
               sidecar: dict[str, Any] | None = None, **launch: Any) -> Any:  # fmt: skip
    """`run_kernel` on a client kernel (or `text`, a variant of it) with its sidecar's launch
    (or `sidecar`'s, e.g. `gemm_at_shape`'s): grid, cluster, block, dynamic shared memory, and
    `launch_arguments`. `launch` adds `run_kernel` options (fence policy, schedule, seed);
    `source_map` (a `SourceMap`) receives the PTX's locations, for a caller that reports them."""
    from xdsl_tmem.diagnostics import SourceMap
    from xdsl_tmem.frontend import load_ptx
    from xdsl_tmem.interpreter import run_kernel

    spec: dict[str, Any] = json.loads(ptx.with_suffix(".json").read_text()) if sidecar is None else sidecar
    text = ptx.read_text() if text is None else text
    module = load_ptx(text, str(ptx), SourceMap() if source_map is None else source_map)
    return run_kernel(module, spec["kernel"], grid=spec["grid"], cluster=spec["cluster"],
                      block=spec["block"], dynamic_shared_bytes=spec["dynamic_shared_bytes"],
                      args=launch_arguments(spec), **launch)  # fmt: skip

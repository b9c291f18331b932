"""Compile a CuTe DSL kernel for sm_100a without a GPU and describe its launch (needs `cutlass`).

Import this module before `cutlass` (it sets the DSL's environment, read at import):
`CUTE_DSL_ARCH=sm_100a CUTE_DSL_KEEP=ptx CUTE_DSL_DUMP_DIR=<a temporary folder>`. The launch
(grid, block, cluster, dynamic shared memory) is read from the `LaunchConfig` the DSL builds when
the kernel's `.launch(...)` is traced; the PTX from the compiled function's artifacts.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Any

_DUMP = tempfile.mkdtemp(prefix="cute_dsl_dump_")
# No JIT cache: `--check` must run the compiler, not read back an earlier result.
os.environ.update(
    {"CUTE_DSL_ARCH": "sm_100a", "CUTE_DSL_KEEP": "ptx", "CUTE_DSL_DUMP_DIR": _DUMP, "CUTE_DSL_NO_CACHE": "1"}
)

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.base_dsl.dsl import BaseDSL  # noqa: E402
from sidecar import Param, Sidecar, Tensor, entry_signatures  # noqa: E402

LAUNCHES: list[dict[str, Any]] = []
_post_init = BaseDSL.LaunchConfig.__post_init__


def _record(config: Any) -> None:
    _post_init(config)
    LAUNCHES.append(
        {"grid": list(config.grid), "block": list(config.block), "cluster": list(config.cluster), "smem": config.smem}
    )


BaseDSL.LaunchConfig.__post_init__ = _record


@dataclass(frozen=True)
class PtrStruct:
    """A `cute.Tensor` argument with a static layout: an 8-byte by-value struct holding its
    global address (the layout is compiled in)."""

    tensor: str


@dataclass(frozen=True)
class TmaDesc:
    """A TMA atom's CUtensorMap, passed by value (128 bytes)."""

    tensor: str
    tensormap: dict[str, Any]


@dataclass(frozen=True)
class LayoutStruct:
    """A TMA coordinate tensor (`tma_tensor`) whose layout has `size` bytes of run-time values."""

    meaning: str
    size: int


def tensormap_2d(tensor: str, shape: list[int], box_inner_first: list[int], swizzle: str, how: str) -> dict[str, Any]:
    """A row-major f16 2-D tensor's tiled CUtensorMap, innermost dimension first."""
    return {
        "tensor": tensor,
        "element_type": "f16",
        "rank": 2,
        "global_dims": shape[::-1],
        "global_strides_bytes": [shape[1] * 2],
        "box_dims": box_inner_first,
        "element_strides": [1, 1],
        "interleave": "none",
        "swizzle": swizzle,
        "l2_promotion": "not read: the DSL's host code encodes the map at run time",
        "oob_fill": "none (zeros), the CUtensorMap default; not read from the DSL",
        "from": how,
    }


def swizzle_of(layout: Any) -> str:
    """The TMA swizzle mode of a shared-memory layout `S<B,M,S> o ...`: 16-byte units (M = 4)
    permuted over 2^B rows: B = 1, 2, 3 → 32B, 64B, 128B (CuTe `Swizzle<B,M,S>`; CUtensorMapSwizzle)."""
    import re

    match = re.search(r"S<(\d+),(\d+),(\d+)>", str(layout))
    if match is None:
        return "none"
    bits, base, _ = (int(g) for g in match.groups())
    if base != 4 or bits not in (1, 2, 3):
        raise ValueError(f"no TMA swizzle for {layout}")
    return {1: "32B", 2: "64B", 3: "128B"}[bits]


def build(
    jit_fn: Any,
    args: list[Any],
    kernel_params: list[PtrStruct | TmaDesc | LayoutStruct | Param] | Any,
    *,
    source: str,
    tensors: dict[str, tuple[str, list[int], str]],
    expected: dict[str, str],
    tolerance: dict[str, float],
    exercises: list[str],
    unverified: list[str] | None = None,
    compiler_facts: Any = None,
) -> tuple[str, Sidecar]:
    LAUNCHES.clear()
    compiled = cute.compile(jit_fn, *args)
    ptx: str = compiled.artifacts.PTX
    (launch,) = LAUNCHES
    if callable(kernel_params):
        kernel_params = kernel_params()  # facts the trace recorded on the kernel object
    entries = entry_signatures(ptx)
    (kernel,) = entries
    entry = entries[kernel]
    if len(entry.params) != len(kernel_params):
        raise SystemExit(f"{source}: {len(entry.params)} PTX parameters, {len(kernel_params)} described")
    params: list[Param] = []
    for described, declared in zip(kernel_params, entry.params, strict=True):
        match described:
            case PtrStruct(tensor=tensor):
                params.append(
                    Param(declared.name, "struct", ".b8", f"cute.Tensor {tensor}: its global address (u64 at offset 0)",
                          tensor, size=8, fields=[{"offset": 0, "type": "u64", "pointer_to": tensor}])
                )  # fmt: skip
            case TmaDesc(tensor=tensor, tensormap=tensormap):
                params.append(
                    Param(declared.name, "tensormap", ".b8", f"CUtensorMap of {tensor}", tensor,
                          tensormap=tensormap, size=128)
                )  # fmt: skip
            case LayoutStruct(meaning=meaning, size=size):
                params.append(Param(declared.name, "struct", ".b8", meaning, size=size))
            case Param():
                params.append(Param(**{**described.__dict__, "name": declared.name}))
    smem = launch["smem"]
    strides: dict[str, list[int]] = {}
    for name, (_, shape, _) in tensors.items():
        stride = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            stride[i] = stride[i + 1] * shape[i + 1]
        strides[name] = stride
    sidecar = Sidecar(
        source=source,
        compiler={"name": "nvidia-cutlass-dsl", "version": cutlass.__version__, "target": "sm_100a"},
        kernel=kernel,
        grid=[int(v) for v in launch["grid"]],
        block=[int(v) for v in launch["block"]],
        cluster=[int(v) if v is not None else 1 for v in launch["cluster"]],
        dynamic_shared_bytes=int(smem) if isinstance(smem, int) else -1,
        params=params,
        tensors={n: Tensor(d, s, strides[n], init) for n, (d, s, init) in tensors.items()},
        expected=expected,
        tolerance=tolerance,
        exercises=exercises,
        compiler_facts={
            "launch_config": {k: (v if isinstance(v, (int, list)) else str(v)) for k, v in launch.items()},
            **(compiler_facts() if callable(compiler_facts) else {}),
        },
        unverified=[
            "params: the meaning of each PTX parameter is written in the kernel module (CuTe flattens the "
            "@cute.kernel arguments in order); regenerate.py checks their number and names, "
            "tests/test_clients.py their byval sizes",
            *(unverified or []),
        ],
    )
    return ptx, sidecar

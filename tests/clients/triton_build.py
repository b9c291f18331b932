"""Compile a Triton kernel for sm_100a without a GPU and describe its launch (needs `triton`).

Each kernel module under `triton/` calls `build(...)` with its `@triton.jit` function and one
binding per Python argument (`Ptr`, `Scalar`, `Desc`, `Const`); the PTX parameter list is
derived from the compiler's own rules (`triton.backends.driver.expand_signature`, which the
CUDA launcher uses) and the facts about tensor maps from `CompiledKernel.metadata.tensordesc_meta`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import triton
from sidecar import Param, Sidecar, Tensor, entry_signatures
from triton.backends.compiler import GPUTarget
from triton.backends.driver import expand_signature
from triton.backends.nvidia.driver import TMA_DTYPE_DEVICE_TO_HOST
from triton.compiler import ASTSource

# Triton 3.9 warns that its FP-fusion default changes in 3.10: pin it (fusion on, as 3.9's default).
os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
# Line info would put the checkout's absolute path into `.file` and the `.debug_info` bytes.
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
# Compile for real every time (not from ~/.triton/cache), so `--check` tests the compiler.
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
PTX_VERSION = 90
"""Triton's LLVM emits PTX 9.0 features (`+ptx90`, triton/backends/nvidia/compiler.py) and then
stamps `.version` from its bundled ptxas (9.4 for 3.9); 9.0 is what ptxas 13.0 reads."""

TARGET = GPUTarget("cuda", 100, 32)
"""sm_100 with warp size 32; Triton emits `.target sm_100a` for capability 100."""

_NP_DTYPE = {
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "i32": "int32",
    "i64": "int64",
    "fp8e4nv": "float8_e4m3fn",
}
_PTX_INT = {"i32": ".u32", "i64": ".u64", "i1": ".u8"}
# CUtensorMapDataType (CUDA driver API, cuda.h), by value; Triton's metadata numbers element types
# in its device-side order, which its launcher maps with TMA_DTYPE_DEVICE_TO_HOST.
_TMA_ELEM = ["u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f64", "bf16", "f32_ftz", "tf32", "tf32_ftz"]
_SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


@dataclass(frozen=True)
class Ptr:
    tensor: str
    dtype: str  # Triton dtype, e.g. "fp16"


@dataclass(frozen=True)
class Scalar:
    value: int
    meaning: str
    dtype: str = "i32"


@dataclass(frozen=True)
class Desc:
    """A host `triton.tools.tensor_descriptor.TensorDescriptor` over `tensor` (row-major, contiguous)."""

    tensor: str
    dtype: str
    block_shape: tuple[int, ...]


@dataclass(frozen=True)
class Const:
    value: Any


def _strides(shape: list[int]) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def _signature(
    bindings: dict[str, Ptr | Scalar | Desc | Const],
) -> tuple[dict[str, str], dict[str, Any], dict[tuple[int, ...], list[list[Any]]]]:
    """Triton's signature, constexprs and specialisation attributes for `bindings`."""
    signature: dict[str, str] = {}
    constexprs: dict[str, Any] = {}
    for name, binding in bindings.items():
        match binding:
            case Ptr(dtype=dtype):
                signature[name] = "*" + dtype
            case Scalar(dtype=dtype):
                signature[name] = dtype
            case Desc(dtype=dtype, block_shape=block):
                signature[name] = f"tensordesc<{dtype}[{', '.join(map(str, block))}]>"
            case Const(value=value):
                signature[name] = "constexpr"
                constexprs[name] = value
    # What Triton's JIT specialises on at a real launch (runtime/jit.py): a pointer 16-byte aligned
    # and an integer that is a multiple of 16 are marked `tt.divisibility = 16`, so loads vectorise.
    attrs: dict[tuple[int, ...], list[list[Any]]] = {}
    for index, binding in enumerate(bindings.values()):
        if isinstance(binding, Ptr) or (isinstance(binding, Scalar) and binding.value % 16 == 0):
            attrs[(index,)] = [["tt.divisibility", 16]]
    return signature, constexprs, attrs


def build(
    fn: Any,
    bindings: dict[str, Ptr | Scalar | Desc | Const],
    *,
    source: str,
    tensors: dict[str, tuple[str, list[int], str]],
    grid: list[int],
    expected: dict[str, str],
    tolerance: dict[str, float],
    exercises: list[str],
    num_warps: int = 4,
    num_stages: int = 3,
    unverified: list[str] | None = None,
) -> tuple[str, Sidecar]:
    signature, constexprs, attrs = _signature(bindings)
    src = ASTSource(fn, signature=signature, constexprs=constexprs, attrs=attrs)
    compiled = triton.compile(
        src, target=TARGET, options={"num_warps": num_warps, "num_stages": num_stages, "ptx_version": PTX_VERSION}
    )
    meta = compiled.metadata
    ptx: str = compiled.asm["ptx"]

    tensor_specs = {n: Tensor(d, s, _strides(s), init) for n, (d, s, init) in tensors.items()}
    tensordesc_meta: list[dict[str, Any]] = list(getattr(meta, "tensordesc_meta", None) or [])
    # The CUDA launcher's own expansion: a descriptor becomes nvTmaDesc + shape (i32) + strides (i64).
    expanded = expand_signature(signature.values(), tensordesc_meta, "nvTmaDesc")
    meanings: list[tuple[str, Param]] = []
    desc_index = 0
    for name, binding in bindings.items():
        match binding:
            case Ptr(tensor=tensor, dtype=dtype):
                meanings.append(
                    (
                        "*",
                        Param("", "pointer", ".u64", f"{name}: pointer to {tensor} ({dtype}), 16-byte aligned", tensor),
                    )
                )
            case Scalar(value=value, meaning=meaning, dtype=dtype):
                meanings.append(
                    (
                        dtype,
                        Param(
                            "",
                            "scalar",
                            _PTX_INT[dtype],
                            f"{name}: {meaning}" + (", compiled assuming a multiple of 16" if value % 16 == 0 else ""),
                            value=value,
                        ),
                    )
                )
            case Desc(tensor=tensor, block_shape=block):
                spec = tensor_specs[tensor]
                tm = tensordesc_meta[desc_index]
                desc_index += 1
                elem = int(tm["elem_size"])
                box = [int(b) for b in tm["block_size"]]
                tensormap = {
                    "tensor": tensor,
                    "element_type": _TMA_ELEM[TMA_DTYPE_DEVICE_TO_HOST[int(tm["elem_type"])]],
                    "rank": len(spec.shape),
                    "global_dims": spec.shape[::-1],
                    "global_strides_bytes": [s * elem for s in spec.strides[::-1][1:]],
                    "box_dims": box[::-1],
                    "element_strides": [1] * len(spec.shape),
                    "interleave": "none",
                    "swizzle": _SWIZZLE[int(tm["swizzle"])],
                    "l2_promotion": "128B",
                    "oob_fill": "none (zeros)",
                    "from": "CompiledKernel.metadata.tensordesc_meta (swizzle, elem_type, elem_size, block_size); "
                    "order, element strides, interleave, L2 promotion and fill (padding='zero') as "
                    "triton/backends/nvidia/driver.c fill_tma_descriptor_tiled encodes them",
                }
                meanings.append(
                    (
                        "nvTmaDesc",
                        Param("", "tensormap", ".b8",
                              f"{name}: CUtensorMap of {tensor} (Triton block {list(block)}; TMA box: box_dims)",
                              tensor, tensormap=tensormap, size=128),
                    )
                )  # fmt: skip
                for axis, dim in enumerate(spec.shape):
                    meanings.append(("i32", Param("", "scalar", ".u32", f"{name}.shape[{axis}]", value=dim)))
                for axis, stride in enumerate(spec.strides):
                    meanings.append(("i64", Param("", "scalar", ".u64", f"{name}.strides[{axis}]", value=stride)))
            case Const():
                pass
    flat = [t for t in expanded if t != "constexpr"]
    assert [t if t[0] != "*" else "*" for t in flat] == [m[0] for m in meanings], (flat, meanings)

    entry = entry_signatures(ptx)[meta.name]
    scratch = [
        ("global_scratch", meta.global_scratch_size, meta.global_scratch_align),
        ("profile_scratch", meta.profile_scratch_size, meta.profile_scratch_align),
    ]
    extra = len(entry.params) - len(meanings)
    if extra != len(scratch):
        raise SystemExit(f"{source}: {len(entry.params)} PTX parameters, {len(meanings)} from the signature")
    params: list[Param] = []
    for (_, param), ptx_param in zip(meanings, entry.params, strict=False):
        params.append(Param(**{**param.__dict__, "name": ptx_param.name}))
    for (what, size, align), ptx_param in zip(scratch, entry.params[len(meanings) :], strict=True):
        meaning = f"{what} memory, appended by Triton's launcher: {size} bytes, {align}-byte aligned" + (
            "; null when the size is 0 (triton/backends/nvidia/driver.py)" if size == 0 else ""
        )
        if size:
            tensor_specs[what] = Tensor("uint8", [size], [1], "zeros")
        params.append(Param(ptx_param.name, "pointer", ".u64", meaning, what if size else None))

    sidecar = Sidecar(
        source=source,
        compiler={"name": "triton", "version": triton.__version__, "target": "cuda:100 (sm_100a), warp 32"},
        kernel=meta.name,
        grid=grid,
        block=[meta.num_warps * 32, 1, 1],
        cluster=list(getattr(meta, "cluster_dims", None) or [1, 1, 1]),
        dynamic_shared_bytes=meta.shared,
        params=params,
        tensors=tensor_specs,
        expected=expected,
        tolerance=tolerance,
        exercises=exercises,
        compiler_facts={
            "num_warps": meta.num_warps,
            "num_ctas": meta.num_ctas,
            "shared": meta.shared,
            "tmem_size": getattr(meta, "tmem_size", None),
            "global_scratch_size": meta.global_scratch_size,
            "profile_scratch_size": meta.profile_scratch_size,
            "ptx_version": getattr(meta, "ptx_version", None),
            "launch_cooperative_grid": meta.launch_cooperative_grid,
        },
        unverified=[
            "grid: not a compiler fact; the launch grid written in the kernel's source (`GRID`)",
            "block: num_warps * 32 (Triton's launcher uses num_warps * warp_size threads per CTA)",
            *(unverified or []),
        ],
    )
    return ptx, sidecar

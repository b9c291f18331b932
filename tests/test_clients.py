"""The client corpus (tests/clients/): Triton 3.9 and CuTe DSL 4.8 kernels compiled for sm_100a.

Always: every committed `.ptx` assembles with `ptxas -arch=sm_100a`, and its `.json` sidecar
agrees with the PTX's `.entry` signature (name, parameter names and kinds, byval sizes, block
size against `.reqntid`/`.maxntid`, cluster against `.reqnctapercluster`). With the client
compilers at hand (extra `clients`, not in CI): regenerating gives the committed files byte for
byte.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from clients.sidecar import (
    Entry,
    cli_arguments,
    entry_signatures,
    gemm_at_shape,
    instructions,
    launch_arguments,
    make_tensors,
    run_client,
)
from external import run_tool
from support import ROOT

CLIENTS = ROOT / "tests" / "clients"

PTX_FILES = sorted(CLIENTS.glob("*/*.ptx"))
PTX_IDS = [p.relative_to(CLIENTS).as_posix() for p in PTX_FILES]


def _sidecar(ptx: Path) -> dict[str, Any]:
    return json.loads(ptx.with_suffix(".json").read_text())


def _entry(ptx: Path, kernel: str) -> Entry:
    entries = entry_signatures(ptx.read_text())
    assert kernel in entries, f"{ptx.name}: no .entry {kernel} (entries: {sorted(entries)})"
    return entries[kernel]


def test_corpus_is_complete() -> None:
    """Every kernel source has its PTX and sidecar committed, and the other way round."""
    sources = {p.with_suffix("") for p in CLIENTS.glob("*/*.py") if not p.name.startswith("_")}
    assert sources == {p.with_suffix("") for p in PTX_FILES}
    assert sources == {p.with_suffix("") for p in CLIENTS.glob("*/*.json")}
    assert {p.parent.name for p in sources} == {"triton", "cute"}


@pytest.mark.parametrize("ptx", PTX_FILES, ids=PTX_IDS)
def test_ptx_assembles(ptx: Path, ptxas: str, tmp_path: Path) -> None:
    run_tool([ptxas, "-arch=sm_100a", str(ptx), "-o", str(tmp_path / "kernel.cubin")])


@pytest.mark.parametrize("ptx", PTX_FILES, ids=PTX_IDS)
def test_sidecar_matches_entry(ptx: Path) -> None:
    sidecar = _sidecar(ptx)
    entry = _entry(ptx, sidecar["kernel"])
    params: list[dict[str, Any]] = sidecar["params"]
    assert [p["name"] for p in params] == [p.name for p in entry.params]
    for described, declared in zip(params, entry.params, strict=True):
        if described["kind"] in ("tensormap", "struct"):
            # A by-value aggregate is a `.b8 name[size]` array (PTX ISA §5.1.5.1); a CUtensorMap is
            # 128 bytes, 64-byte aligned (CUDA driver API, CUtensorMap).
            assert (declared.ptx_type, declared.array) == (".b8", described["size"]), described["name"]
            if described["kind"] == "tensormap":
                assert described["size"] == 128
                assert declared.align == 64
        else:
            assert declared.array is None, described["name"]
            assert declared.ptx_type == described["ptx_type"], described["name"]
        if described["kind"] == "pointer" and described.get("tensor") is not None:
            assert described["tensor"] in sidecar["tensors"]
    for key in ("grid", "block", "cluster"):
        assert len(sidecar[key]) == 3, key
        assert all(isinstance(v, int) and v >= 1 for v in sidecar[key]), key
    for directive in (".reqntid", ".maxntid"):
        if directive in entry.directives:
            declared_block = [*entry.directives[directive], 1, 1][:3]
            assert declared_block == sidecar["block"], directive
    if ".reqnctapercluster" in entry.directives:
        assert [*entry.directives[".reqnctapercluster"], 1, 1][:3] == sidecar["cluster"]
    threads = sidecar["block"][0] * sidecar["block"][1] * sidecar["block"][2]
    assert threads % 32 == 0
    assert threads <= 1024
    # The shared memory an sm_100 CTA may have (CUDA C Programming Guide, compute capability 10.0).
    assert 0 <= sidecar["dynamic_shared_bytes"] <= 232448
    assert set(sidecar["expected"]) <= set(sidecar["tensors"])


def test_sidecar_reader_sees_byval_and_directives() -> None:
    """The signature reader on PTX ISA examples of each parameter form (§5.1.5, §11.4)."""
    ptx = """
    .visible .entry k(
        .param .u64 .ptr .global .align 16 k_param_0,
        .param .align 64 .b8 k_param_1[128],
        .param .u32 k_param_2 // a comment, with a comma
    )
    .reqntid 256, 1, 1
    .reqnctapercluster 2, 1, 1
    { ret; }
    """
    (entry,) = entry_signatures(ptx).values()
    assert [(p.name, p.ptx_type, p.align, p.array) for p in entry.params] == [
        ("k_param_0", ".u64", None, None),
        ("k_param_1", ".b8", 64, 128),
        ("k_param_2", ".u32", None, None),
    ]
    assert entry.directives == {".reqntid": [256, 1, 1], ".reqnctapercluster": [2, 1, 1]}


@pytest.mark.parametrize("ptx", PTX_FILES, ids=PTX_IDS)
def test_expected_result_is_a_numpy_expression_of_the_tensors(ptx: Path) -> None:
    """Each output's expression evaluates over the described inputs to the output's shape."""
    sidecar = _sidecar(ptx)
    arrays = make_tensors(sidecar["tensors"])
    for output, expression in sidecar["expected"].items():
        value = eval(expression, {"np": np}, dict(arrays))
        assert value.shape == arrays[output].shape, (output, expression)
        assert np.isfinite(value).all()
        assert not np.array_equal(value, arrays[output]), "the expected result must differ from the initial output"


_ELEMENT_BYTES = {"u8": 1, "u16": 2, "f16": 2, "bf16": 2, "u32": 4, "s32": 4, "f32": 4, "u64": 8, "s64": 8, "f64": 8}
_SWIZZLE_SPAN = {"32B": 32, "64B": 64, "128B": 128}


@pytest.mark.parametrize("ptx", PTX_FILES, ids=PTX_IDS)
def test_tensormaps_are_encodable(ptx: Path) -> None:
    """Each described CUtensorMap obeys `cuTensorMapEncodeTiled`'s rules (CUDA driver API, "Tensor
    Map Object Management": rank 1-5, global strides multiples of 16 bytes, box dims 1-256, inner
    box within the swizzle span and a multiple of 16 bytes, element strides 1-8) and describes its
    tensor (dims and strides are the tensor's, innermost first)."""
    sidecar = _sidecar(ptx)
    maps = [p["tensormap"] for p in sidecar["params"] if p["kind"] == "tensormap"]
    box_bytes = 0
    for tm in maps:
        tensor = sidecar["tensors"][tm["tensor"]]
        elem = _ELEMENT_BYTES[tm["element_type"]]
        assert np.dtype(tensor["dtype"]).itemsize == elem
        assert 1 <= tm["rank"] <= 5
        assert tm["global_dims"] == tensor["shape"][::-1]
        assert tm["global_strides_bytes"] == [s * elem for s in tensor["strides"][::-1][1:]]
        assert all(s % 16 == 0 for s in tm["global_strides_bytes"])
        assert len(tm["box_dims"]) == tm["rank"]
        assert all(1 <= b <= 256 for b in tm["box_dims"])
        assert all(1 <= e <= 8 for e in tm["element_strides"])
        assert tm["interleave"] == "none"
        assert (tm["box_dims"][0] * elem) % 16 == 0
        if tm["swizzle"] != "none":
            assert tm["box_dims"][0] * elem <= _SWIZZLE_SPAN[tm["swizzle"]]
        if tm["tensor"] in ("a", "b"):
            box: list[int] = tm["box_dims"]
            box_bytes += math.prod(box) * elem
    if "tx_bytes_per_stage" in sidecar["compiler_facts"]:
        # The A and B boxes of one CTA make one ring stage; with cta_group 2 the leader's barrier
        # expects both CTAs' bytes.
        assert box_bytes * sidecar["cluster"][0] == sidecar["compiler_facts"]["tx_bytes_per_stage"]


def _client_python() -> str | None:
    """An interpreter with both client compilers: this one, or `$XDSL_TMEM_CLIENTS_PYTHON`."""
    if all(importlib.util.find_spec(m) is not None for m in ("triton", "cutlass")):
        return sys.executable
    return os.environ.get("XDSL_TMEM_CLIENTS_PYTHON")


def test_regenerating_gives_the_committed_files() -> None:
    python = _client_python()
    if python is None:
        pytest.skip("triton / cutlass not installed (pip install -e '.[clients]' or set $XDSL_TMEM_CLIENTS_PYTHON)")
    proc = subprocess.run(
        [python, str(CLIENTS / "regenerate.py"), "--check"], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stderr[-6000:]


def test_instruction_reader_counts_statements() -> None:
    """Hand-counted: 5 instructions. Vector operands `{...}` are operands, a bare `{` opens a
    scope, guards and labels are not part of the opcode, directives are not instructions."""
    ptx = """
    .global .align 4 .b32 table[2] = {1, 2};
    .visible .entry k(.param .u64 k_param_0)
    {
        .reg .b32 %r<5>;
        .reg .pred %p<2>;
        ld.param.u64 %rd1, [k_param_0];
        { .reg .b32 t; mov.b32 t, 1; }
    $L_loop:
        @!%p1 tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r1, %r2}, [%r3];
        .loc 1 2 3
        @%p1 bra $L_loop;
        $L_a: $L_b: ret;
    }
    """
    assert instructions(ptx) == [
        "ld.param.u64",
        "mov.b32",
        "tcgen05.ld.sync.aligned.32x32b.x2.b32",
        "bra",
        "ret",
    ]


def test_readme_statistics_are_current() -> None:
    """The README's opcode tables are what `regenerate.py --stats` says of the committed PTX."""
    proc = subprocess.run(
        [sys.executable, str(CLIENTS / "regenerate.py"), "--stats"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    readme = (CLIENTS / "README.md").read_text()
    assert f"<!-- stats -->\n{proc.stdout}<!-- /stats -->" in readme


# --------------------------------------------------------------------------------------
# Running the client kernels (issue 13): launch and inputs from the sidecar, numpy's result
# --------------------------------------------------------------------------------------

RUNNABLE = ["cute/elementwise.ptx", "triton/elementwise.ptx"]


def _check_expected(sidecar: dict[str, Any], outputs: dict[str, np.ndarray[Any, Any]]) -> None:
    inputs = make_tensors(sidecar["tensors"])
    for name, expression in sidecar["expected"].items():
        want = eval(expression, {"np": np}, dict(inputs))
        got = outputs[name]
        assert got.dtype == want.dtype, name
        assert got.shape == want.shape, name
        assert float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) <= sidecar["tolerance"][name]


@pytest.mark.parametrize("name", RUNNABLE)
def test_client_kernel_runs_to_numpys_result(name: str) -> None:
    """`run_kernel` on the client's PTX: grid from the sidecar, block from the kernel's
    `.reqntid` (checked to be the sidecar's), tensors `rand:SEED`/`zeros` as the sidecar
    makes them; each output equals the sidecar's numpy expression within its tolerance."""
    from xdsl_tmem.diagnostics import SourceMap
    from xdsl_tmem.frontend import load_ptx
    from xdsl_tmem.interpreter import run_kernel

    ptx = CLIENTS / name
    sidecar = _sidecar(ptx)
    module = load_ptx(ptx.read_bytes(), str(ptx), SourceMap())
    result = run_kernel(module, sidecar["kernel"], grid=sidecar["grid"], cluster=sidecar["cluster"],
                        args=launch_arguments(sidecar))  # fmt: skip
    assert list(result.report.launch.block) == sidecar["block"]
    _check_expected(sidecar, result.outputs)


def test_client_kernel_runs_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CuTe's elementwise kernel through `xdsl-tmem-run`: each tensor a named buffer (`.npy`),
    each byval tensor struct `struct:0=ptr:TENSOR`, no `--block` (`.reqntid 128`)."""
    from xdsl_tmem.tools import run

    ptx = CLIENTS / "cute" / "elementwise.ptx"
    sidecar = _sidecar(ptx)
    argv = [str(ptx), "--kernel", sidecar["kernel"], "--grid", "x".join(map(str, sidecar["grid"]))]
    for tensor, array in make_tensors(sidecar["tensors"]).items():
        np.save(tmp_path / f"{tensor}.npy", array)
        argv += ["--arg", f"{tensor}={tmp_path / tensor}.npy"]
    for i, param in enumerate(sidecar["params"]):
        argv += ["--arg", f"arg{i}=struct:" + ",".join(f"{f['offset']}=ptr:{f['pointer_to']}" for f in param["fields"])]
    code = run.main([*argv, "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    outputs = {t: np.load(tmp_path / "out" / f"{t}.npy") for t in sidecar["tensors"]}
    _check_expected(sidecar, outputs)


# --------------------------------------------------------------------------------------
# Triton's pointer GEMM (issue 14): cp.async ring, ldmatrix epilogue, dynamic shared memory
# --------------------------------------------------------------------------------------

GEMM_DOT = CLIENTS / "triton" / "gemm_dot.ptx"


def _gemm_dot_error_bound(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Per element of a @ b, the rounding error any f32 summation of the K products may make.
    f16 x f16 products are exact in f32 (11 + 11 significand bits <= 24), so only the
    additions round; any order of K - 1 round-to-nearest additions is within
    gamma_{K-1} * sum_k |a_ik b_kj|, gamma_n = n u / (1 - n u), u = 2^-24 (Higham, "Accuracy
    and Stability of Numerical Algorithms", 2nd ed., section 4.2). Our tcgen05.mma adds each
    16-deep K slice in f32 (tcgen05.py, mma_product); a tensor core's order is not ours."""
    k = a.shape[1]
    u = 2.0**-24
    gamma = (k - 1) * u / (1 - (k - 1) * u)
    return gamma * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def _run_gemm_dot(text: str | None = None, **launch: Any) -> Any:
    from xdsl_tmem.diagnostics import SourceMap
    from xdsl_tmem.frontend import load_ptx
    from xdsl_tmem.interpreter import run_kernel

    sidecar = _sidecar(GEMM_DOT)
    module = load_ptx(GEMM_DOT.read_text() if text is None else text, str(GEMM_DOT), SourceMap())
    return run_kernel(module, sidecar["kernel"], grid=sidecar["grid"], cluster=sidecar["cluster"],
                      dynamic_shared_bytes=sidecar["dynamic_shared_bytes"], args=launch_arguments(sidecar),
                      **launch)  # fmt: skip


def test_triton_gemm_dot_runs_to_numpys_gemm() -> None:
    """The whole grid (4 CTAs of 128 threads, 36880 bytes of dynamic shared memory) under
    the hazard checks, thread synchronisation ordering tcgen05 work (`mojo`: the PTX has no
    tcgen05.fence, below): c equals the exact product within the f32 summation bound, and
    numpy's f32 GEMM within twice that and the sidecar's tolerance."""
    sidecar = _sidecar(GEMM_DOT)
    result = _run_gemm_dot(fence_policy="mojo")
    assert list(result.report.launch.block) == sidecar["block"]
    inputs = make_tensors(sidecar["tensors"])
    a, b, c = inputs["a"], inputs["b"], result.outputs["c"]
    exact = a.astype(np.float64) @ b.astype(np.float64)  # exact: 22-bit products, 7 bits of carries
    bound = _gemm_dot_error_bound(a, b)
    assert np.all(np.abs(c.astype(np.float64) - exact) <= bound)
    numpy_f32 = a.astype(np.float32) @ b.astype(np.float32)
    assert np.all(np.abs(c.astype(np.float64) - numpy_f32.astype(np.float64)) <= 2 * bound)
    _check_expected(sidecar, result.outputs)


def test_triton_gemm_dot_lacks_the_tcgen05_fences_the_ptx_memory_model_needs() -> None:
    """Triton 3.9 zeroes the accumulator with tcgen05.st in all four warps, waits
    (tcgen05.wait::st), synchronises with bar.sync and lets warp 0 issue the MMAs, with no
    tcgen05.fence::before_thread_sync / after_thread_sync around the barrier, which the PTX
    ISA's tcgen05 memory consistency model requires to order the stores before the MMA: under
    the `strict` policy that is the tmem-write-after-write the model reports."""
    from xdsl_tmem.interpreter import KernelHazard

    assert "tcgen05.fence" not in GEMM_DOT.read_text()
    with pytest.raises(KernelHazard) as caught:
        _run_gemm_dot(fence_policy="strict")
    assert caught.value.kind == "tmem-write-after-write"
    assert caught.value.message.startswith("ptx.tcgen05_mma by warp 0")
    assert "ptx.tcgen05_st by warp" in caught.value.message


def test_triton_gemm_dot_without_its_loop_wait_feeds_the_mma_unlanded_copies() -> None:
    """The K loop's `cp.async.wait_group 2` removed (the last one of the file): the stage the
    MMA reads next is a group no wait completed, so its copies have not landed and, on
    the stage's first use, the tensor core reads shared memory nothing has written.
    (On a later use the bytes hold the previous stage's tile: the tensor core's operand
    reads are not race-checked, so that is not reported: docs/ptx-level.md.)"""
    from xdsl_tmem.interpreter import KernelHazard

    text = GEMM_DOT.read_text()
    wait = "cp.async.wait_group \t2;"
    assert text.count(wait) == 2
    cut = text.rindex(wait)
    with pytest.raises(KernelHazard) as caught:
        _run_gemm_dot(text[:cut] + text[cut + len(wait) :], fence_policy="mojo")
    assert caught.value.kind == "smem-read-uninitialized"
    assert caught.value.message.startswith("ptx.tcgen05_mma by warp 0 reads its 128x16 operand tile")


# The TMA GEMMs (issue 14): byval CUtensorMap parameters described by their sidecar
# (`sidecar.tensor_map_argument`), dynamic shared memory, cp.async.bulk.tensor into the A/B ring.
# None of the four has a tcgen05.fence (the CuTe DSL's PTX neither: grep finds none), so they
# run under the `mojo` policy, thread synchronisation ordering tcgen05 work, as gemm_dot does.

TMA_GEMMS = ["cute/gemm_1cta", "cute/gemm_2cta", "triton/gemm_tma_ws", "triton/gemm_persistent_ws"]


def _run_client(name: str, text: str | None = None, **launch: Any) -> Any:
    return run_client(CLIENTS / f"{name}.ptx", text, **launch)


@pytest.mark.parametrize("name", TMA_GEMMS)
def test_tma_gemms_have_no_tcgen05_fence(name: str) -> None:
    assert "tcgen05.fence" not in (CLIENTS / f"{name}.ptx").read_text()


@pytest.mark.parametrize("name", TMA_GEMMS)
def test_tma_gemm_runs_to_numpys_gemm(name: str) -> None:
    """The whole grid with the sidecar's launch (tensor maps, cluster, dynamic shared memory),
    hazard checks on (`mojo`: no tcgen05.fence in the PTX): c = a @ b.T within the f32
    summation bound of the exact product (f16 products are exact in f32; only the additions
    round: `_gemm_dot_error_bound`), and numpy's f32 GEMM within twice that and the sidecar's
    tolerance. Triton's warp-specialised kernels run past their partition-state stores, a
    same-value race (below)."""
    sidecar = _sidecar(CLIENTS / f"{name}.ptx")
    result = _run_client(name, fence_policy="mojo")
    inputs = make_tensors(sidecar["tensors"])
    a, b, c = inputs["a"], inputs["b"].T, result.outputs["c"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = _gemm_dot_error_bound(a, b)
    assert np.all(np.abs(c.astype(np.float64) - exact) <= bound)
    numpy_f32 = a.astype(np.float32) @ b.astype(np.float32)
    assert np.all(np.abs(c.astype(np.float64) - numpy_f32.astype(np.float64)) <= 2 * bound)
    assert result.report.mma_count > 0
    _check_expected(sidecar, result.outputs)


PARTITION_STATE = {"triton/gemm_tma_ws": 73944, "triton/gemm_persistent_ws": 106592}
"""The word of Triton's warp-specialised prologue that tells each worker warp its partition."""


@pytest.mark.parametrize("name", sorted(PARTITION_STATE))
def test_triton_ws_gemm_partition_state_stores_are_same_value_races(name: str) -> None:
    """Triton 3.9's warp-specialised kernels store partition state with plain `st.shared.b32
    [global_smem+...]` in each of the 4 warps of the default partition (3 stores: the
    partition word and the tile's row offset, CTA-uniform, after the prologue's `bar.sync 0,
    128`; the partition word again before the exit), with no barrier among the 4 warps around
    them: the 2nd, 3rd and 4th warps' store of each races with the earlier ones, in every
    schedule, writing the same bytes. The PTX memory model leaves the same bytes in every
    order, so by default each is noted (3 stores x 3 warps per CTA), not reported, the first at
    the partition word's store; under the strict race policy the first is a smem-data-race."""
    from xdsl_tmem.diagnostics import SourceMap
    from xdsl_tmem.interpreter import KernelHazard

    ptx = CLIENTS / f"{name}.ptx"
    lines = ptx.read_text().splitlines()
    stores = [i for i, line in enumerate(lines, 1) if line.strip().startswith("st.shared.b32 \t[global_smem+")]
    assert len(stores) == 3
    word = f"st.shared.b32 \t[global_smem+{PARTITION_STATE[name]}]"
    assert lines[stores[0] - 1].strip().startswith(word)
    source_map = SourceMap()
    result = run_client(ptx, None, source_map, fence_policy="mojo")
    ctas = math.prod(_sidecar(ptx)["grid"])
    assert result.report.same_value_races == 3 * 3 * ctas
    first = result.report.first_same_value
    assert first is not None
    span = source_map.span_of(first.op)
    assert span is not None
    assert span.get_location().line == stores[0]
    assert f"@global_smem+{PARTITION_STATE[name]}" in first.message
    with pytest.raises(KernelHazard) as caught:
        _run_client(name, fence_policy="mojo", race_policy="strict")
    assert caught.value.kind == "smem-data-race", caught.value
    assert caught.value.message.startswith("ptx.st by warp")
    assert f"@global_smem+{PARTITION_STATE[name]}" in caught.value.message
    assert "both write the same bytes" in caught.value.message


@pytest.mark.parametrize("name", TMA_GEMMS)
def test_tma_gemm_is_safe_under_random_schedules(name: str) -> None:
    """Two random interleavings (seeds 1, 2) of the whole grid: no hazard, no deadlock, and
    the same product as numpy's within the sidecar's tolerance."""
    sidecar = _sidecar(CLIENTS / f"{name}.ptx")
    for seed in (1, 2):
        result = _run_client(name, fence_policy="mojo", schedule="random", seed=seed)
        _check_expected(sidecar, result.outputs)


@pytest.mark.parametrize(
    ("name", "shape", "grid", "launched"),
    [
        ("triton/gemm_dot", (128, 192, 64), None, 3),  # tiles 128x64: 1 x 3 programs
        ("triton/gemm_tma_ws", (256, 64, 128), None, 2),
        ("triton/gemm_persistent_ws", (128, 192, 64), [2, 1, 1], 2),  # 3 tiles over 2 programs
    ],
)
def test_triton_gemm_runs_at_another_shape(
    name: str, shape: tuple[int, int, int], grid: list[int] | None, launched: int
) -> None:
    """Triton's M, N, K, descriptor shapes and strides are run-time parameters: the committed PTX
    with its sidecar resized (`gemm_at_shape`: tensors, scalar parameters, tensor maps' global
    dims and strides, one program per tile unless a grid is given) computes that shape's GEMM,
    to numpy's within the sidecar's tolerance."""
    m, n, k = shape
    sidecar = gemm_at_shape(_sidecar(CLIENTS / f"{name}.ptx"), m, n, k, grid)
    assert sidecar["grid"] == [launched, 1, 1]
    assert sidecar["tensors"]["c"]["shape"] == [m, n]
    scalars = {p["meaning"].split(":")[0]: p["value"] for p in sidecar["params"] if p["kind"] == "scalar"}
    assert scalars.get("K", k) == k
    assert scalars.get("a_desc.shape[1]", k) == k
    result = run_client(CLIENTS / f"{name}.ptx", sidecar=sidecar, fence_policy="mojo")
    _check_expected(sidecar, result.outputs)


# The 1024^3 builds (`cute/*_1024`) are the same kernels at the speed benchmark's shape
# (benchmarks/client_gemms.py runs them to numpy's GEMM); exploring them would take minutes.
CLIENT_KERNELS = [p.relative_to(CLIENTS).with_suffix("").as_posix() for p in PTX_FILES if not p.stem.endswith("_1024")]


@pytest.mark.parametrize("name", CLIENT_KERNELS)
def test_client_kernel_explores_safe_from_the_command_line(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`xdsl-tmem-run KERNEL.ptx <the sidecar's launch> --fence-policy mojo --explore random:3`
    (`sidecar.cli_arguments`: tensors as .npy files, tensor maps as `--arg tensormap:...`):
    three random schedules of the whole grid, SAFE; Triton's warp-specialised kernels with the
    note on their same-value partition-state stores at the first one's line."""
    from xdsl_tmem.tools import run

    ptx = CLIENTS / f"{name}.ptx"
    argv = [str(ptx), *cli_arguments(ptx, tmp_path), "--fence-policy", "mojo", "--explore", "random:3"]
    code = run.main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith("explore random: SAFE: 3 schedules (seeds 0-2)"), captured.out
    notes = [line for line in captured.out.splitlines() if "same-value write-write" in line]
    if name in PARTITION_STATE:
        (note,) = notes
        ctas = math.prod(_sidecar(ptx)["grid"])
        line = next(i for i, text in enumerate(ptx.read_text().splitlines(), 1) if "[global_smem+" in text
                    and text.strip().startswith("st.shared.b32"))  # fmt: skip
        assert note.startswith(f"{ptx}:{line}:")
        assert f"note: {3 * 3 * 3 * ctas} same-value write-write races over the schedules" in note
    else:
        assert notes == []


def test_sentryward_comparison_runs_clients_with_the_tests_launch() -> None:
    """`benchmarks/compare_sentryward.py` (outside CI) gives our verdict on a client through
    `sidecar.run_client`: CuTe's elementwise kernel to the sidecar's numpy expression exactly
    (`x * 2 + y` in f32, tolerance 0), Triton's TMA kernel SAFE to the GEMM within the sidecar's
    tolerance, with the same-value races of its partition-state stores (test above) counted."""
    spec = importlib.util.spec_from_file_location("compare_sentryward", ROOT / "benchmarks" / "compare_sentryward.py")
    assert spec is not None
    assert spec.loader is not None
    compare = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = compare  # its dataclasses look their module up
    spec.loader.exec_module(compare)
    elementwise = compare.run_client_verdict("cute/elementwise", str(CLIENTS / "cute" / "elementwise.ptx"))
    assert elementwise == "SAFE, max error 0"
    tma = compare.run_client_verdict("triton/gemm_tma_ws", str(CLIENTS / "triton" / "gemm_tma_ws.ptx"))
    prefix = "SAFE (36 same-value write-write races noted), max error "
    assert tma.startswith(prefix), tma
    assert float(tma.removeprefix(prefix)) <= _sidecar(CLIENTS / "triton" / "gemm_tma_ws.ptx")["tolerance"]["c"]

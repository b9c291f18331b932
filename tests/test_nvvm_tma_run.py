"""The nvvm TMA and bulk-copy ops executed: each NVVM program (tests/tma_programs.py) runs at
the NVVM level, through our backend's PTX at the PTX level and through llc-22's PTX
(mlir-opt-22 | mlir-translate-22 | llc-22) at the PTX level, with the same launch
(tensor maps as `TensorMapArgument`s), and every level must give the shared-memory images
and global tensors numpy's slicing gives (`window`: the box of the zero- or NaN-padded
tensor; `place`: laid out row by row at the swizzle span's pitch, each byte at the address
the swizzle formula gives, docs/tma.md), or the same hazard or deadlock class. The
expected values never come from the model. A few H100 fixtures
(tests/silicon/fixtures/tma) are replayed as NVVM programs too."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from external import Upstream
from silicon_replay import buffer_bytes
from support import ROOT, OptResult, ptxas_assemble, run_cli
from tma_programs import (
    HASH,
    LoadForm,
    Program,
    Round,
    bulk_groups,
    hash_fill,
    silicon_pattern,
    tensor_load,
    tensor_store,
)
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard, LaunchError, run_kernel
from xdsl_tmem.interpreter.tma import SHORT_TYPES, TensorMap, TensorMapArgument, parse_tensor_map_arg
from xdsl_tmem.tools import upstream as upstream_route
from xdsl_tmem.tools.run import make_context

FIXTURES = ROOT / "tests" / "silicon" / "fixtures" / "tma"
LEVELS = ("nvvm", "ours", "llc")
SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
DTYPES = {"u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "f16": np.float16, "f32": np.float32,
          "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32, "FLOAT16": np.float16,
          "FLOAT32": np.float32, "BFLOAT16": np.uint16, "FLOAT64": np.float64}  # fmt: skip


# --------------------------------------------------------------------------------------
# The independent expectation: numpy slicing and the swizzle formula
# --------------------------------------------------------------------------------------


def window(tensor: np.ndarray, coords: Sequence[int], box: Sequence[int], fill: bytes) -> np.ndarray:
    """The box at `coords` (dimension 0 first) of `tensor` (numpy order: dimension 0 last),
    elements outside the tensor `fill`."""
    out = np.frombuffer(fill * (int(np.prod(box))), dtype=tensor.dtype).reshape(tuple(reversed(box))).copy()
    src: list[slice] = []
    dst: list[slice] = []
    for c, b, d in zip(reversed(coords), reversed(box), tensor.shape, strict=True):
        lo, hi = max(c, 0), min(c + b, d)
        if hi <= lo:
            return out
        src.append(slice(lo, hi))
        dst.append(slice(lo - c, hi - c))
    out[tuple(dst)] = tensor[tuple(src)]
    return out


def addresses(box_bytes: np.ndarray, dst: int, swizzle: str) -> np.ndarray:
    """The shared byte address of each byte of the box (rows of dimension 0, at the pitch
    of the swizzle span): the 16-byte chunk index XOR the 128-byte row index's low bits."""
    rows = box_bytes.reshape(-1, box_bytes.shape[-1] if box_bytes.ndim > 1 else box_bytes.size)
    inner = rows.shape[1]
    pitch = max(inner, SPAN[swizzle])
    logical = dst + np.arange(rows.shape[0])[:, None] * pitch + np.arange(inner)[None, :]
    bits = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}[swizzle]
    return (logical ^ (((logical >> 7) & ((1 << bits) - 1)) << 4)).reshape(-1)


def place(image: np.ndarray, box: np.ndarray, dst: int, swizzle: str) -> None:
    """Write the box's bytes into the shared image."""
    raw = box.reshape(box.shape[0] if box.ndim > 1 else 1, -1).view(np.uint8)
    raw = raw.reshape(-1, box.shape[-1] * box.itemsize)
    image[addresses(raw, dst, swizzle)] = raw.reshape(-1)


def read_box(image: np.ndarray, shape: Sequence[int], dtype: Any, src: int, swizzle: str) -> np.ndarray:
    """The box a store reads from the shared image (numpy order `shape`)."""
    inner = shape[-1] * np.dtype(dtype).itemsize
    rows = int(np.prod(shape[:-1]))
    at = addresses(np.zeros((rows, inner), np.uint8), src, swizzle)
    return image[at].view(dtype).reshape(tuple(shape))


# --------------------------------------------------------------------------------------
# The three levels
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Map:
    """A tensor map over the buffer `buffer`, as `tensormap:` describes it."""

    buffer: str
    spec: str  # TYPE:DIMS:STRIDES:BOX[:OPTIONS]

    def argument(self) -> TensorMapArgument:
        return parse_tensor_map_arg(f"tensormap:{self.buffer}:{self.spec}")


class Written(Program):
    """A program given as its text (one CTA)."""

    def __init__(self, written: str) -> None:
        super().__init__([], 0, [])
        self.written = written

    def text(self) -> str:
        return self.written


def lowered(text: str, upstream: Upstream) -> dict[str, ModuleOp]:
    module = Parser(make_context(), text).parse_module()
    ours = module.clone()
    ConvertToPtxPass().apply(make_context(), ours)
    llc = upstream_route.llc_lowering(upstream)(module)
    return {"nvvm": module, "ours": ours, "llc": llc}


Outcome = dict[str, np.ndarray] | str


def run_levels(
    program: Program, maps: Sequence[Map], buffers: Mapping[str, np.ndarray], out_bytes: int, upstream: Upstream,
    pointers: Sequence[np.ndarray] = (),
) -> dict[str, Outcome]:  # fmt: skip
    """Each level's outputs (`out` and the named buffers), or its failure's class
    (`hazard:<kind>`, `deadlock`). Parameters by position, buffers by name."""
    params: list[Any] = [m.argument() for m in maps] + list(pointers) + [np.zeros(out_bytes, np.uint8)]
    args: dict[str, Any] = {f"arg{i}": p for i, p in enumerate(params)} | dict(buffers)
    results: dict[str, Outcome] = {}
    for level, module in lowered(program.text(), upstream).items():
        try:
            result = run_kernel(module, "k", block=128, grid=(program.cluster, 1, 1),
                                cluster=(program.cluster, 1, 1), args=args, max_steps=400_000)  # fmt: skip
        except KernelHazard as e:
            results[level] = f"hazard:{e.kind}"
            continue
        except KernelDeadlock:
            results[level] = "deadlock"
            continue
        outputs = result.outputs
        # (by name at the NVVM level; by position, `k_param_N`, in the PTX of either backend)
        names = params_names(program, maps)
        named = {n: outputs.get(n, outputs.get(f"k_param_{i}")) for i, n in enumerate(names) if n != "-"}
        assert all(v is not None for v in named.values()), sorted(outputs)
        results[level] = {n: np.asarray(v) for n, v in named.items()} | {n: np.asarray(outputs[n]) for n in buffers}
    return results


def params_names(program: Program, maps: Sequence[Map]) -> list[str]:
    return ["-"] * len(maps) + list(program.pointers) + ["out"]


def assert_levels(results: Mapping[str, Outcome], expected: Mapping[str, np.ndarray] | str) -> None:
    for level in LEVELS:
        got = results[level]
        if isinstance(expected, str):
            assert got == expected, f"{level}: {got}"
            continue
        assert not isinstance(got, str), f"{level}: {got}"
        for name, want in expected.items():
            assert got[name].tobytes() == want.tobytes(), f"{level}: {name} differs from numpy's"


def images(smem: int, rounds: int, ctas: int = 1) -> np.ndarray:
    return np.full(smem * rounds * ctas, 0xA5, np.uint8)


RNG = np.random.default_rng(14)


def tensor(shape: Sequence[int], dtype: Any) -> np.ndarray:
    """Random values (numpy order), all bit patterns of the element type."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return RNG.integers(0, 256, size, dtype=np.uint8).view(dtype).reshape(tuple(shape))


NAN_HALF = b"\xf7\x7f"


def _fill(dtype: Any, nan: bool) -> bytes:
    size = np.dtype(dtype).itemsize
    return (NAN_HALF * size)[:size] if nan else bytes(size)


# --------------------------------------------------------------------------------------
# Loads
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadCase:
    type: str
    dims: tuple[int, ...]  # dimension 0 first
    box: tuple[int, ...]
    swizzle: str
    loads: tuple[tuple[tuple[int, ...], int], ...]  # (coords, destination)
    nan: bool = False


LOAD_CASES = {
    "1d_clip_end": LoadCase("u32", (1000,), (64,), "NONE", (((960,), 0), ((-16,), 256), ((0,), 512))),
    "2d_sw128": LoadCase("u16", (256, 40), (64, 8), "128B", (((64, 3), 0), ((192, 36), 1024), ((-64, -2), 2048))),
    "3d_sw64_both_ends": LoadCase("f32", (40, 6, 5), (16, 4, 2), "64B", (((-4, 1, -1), 0), ((36, 4, 4), 1024))),
    "4d_sw32": LoadCase("u8", (64, 3, 3, 2), (32, 2, 2, 2), "32B", (((32, 2, 1, 1), 0), ((0, 0, 0, 0), 512))),
    "5d_nan": LoadCase("f16", (16, 3, 3, 2, 2), (8, 2, 2, 2, 2), "NONE", (((8, 2, 2, 1, 1), 0), ((0, 0, 0, 0, 0), 256)),
                       nan=True),
}  # fmt: skip


def _load_spec(case: LoadCase) -> str:
    size = np.dtype(DTYPES[case.type]).itemsize
    strides = [size * int(np.prod(case.dims[: i + 1])) for i in range(len(case.dims) - 1)]
    options = [f"swizzle={case.swizzle}"] if case.swizzle != "NONE" else []
    options += ["oob=nan"] if case.nan else []
    parts = [case.type, "x".join(map(str, case.dims)), "x".join(map(str, strides)) or "-", "x".join(map(str, case.box))]
    return ":".join(parts + ([",".join(options)] if options else []))


@pytest.mark.parametrize("name", sorted(LOAD_CASES))
def test_tensor_loads_agree_with_numpy_at_every_level(upstream: Upstream, name: str) -> None:
    case = LOAD_CASES[name]
    dtype = DTYPES[case.type]
    a = tensor(tuple(reversed(case.dims)), dtype)
    smem = 4096
    box_bytes = int(np.prod(case.box)) * np.dtype(dtype).itemsize
    ops = "".join(tensor_load("tmA", coords, dst) for coords, dst in case.loads)
    program = Program(["tmA"], smem, [Round(ops, box_bytes * len(case.loads))], prefetch=True)
    expected = images(smem, 1)
    for coords, dst in case.loads:
        place(expected, window(a, coords, case.box, _fill(dtype, case.nan)), dst, case.swizzle)
    results = run_levels(program, [Map("a", _load_spec(case))], {"a": a}, smem, upstream)
    assert_levels(results, {"out": expected, "a": a})


def test_load_forms_hint_predicate_cta_only_and_group(upstream: Upstream) -> None:
    """An L2 hint changes nothing; a false predicate issues nothing (the phase expects only
    the three other boxes); `isCTAOnly` and `group = cta_1` load into the issuing CTA."""
    a = tensor((32, 32), np.uint16)
    forms = [(LoadForm(hint=True), 0), (LoadForm(predicate=True), 1024), (LoadForm(predicate=False), 2048),
             (LoadForm(cta_only=True), 3072), (LoadForm(group=1), 4096)]  # fmt: skip
    coords = [(0, 0), (16, 8), (0, 16), (16, 24), (16, 0)]
    ops = "".join(tensor_load("tmA", c, dst, form=f) for (f, dst), c in zip(forms, coords, strict=True))
    smem = 5120
    program = Program(["tmA"], smem, [Round(ops, 256 * 4)])
    expected = images(smem, 1)
    for (form, dst), c in zip(forms, coords, strict=True):
        if form.predicate is not False:
            place(expected, window(a, c, (16, 8), bytes(2)), dst, "NONE")
    results = run_levels(program, [Map("a", "u16:32x32:64:16x8")], {"a": a}, smem, upstream)
    assert_levels(results, {"out": expected})


def test_multicast_in_a_cluster_of_two_writes_the_ctas_of_the_mask(upstream: Upstream) -> None:
    """CTA 0 multicasts one box to both CTAs (mask 0b11); CTA 1 one box to itself only
    (0b10) and one to both: CTA 0 expects two boxes' bytes, CTA 1 three."""
    a = tensor((16, 64), np.uint16)
    smem = 2048
    ops = (
        "      scf.if %is0_0 {\n" + tensor_load("tmA", (0, 0), 0, mask=0b11, tag="c0") + "      }\n"
        "      scf.if %is0_1 {\n" + tensor_load("tmA", (16, 8), 1024, mask=0b10, tag="c1")
        + tensor_load("tmA", (32, 4), 512, mask=0b11, tag="c2") + "      }\n"
    )  # fmt: skip
    program = Program(["tmA"], smem, [Round(ops, 512, issuers=(0, 1), tx_per_rank=256)], cluster=2)
    box = (16, 8)
    expected = images(smem, 1, 2)
    cta0, cta1 = expected[:smem], expected[smem:]
    for image in (cta0, cta1):
        place(image, window(a, (0, 0), box, bytes(2)), 0, "NONE")
        place(image, window(a, (32, 4), box, bytes(2)), 512, "NONE")
    place(cta1, window(a, (16, 8), box, bytes(2)), 1024, "NONE")
    results = run_levels(program, [Map("a", "u16:64x16:128:16x8")], {"a": a}, 2 * smem, upstream)
    assert_levels(results, {"out": expected})


# --------------------------------------------------------------------------------------
# Stores, reductions, bulk copies, groups
# --------------------------------------------------------------------------------------


def _store_case(
    reduction: str | None, read: bool, upstream: Upstream, swizzle: str = "NONE", predicated: bool = False
) -> None:
    dims, box = (48, 20), (32, 8)  # u32: the second box is clipped at both ends' far side
    g = tensor(tuple(reversed(dims)), np.uint32)
    smem = 4096
    stores = [((0, 0), 0), ((32, 16), 1024)]
    guards = (True, None) if predicated else (None, None)
    ops = "".join(tensor_store("tmG", c, src, reduction, p) for (c, src), p in zip(stores, guards, strict=True))
    if predicated:  # a third store whose predicate does not hold: nothing written
        ops += tensor_store("tmG", (16, 8), 2048, predicate=False)
    ops += bulk_groups(read)
    program = Program(["tmG"], smem, [Round(ops, None, pattern=HASH)])
    options = f":swizzle={swizzle}" if swizzle != "NONE" else ""
    results = run_levels(program, [Map("g", f"u32:48x20:192:32x8{options}")], {"g": g}, smem, upstream)
    image = hash_fill(smem // 4).view(np.uint8)
    want = g.copy()
    ops_np: dict[str | None, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        None: lambda old, new: new, "add": lambda old, new: old + new, "min": np.minimum,
        "xor": np.bitwise_xor, "inc": lambda old, new: np.where(old >= new, 0, old + 1).astype(np.uint32),
    }  # fmt: skip
    for (x, y), src in stores:
        values = read_box(image, tuple(reversed(box)), np.uint32, src, swizzle)
        rows, cols = min(box[1], dims[1] - y), min(box[0], dims[0] - x)
        old = want[y : y + rows, x : x + cols]
        want[y : y + rows, x : x + cols] = ops_np[reduction](old, values[:rows, :cols])
    assert_levels(results, {"out": np.zeros(smem, np.uint8), "g": want})


def test_tensor_store_clips_and_completes_in_a_bulk_group(upstream: Upstream) -> None:
    _store_case(None, read=True, upstream=upstream)


def test_predicated_tensor_store_writes_only_where_its_predicate_holds(upstream: Upstream) -> None:
    _store_case(None, read=True, upstream=upstream, predicated=True)


def test_swizzled_tensor_store_reads_the_layout_loads_write(upstream: Upstream) -> None:
    _store_case(None, read=False, upstream=upstream, swizzle="128B")


@pytest.mark.parametrize("reduction", ["add", "min", "xor", "inc"])
def test_tensor_reduction_combines_with_global_memory(upstream: Upstream, reduction: str) -> None:
    _store_case(reduction, read=False, upstream=upstream)


def test_float_reduction_is_tma_invalid_at_every_level(upstream: Upstream) -> None:
    g = tensor((8, 32), np.float32)
    program = Program(["tmG"], 1024, [Round(tensor_store("tmG", (0, 0), 0, "add") + bulk_groups(True), None)])
    results = run_levels(program, [Map("g", "f32:32x8:128:32x8")], {"g": g}, 1024, upstream)
    assert_levels(results, "hazard:tma-invalid")


# A store's source may be read until the wait that completes its bulk async-group (PTX ISA 9.0,
# cp.async.bulk.wait_group: `.read` waits until the group's sources have been read). The first
# round issues a store of the hashed shared image; every thread then refills shared memory
# (round 2, after a thread barrier). Groups as `ops1` / `ops2` run them (thread 0).
_COMMIT = "      nvvm.cp.async.bulk.commit.group\n"
_WAIT = "      nvvm.cp.async.bulk.wait_group {n}{read}\n"


def _wait(n: int, read: bool = True) -> str:
    return _WAIT.format(n=n, read=" {read}" if read else "")


@pytest.mark.parametrize(
    ("ops1", "ops2", "expected"),
    [
        (_COMMIT + _wait(0), "", None),
        (_COMMIT + _COMMIT + _wait(1), "", None),  # the store's group is the older one: complete
        (_COMMIT, _wait(0), "hazard:async-copy-unfinished"),
        (_COMMIT, _wait(0, read=False), "hazard:async-copy-unfinished"),
        (_COMMIT + _wait(1), "", "hazard:async-copy-unfinished"),  # pending until thread 0 exits
        ("", _COMMIT + _wait(0), "hazard:async-copy-unfinished"),  # not committed: no wait completes it
    ],
    ids=["wait-read-0", "wait-1-of-2", "refilled-then-waited", "plain-wait", "still-pending-at-exit", "uncommitted"],
)
def test_refilling_a_stores_source_before_its_wait_is_a_hazard(
    upstream: Upstream, ops1: str, ops2: str, expected: str | None
) -> None:
    """The issuing warp (warp 0) rewrites words of the box in round 2: unless a wait completed
    the store's group before that, its own write lies between the issue and the store's read."""
    dims, box, smem = (48, 20), (32, 8), 4096
    g = tensor(tuple(reversed(dims)), np.uint32)
    store = tensor_store("tmG", (0, 0), 0)
    program = Program(["tmG"], smem, [Round(store + ops1, None, pattern=HASH), Round(ops2, None)])
    results = run_levels(program, [Map("g", "u32:48x20:192:32x8")], {"g": g}, smem, upstream)
    if expected is not None:
        assert_levels(results, expected)
        return
    want = g.copy()
    want[: box[1], : box[0]] = read_box(hash_fill(smem // 4).view(np.uint8), tuple(reversed(box)), np.uint32, 0, "NONE")
    assert_levels(results, {"g": want})


def test_another_warps_write_of_a_pending_stores_source_is_a_data_race(upstream: Upstream) -> None:
    """Words 32..95 (the 16x4 box at byte 128) are written by warps 1 and 2 only: their refill
    after the barrier is ordered after the store's issue but not after its read."""
    g = tensor((20, 48), np.uint32)
    program = Program(["tmG"], 4096, [Round(tensor_store("tmG", (0, 0), 128) + _COMMIT, None, pattern=HASH),
                                      Round(_wait(0), None)])  # fmt: skip
    results = run_levels(program, [Map("g", "u32:48x20:192:16x4")], {"g": g}, 4096, upstream)
    assert_levels(results, "hazard:smem-data-race")


def _bulk_ops(load: bool) -> str:
    if load:
        return """      %src = llvm.getelementptr %gsrc[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
      %to3 = llvm.getelementptr %s[512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %to = llvm.addrspacecast %to3 : !llvm.ptr<3> to !llvm.ptr<7>
      %n = llvm.mlir.constant(256 : i32) : i32
      nvvm.cp.async.bulk.shared.cluster.global %to, %src, %bar, %n : !llvm.ptr<7>, <1>
"""
    return """      %dst = llvm.getelementptr %gsrc[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
      %from = llvm.getelementptr %s[128] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
      %n = llvm.mlir.constant(384 : i32) : i32
      nvvm.cp.async.bulk.global.shared.cta %dst, %from, %n : <1>, <3>
      nvvm.cp.async.bulk.commit.group
      nvvm.cp.async.bulk.wait_group 0 {read}
"""


def test_non_tensor_bulk_load_and_store(upstream: Upstream) -> None:
    src = tensor((1024,), np.uint8)
    smem = 1024
    program = Program([], smem, [Round(_bulk_ops(True), 256), Round(_bulk_ops(False), None, pattern=HASH)],
                      pointers=["gsrc"])  # fmt: skip
    results = run_levels(program, [], {}, smem, upstream, pointers=[src])
    first = images(smem, 1)
    first[512:768] = src[64:320]
    stored = src.copy()
    stored[32 : 32 + 384] = hash_fill(smem // 4).view(np.uint8)[128 : 128 + 384]
    assert_levels(results, {"out": first, "gsrc": stored})


# --------------------------------------------------------------------------------------
# Transaction counts and faults: the same class at every level
# --------------------------------------------------------------------------------------


def test_expect_tx_over_count_deadlocks_at_every_level(upstream: Upstream) -> None:
    a = tensor((8, 16), np.uint16)
    program = Program(["tmA"], 1024, [Round(tensor_load("tmA", (0, 0), 0), 256 + 16)])
    results = run_levels(program, [Map("a", "u16:16x8:32:16x8")], {"a": a}, 1024, upstream)
    assert_levels(results, "deadlock")


def test_expect_tx_under_count_lets_readers_race_with_the_rest_of_the_box(upstream: Upstream) -> None:
    a = tensor((8, 16), np.uint16)
    program = Program(["tmA"], 1024, [Round(tensor_load("tmA", (0, 0), 0), 256 - 16)])
    results = run_levels(program, [Map("a", "u16:16x8:32:16x8")], {"a": a}, 1024, upstream)
    assert_levels(results, "hazard:smem-data-race")


@pytest.mark.parametrize(("coords", "dst"), [((0, 0), 16), ((1, 0), 0)], ids=["misaligned-destination", "coordinate"])
def test_what_silicon_faults_on_is_tma_invalid_at_every_level(
    upstream: Upstream, coords: tuple[int, int], dst: int
) -> None:
    a = tensor((8, 16), np.uint16)
    program = Program(["tmA"], 1024, [Round(tensor_load("tmA", coords, dst), 256)])
    results = run_levels(program, [Map("a", "u16:16x8:32:16x8")], {"a": a}, 1024, upstream)
    assert_levels(results, "hazard:tma-invalid")


# --------------------------------------------------------------------------------------
# Tensor-map parameters at the NVVM level
# --------------------------------------------------------------------------------------


def test_tensor_map_parameter_must_be_spelled_as_upstream_passes_one(tmp_path: Any) -> None:
    text = Program(["tmA"], 1024, [Round(tensor_load("tmA", (0, 0), 0), 256)]).text()
    a = np.zeros(128, np.uint16)
    for wrong, right, problem in (
        (", nvvm.grid_constant", "", "it lacks nvvm.grid_constant"),
        ("llvm.align = 64", "llvm.align = 16", "it needs llvm.align = 64 : i64"),
        ("llvm.array<128 x i8>", "llvm.array<64 x i8>", "its byval type !llvm.array<64 x i8> is not 128 bytes"),
    ):
        module = Parser(make_context(), text.replace(wrong, right)).parse_module()
        args = {"tmA": parse_tensor_map_arg("tensormap:a:u16:16x8:32:16x8"), "a": a, "out": np.zeros(1024, np.uint8)}
        with pytest.raises(LaunchError) as caught:
            run_kernel(module, "k", block=128, args=args)
        assert f"argument 'tmA' is a tensor map, but {problem}" in caught.value.message


def test_cli_takes_tensor_map_arguments_at_the_nvvm_level(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    source = tmp_path / "load.mlir"
    source.write_text(Program(["tmA"], 1024, [Round(tensor_load("tmA", (0, 0), 0), 256)]).text())
    a = tensor((8, 16), np.uint16)
    np.save(tmp_path / "a.npy", a)
    result = run_cli(capsys, str(source), "--kernel", "k", "--arg", f"a={tmp_path / 'a.npy'}", "--arg",
                     "tmA=tensormap:a:u16:16x8:32:16x8", "--arg", "out=zeros:u8:1024", "-t", "ptx",
                     "--validate-lowering")  # fmt: skip
    assert result.code == 0, result.err
    assert "1 pass(es) and llc-22's PTX preserve the kernel's behaviour" in result.out
    bad = run_cli(capsys, str(source), "--kernel", "k", "--arg", "x=7", "--arg",
                  "tmA=tensormap:x:u16:16x8:32:16x8", "--arg", "out=zeros:u8:1024")  # fmt: skip
    assert bad.code == 1
    message = "argument 'tmA' is a tensor map over 'x', which is no buffer argument (buffers: out)"
    assert f"{source}:4:3: error: {message}" in bad.err


def test_backend_declares_a_tensor_map_parameter_as_llc_does(
    run_opt: Callable[..., OptResult], upstream: Upstream, ptxas: str, tmp_path: Any
) -> None:
    """`.param .align 64 .b8 k_param_0[128]` and its generic address by `mov` + `cvta.param`,
    as llc-22 writes them; ptxas accepts the kernel. Without `nvvm.grid_constant` (llc-22
    would copy the bytes to local memory) the backend refuses the parameter at the kernel."""
    text = Program(["tmA"], 1024, [Round(tensor_load("tmA", (0, 0), 0), 256)], prefetch=True).text()
    ours = run_opt(text, "-t", "ptx")
    assert ours.code == 0, ours.err
    theirs = upstream.to_ptx(text)
    for ptx in (ours.out, theirs):
        assert ".param .align 64 .b8 k_param_0[128]" in ptx
        assert re.search(r"mov\.b64\s+(%rd\d+), k_param_0;\s+cvta\.param\.u64\s+%rd\d+, \1;", ptx), ptx
    ptxas_assemble(ptxas, ours.out, tmp_path)
    refused = run_opt(text.replace(", nvvm.grid_constant", ""), "-t", "ptx")
    assert refused.code == 1
    assert "error: ptx backend: byval parameter k_param_0 without nvvm.grid_constant is not supported" in refused.err


# --------------------------------------------------------------------------------------
# H100 fixtures as NVVM programs
# --------------------------------------------------------------------------------------


def _described(d: Mapping[str, Any]) -> Map:
    """A fixture's tensor map as a `tensormap:` argument."""
    short = {v: k for k, v in SHORT_TYPES.items()}
    options = [f"swizzle={d['swizzle']}"] if d["swizzle"] != "NONE" else []
    options += ["oob=nan"] if d["oob_fill"] != "NONE" else []
    options += [f"estrides={'x'.join(map(str, d['element_strides']))}"]
    dims, strides, box = ("x".join(map(str, d[k])) for k in ("global_dims", "global_strides", "box_dims"))
    return Map(d["buffer"], ":".join([short[d["data_type"]], dims, strides or "-", box, ",".join(options)]))


REPLAYED = ("tma_load_2d_swizzle", "tma_load_nd", "tma_load_oob_f16_nan", "tma_find_dst_sw128B_512")


@pytest.mark.parametrize("name", REPLAYED)
def test_silicon_load_fixture_replays_as_an_nvvm_program(upstream: Upstream, name: str) -> None:
    """The program the H100 ran, rewritten in NVVM (one round per case: fill with the
    fixture's byte, load the box, wait, copy the buffer out): `out` is the recorded one."""
    fx = json.loads((FIXTURES / f"{name}.json").read_text())
    spec = fx["tma"]
    assert spec["fill"] == 0xA5
    maps = [p for p in fx["params"] if "tensor_map" in p]
    names = [p["name"] for p in maps]
    smem = spec["copy_bytes"]
    rounds: list[Round] = []
    for case, dst in zip(spec["cases"], spec["dst"], strict=True):
        assert case["op"] == "load"
        desc = maps[case["tmap"]]["tensor_map"]
        tx = spec["expect_tx"] or TensorMap.from_description(desc, 0).box_bytes()
        rounds.append(Round(tensor_load(names[case["tmap"]], case["coords"], dst), tx))
    buffer = next(p for p in fx["params"] if p["name"] == maps[0]["tensor_map"]["buffer"])
    gmem = np.frombuffer(buffer_bytes(buffer["init"], buffer["nbytes"]), np.uint8).copy()
    described = [_described(p["tensor_map"]) for p in maps]
    out_bytes = fx["outputs"]["out_ptr"]["nbytes"]
    results = run_levels(Program(names, smem, rounds), described, {maps[0]["tensor_map"]["buffer"]: gmem}, out_bytes,
                         upstream)  # fmt: skip
    recorded = np.frombuffer(buffer_bytes(fx["outputs"]["out_ptr"], out_bytes), np.uint8)
    assert_levels(results, {"out": recorded})


STORES = ("tma_store_inside", "tma_store_clip_end", "tma_store_sw64", "tma_store_sw128", "tma_reduce_add",
          "tma_reduce_inc", "tma_reduce_dec")  # fmt: skip


@pytest.mark.parametrize("name", STORES)
def test_silicon_store_fixture_replays_as_an_nvvm_program(upstream: Upstream, name: str) -> None:
    """The H100's store and reduction programs in NVVM (fill the source with their pattern,
    store or reduce the box, commit, `wait_group.read 0`): `gmem` is the recorded one."""
    fx = json.loads((FIXTURES / f"{name}.json").read_text())
    spec = fx["tma"]
    maps = [p for p in fx["params"] if "tensor_map" in p]
    names = [p["name"] for p in maps]
    size = max(TensorMap.from_description(p["tensor_map"], 0).footprint() for p in maps)
    smem = max(128, (size + 127) // 128 * 128)
    rounds: list[Round] = []
    for k, (case, src) in enumerate(zip(spec["cases"], spec["dst"], strict=True)):
        reduction = None if case["op"] == "store" else case["op"]
        ops = tensor_store(names[case["tmap"]], case["coords"], src, reduction) + bulk_groups(True)
        rounds.append(Round(ops, None, pattern=silicon_pattern(k)))
    buffer = next(p for p in fx["params"] if p["name"] == maps[0]["tensor_map"]["buffer"])
    gmem = np.frombuffer(buffer_bytes(buffer["init"], buffer["nbytes"]), np.uint8).copy()
    results = run_levels(Program(names, smem, rounds), [_described(p["tensor_map"]) for p in maps],
                         {buffer["name"]: gmem}, 4, upstream)  # fmt: skip
    recorded = np.frombuffer(buffer_bytes(fx["outputs"][buffer["name"]], buffer["nbytes"]), np.uint8)
    assert_levels(results, {buffer["name"]: recorded})


def test_silicon_multicast_fixture_replays_as_an_nvvm_program(upstream: Upstream) -> None:
    """`tma_multicast_c2` in NVVM (its header: rank 0 multicasts [4, 1] into buf+0, rank 1
    [8, 4] into buf+128, both with mask 0b11; each CTA expects 256 bytes and copies its
    256-byte buffer to out + rank * 256): `out_ptr` is the H100's."""
    fx = json.loads((FIXTURES / "tma_multicast_c2.json").read_text())
    assert fx["tma"]["multicast"]["expect_tx"] == [256, 256]
    ops = (
        "      scf.if %is0_0 {\n" + tensor_load("tmap0", (4, 1), 0, mask=0b11, tag="r0") + "      }\n"
        "      scf.if %is0_1 {\n" + tensor_load("tmap0", (8, 4), 128, mask=0b11, tag="r1") + "      }\n"
    )
    program = Program(["tmap0"], 256, [Round(ops, 256, issuers=(0, 1))], cluster=2)
    gmem_param = next(p for p in fx["params"] if p["name"] == "gmem")
    gmem = np.frombuffer(buffer_bytes(gmem_param["init"], gmem_param["nbytes"]), np.uint8).copy()
    tmap = next(p["tensor_map"] for p in fx["params"] if p["name"] == "tmap0")
    results = run_levels(program, [_described(tmap)], {"gmem": gmem}, 512, upstream)
    recorded = np.frombuffer(buffer_bytes(fx["outputs"]["out_ptr"], 512), np.uint8)
    assert_levels(results, {"out": recorded})


@pytest.mark.parametrize(("operand", "expected"), [(" in_param_space, %tmA", "ok"), (", %gout", "hazard:tma-invalid")])
def test_prefetch_tensormap_needs_a_tensor_map_of_the_launch(upstream: Upstream, operand: str, expected: str) -> None:
    """`prefetch.tensormap` (through `cvta.to.param` with `in_param_space`) of the tensor-map
    parameter runs; of a global buffer's address it is `tma-invalid` (PTX ISA 9.0, prefetch:
    the operand is a tensormap's address)."""
    a = tensor((8, 16), np.uint16)
    program = Program(["tmA"], 1024, [Round(tensor_load("tmA", (0, 0), 0), 256)], prefetch=True)
    cast = "      %gout = llvm.addrspacecast %out : !llvm.ptr<1> to !llvm.ptr\n"
    text = program.text().replace(
        "      nvvm.prefetch tensormap, %tmA", cast + f"      nvvm.prefetch tensormap{operand}"
    )
    results = run_levels(Written(text), [Map("a", "u16:16x8:32:16x8")], {"a": a}, 1024, upstream)
    if expected == "ok":
        want = images(1024, 1)
        place(want, a, 0, "NONE")
        assert_levels(results, {"out": want})
    else:
        assert_levels(results, expected)

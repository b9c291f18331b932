"""The PTX level's loads and stores at a per-lane arithmetic progression of addresses
(`a + tid * k`, memory.Progression: strided views of the memory and its race shadow) and
at any other per-lane addresses (per-lane indices) move the same bytes, and report the
same hazards: every expectation is numpy's reading of the PTX ISA's `ld`/`st` (each
active thread accesses its own address; "Memory Consistency Model": conflicting accesses
of different warps not ordered by synchronisation are a data race)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.interpreter import KernelHazard, run_kernel

HEADER = """
.version 8.6
.target sm_100a
.address_size 64
"""

IN_BYTES = 8192


def _copy_kernel(load_at: str, store_at: str, vector: int, guard: str = "") -> str:
    """Each thread loads `vector` .b32 words at `in + load_at` and stores them at
    `out + store_at` (the byte offsets are PTX expressions of %r1 = %tid.x), under
    `@%p1` when `guard` sets %p1."""
    regs = ", ".join(f"%v{i}" for i in range(vector))
    suffix = f".v{vector}" if vector > 1 else ""
    values = f"{{{regs}}}" if vector > 1 else regs
    pred = "@%p1 " if guard else ""
    return (
        HEADER
        + f"""
.visible .entry copy(.param .u64 in, .param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b32 %v<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in];
    ld.param.u64 %rd2, [out];
    mov.u32 %r1, %tid.x;
    {guard}
    {load_at}
    cvt.u64.u32 %rd3, %r2;
    add.s64 %rd4, %rd1, %rd3;
    {pred}ld.global{suffix}.b32 {values}, [%rd4+4];
    {store_at}
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd6, %rd2, %rd5;
    {pred}st.global{suffix}.b32 [%rd6+8], {values};
    ret;
}}
"""
    )


def _run(text: str, block: int, out_bytes: int) -> NDArray[np.uint32]:
    module = load_ptx(text, "copy.ptx", SourceMap())
    source = np.arange(IN_BYTES // 4, dtype=np.uint32) * np.uint32(2654435761)
    result = run_kernel(module, "copy", block=block, args={"in": source, "out": np.zeros(out_bytes // 4, np.uint32)})
    return result.outputs["out"]


def _expected(
    load: list[int], store: list[int], vector: int, active: list[int], out_bytes: int, in_bytes: int = IN_BYTES
) -> NDArray[np.uint32]:
    """numpy: thread t (in `active`, in order: on overlap the later thread's bytes are the
    model's choice) copies `vector` words from byte `load[t] + 4` to `store[t] + 8`."""
    source = (np.arange(in_bytes // 4, dtype=np.uint32) * np.uint32(2654435761)).view(np.uint8)
    out = np.zeros(out_bytes, np.uint8)
    size = 4 * vector
    for t in active:
        out[store[t] + 8 : store[t] + 8 + size] = source[load[t] + 4 : load[t] + 4 + size]
    return out.view(np.uint32)


@pytest.mark.parametrize(
    ("vector", "load_stride", "store_stride"),
    [
        (4, 16, 16),  # contiguous
        (4, 32, 1024),  # gaps (the reference pipeline's epilogue: 1 KiB per thread)
        (2, 8, 12),  # a stride that is no multiple of the access: unaligned element rows
        (1, 4, 4),
        (4, 8, 8),  # lanes overlap: not a strided view (each lane's bytes, later lanes last)
    ],
)
def test_progression_accesses_move_the_bytes_numpy_moves(vector: int, load_stride: int, store_stride: int) -> None:
    # (Two warps whose lanes' bytes overlap would race: one warp where they do.)
    block, out_bytes = 32 if store_stride < 4 * vector else 64, 64 * 1024 + 64
    text = _copy_kernel(f"mul.lo.u32 %r2, %r1, {load_stride};", f"mul.lo.u32 %r3, %r1, {store_stride};", vector)
    load = [t * load_stride for t in range(block)]
    store = [t * store_stride for t in range(block)]
    expected = _expected(load, store, vector, list(range(block)), out_bytes)
    np.testing.assert_array_equal(_run(text, block, out_bytes), expected)


def test_other_per_lane_addresses_move_the_bytes_numpy_moves() -> None:
    """Descending and scrambled per-lane addresses, and half the lanes predicated off."""
    block, out_bytes = 64, 4096
    descending = _copy_kernel("sub.u32 %r2, 63, %r1;\n    mul.lo.u32 %r2, %r2, 16;",
                              "xor.b32 %r3, %r1, 21;\n    mul.lo.u32 %r3, %r3, 32;", 4)  # fmt: skip
    load = [(63 - t) * 16 for t in range(block)]
    store = [(t ^ 21) * 32 for t in range(block)]
    expected = _expected(load, store, 4, list(range(block)), out_bytes)
    np.testing.assert_array_equal(_run(descending, block, out_bytes), expected)
    odd = _copy_kernel("mul.lo.u32 %r2, %r1, 16;", "mul.lo.u32 %r3, %r1, 16;", 4,
                       guard="and.b32 %r4, %r1, 1;\n    setp.eq.u32 %p1, %r4, 1;")  # fmt: skip
    stride16 = [t * 16 for t in range(block)]
    expected = _expected(stride16, stride16, 4, [t for t in range(block) if t % 2], out_bytes)
    np.testing.assert_array_equal(_run(odd, block, out_bytes), expected)


def _two_warp_stores(second: str, barrier: bool) -> str:
    """Warp 0 stores at out + 16 * lane, then warp 1 at `second` (an expression of %r2 =
    lane); with `barrier`, a bar.sync orders warp 0's store before warp 1's."""
    sync = "bar.sync 0;" if barrier else ""
    return (
        HEADER
        + f"""
.visible .entry two(.param .u64 out)
{{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 31;
    shr.u32 %r3, %r1, 5;
    setp.eq.u32 %p1, %r3, 1;
    @%p1 bra $second;
    mul.wide.u32 %rd2, %r2, 16;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v4.b32 [%rd3], {{%r1, %r1, %r1, %r1}};
    {sync}
    ret;
$second:
    {sync}
    {second}
    add.s64 %rd5, %rd1, %rd4;
    st.global.v4.b32 [%rd5], {{%r1, %r1, %r1, %r1}};
    ret;
}}
"""
    )


@pytest.mark.parametrize(
    "second",
    [
        "mul.wide.u32 %rd4, %r2, 16;",  # the same bytes, as a progression
        "mul.wide.u32 %rd4, %r2, 32;",  # every other lane's bytes, a wider progression
        "xor.b32 %r4, %r2, 7;\n    mul.wide.u32 %rd4, %r4, 16;",  # the same bytes, lanes scrambled
    ],
)
def test_unordered_stores_of_two_warps_race_whatever_their_addressing(second: str) -> None:
    module = load_ptx(_two_warp_stores(second, barrier=False), "two.ptx", SourceMap())
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, "two", block=64, args={"out": np.zeros(2048, np.uint32)})
    assert caught.value.kind == "global-data-race"
    assert "ptx.st by warp 1 writes" in str(caught.value)
    assert "ptx.st by warp 0 wrote" in str(caught.value)


def test_ordered_stores_of_two_warps_do_not_race() -> None:
    """bar.sync orders them: warp 1's values (its %tid.x) are what remains."""
    module = load_ptx(_two_warp_stores("mul.wide.u32 %rd4, %r2, 16;", barrier=True), "two.ptx", SourceMap())
    out = run_kernel(module, "two", block=64, args={"out": np.zeros(2048, np.uint32)}).outputs["out"]
    expected = np.zeros(2048, np.uint32)
    expected[: 32 * 4] = np.repeat(np.arange(32, 64, dtype=np.uint32), 4)
    np.testing.assert_array_equal(out, expected)


def test_a_progression_load_of_unwritten_shared_memory_is_uninitialised() -> None:
    text = (
        HEADER
        + """
.shared .align 16 .b8 buf[512];
.visible .entry smem(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, buf;
    mul.lo.u32 %r3, %r1, 16;
    add.s32 %r4, %r2, %r3;
    ld.shared.v4.b32 {%r5, %r6, %r7, %r1}, [%r4];
    st.global.b32 [%rd1], %r5;
    ret;
}
"""
    )
    module = load_ptx(text, "smem.ptx", SourceMap())
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, "smem", block=32, args={"out": np.zeros(1, np.uint32)})
    assert caught.value.kind == "smem-read-uninitialized"


def _nvvm_copy(stride: int, vector: int) -> str:
    """The NVVM level's copy: thread t loads `vector` i32 at `in + t * stride + 4` and
    stores them at `out + t * stride + 8` (a progression of per-lane addresses)."""
    t = f"vector<{vector}xi32>" if vector > 1 else "i32"
    return f"""
llvm.func @copy(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>)
    attributes {{nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>}} {{
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %k = arith.constant {stride} : i32
  %i = arith.muli %tid, %k : i32
  %s0 = llvm.getelementptr %in[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
  %src = llvm.getelementptr %s0[4] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
  %v = llvm.load %src : !llvm.ptr<1> -> {t}
  %d0 = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
  %dst = llvm.getelementptr %d0[8] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i8
  llvm.store %v, %dst : {t}, !llvm.ptr<1>
  llvm.return
}}
"""


@pytest.mark.parametrize(("stride", "vector"), [(16, 4), (1024, 4), (12, 2), (4, 1), (8, 4)])
def test_the_nvvm_level_moves_the_bytes_numpy_moves(stride: int, vector: int) -> None:
    """The NVVM level's loads and stores take the same strided path (memory.load/store)."""
    from xdsl.parser import Parser

    from xdsl_tmem.universe import make_context

    module = Parser(make_context(), _nvvm_copy(stride, vector)).parse_module()
    block = 32 if stride < 4 * vector else 64
    size = 64 * 1024 + 64
    source = np.arange(size // 4, dtype=np.uint32) * np.uint32(2654435761)
    args = {"in": source, "out": np.zeros(size // 4, np.uint32)}
    out = run_kernel(module, "copy", block=block, args=args).outputs["out"]
    offsets = [t * stride for t in range(block)]
    np.testing.assert_array_equal(out, _expected(offsets, offsets, vector, list(range(block)), size, size))


BRANCHES = (
    HEADER
    + """
.visible .entry branches(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, 0;
    setp.lt.u32 %p1, %r2, %r1;
    @%p1 bra $taken;
    add.u32 %r3, %r3, 1;
$taken:
    @!%p1 bra $negated;
    add.u32 %r3, %r3, 2;
$negated:
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r3;
    ret;
}
"""
)


@pytest.mark.parametrize("n", [0, 13, 40, 64])
def test_branches_uniform_and_divergent(n: int) -> None:
    """`@%p bra` and `@!%p bra` with %p true in no lane, some lanes, or every lane of a
    warp (the uniform cases decide in one count): a thread below `n` adds 2, the others 1
    (PTX ISA, `bra`: taken by the threads whose guard holds)."""
    module = load_ptx(BRANCHES, "branches.ptx", SourceMap())
    out = run_kernel(module, "branches", block=64, args={"out": np.zeros(64, np.uint32), "n": n}).outputs["out"]
    np.testing.assert_array_equal(out, np.where(np.arange(64) < n, 2, 1).astype(np.uint32))

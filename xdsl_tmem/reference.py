"""numpy references for checking kernels: operand layouts in shared memory, the
tcgen05.ld / st register maps, and a GEMM with its f32 rounding bound.

Everything here is written from the documentation, independently of the compiler and
machine model it is used to check (nothing here imports them):

* the canonical K-major and MN-major layouts of CUTLASS `make_umma_desc`
  (cute/atom/mma_traits_sm100.hpp): core matrices of 8 rows x 16 bytes; LBO = the
  distance between the two 16-byte K chunks, SBO = the distance between 8-row groups; a
  swizzle XORs the 16-byte chunk index with address bits 7.. (CuTe `Swizzle<B,4,3>`);
* the tcgen05.ld / st "native image" of each shape, from
  https://tvm.apache.org/docs/tirx/tile_ops/tcgen05_ld_st.html, confirmed against CUTLASS
  `Copy_Traits<SM100_TMEM_LOAD_*>`; registers per `.x1` from the PTX ISA (docs/ptx-nvvm.md §1.4);
* the GEMM bound of Higham, "Accuracy and Stability of Numerical Algorithms" (2nd ed.,
  section 4.2): any order of summing n terms in floating point is within
  gamma_{n-1} * sum |terms| of the exact sum, gamma_n = n u / (1 - n u).

docs/api.md ("Reference helpers") lists them; docs/tcgen05_layouts.md has the layouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

F32_UNIT_ROUNDOFF = 2.0**-24
"""u for IEEE binary32, round to nearest."""


def reference_gemm(a: NDArray[Any], b: NDArray[Any]) -> NDArray[np.float64]:
    """The exact-as-f64 product `a @ b.T` of an M x K and an N x K (K-major) operand, the
    form tcgen05.mma computes D = A . B^T in. Exact for f16, bf16 and fp8 inputs with K up
    to 2^20 or so: each product needs at most 22 significand bits, f64 has 53."""
    return a.astype(np.float64) @ b.astype(np.float64).T


def f32_summation_bound(a: NDArray[Any], b: NDArray[Any]) -> NDArray[np.float64]:
    """Per element of `a @ b.T`, the most any f32 summation of the K products may differ
    from the exact result: gamma_{K-1} * sum_k |a_ik b_jk|, u = 2^-24. It assumes every
    product is exact in f32, true for f16, bf16 and fp8 operands (11 + 11 significand bits
    at most), so only the K - 1 additions round, in whatever order the tensor core adds."""
    k = a.shape[1]
    n = max(k - 1, 0)
    gamma = n * F32_UNIT_ROUNDOFF / (1 - n * F32_UNIT_ROUNDOFF)
    return gamma * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T)


def within_f32_bound(c: NDArray[Any], a: NDArray[Any], b: NDArray[Any]) -> bool:
    """Whether a computed `c` (M x N) is `a @ b.T` up to `f32_summation_bound`."""
    error = np.abs(c.astype(np.float64) - reference_gemm(a, b))
    return bool(np.all(error <= f32_summation_bound(a, b)))


# --------------------------------------------------------------------------------------
# K-major operands and the tcgen05.ld register layout
# --------------------------------------------------------------------------------------


def kmajor_byte_offset(row: int, k_byte: int, lbo: int, sbo: int) -> int:
    """Byte offset of (row, byte k_byte of the row's K extent) in a no-swizzle
    K-major tile: core matrices of 8 rows x 16 bytes."""
    return (row % 8) * 16 + (row // 8) * sbo + (k_byte // 16) * lbo + k_byte % 16


def kmajor_matrix(data: NDArray[Any], rows: int, k: int, lbo: int, sbo: int) -> NDArray[Any]:
    """The rows x k matrix a no-swizzle K-major buffer of `data`'s dtype holds."""
    element = data.dtype.itemsize
    raw = data.view(np.uint8)
    out = np.zeros((rows, k), dtype=data.dtype)
    for i in range(rows):
        for kk in range(k):
            start = kmajor_byte_offset(i, kk * element, lbo, sbo)
            out[i, kk] = raw[start : start + element].view(data.dtype)[0]
    return out


def place_kmajor_swizzled(matrix: NDArray[Any], width: int, sbo: int, base: int = 0) -> NDArray[np.uint8]:
    """Bytes of a K-major tile with a `width`-byte swizzle (128, 64, 32): row i of an
    8-row atom is `width` bytes at i*width, atoms SBO apart; then the 16-byte chunk
    index of every (absolute) address is XORed with its bits 7.. (`base` must be
    aligned to the swizzle pattern)."""
    rows, k = matrix.shape
    element = matrix.dtype.itemsize
    assert k * element <= width
    size = (rows // 8 - 1) * sbo + 8 * width
    out = np.zeros(base + size, dtype=np.uint8)
    mask = {128: 7, 64: 3, 32: 1}[width]
    for i in range(rows):
        for kk in range(k):
            linear = base + (i % 8) * width + (i // 8) * sbo + kk * element
            swizzled = linear ^ (((linear >> 7) & mask) << 4)
            out[swizzled : swizzled + element] = matrix[i : i + 1, kk].view(np.uint8)
    return out


def fragment_16x256b(lane: int, register: int) -> tuple[int, int]:
    """(row, column) within a 16-lane x 8N-column tile of register `register` of lane
    `lane` for tcgen05.ld .16x256b (TVM's table)."""
    return lane // 4 + 8 * ((register // 2) % 2), register % 2 + 2 * (lane % 4) + 8 * (register // 4)


def epilogue_rows(d: NDArray[Any], threads: int = 128, column_tiles: int = 8) -> NDArray[Any]:
    """What the shipped epilogues store per thread, from the accumulator tile `d` (rows x
    columns, any dtype: the result has `d`'s): for each 32-column tile, the 16 registers
    of tcgen05.ld .16x256b.x4 of the upper half (rows 0-15 of the warp's 32-lane
    quarter), then of the lower half (rows 16-31)."""
    out = np.zeros((threads, column_tiles * 32), dtype=d.dtype)
    for tid in range(threads):
        warp, lane = divmod(tid, 32)
        for tile in range(column_tiles):
            for register in range(16):
                row, col = fragment_16x256b(lane, register)
                out[tid, tile * 32 + register] = d[32 * warp + row, tile * 32 + col]
                out[tid, tile * 32 + 16 + register] = d[32 * warp + 16 + row, tile * 32 + col]
    return out


# --------------------------------------------------------------------------------------
# Swizzled and MN-major operands
# --------------------------------------------------------------------------------------


def swizzle_address(address: int, width: int) -> int:
    """CuTe `Swizzle<B,4,3>` on an absolute shared-memory byte address (B = 3, 2, 1 for a
    128, 64, 32-byte swizzle): the 16-byte chunk index XOR address bits 7..; 0 = none."""
    if width == 0:
        return address
    return address ^ (((address >> 7) & (width // 16 - 1)) << 4)


def mn_major_byte_offset(i: int, k: int, element: int, lbo: int, sbo: int, width: int) -> int:
    """Byte offset (before swizzling) of MN index `i`, K index `k` in an MN-major tile,
    from CUTLASS's canonical forms (units of elements, T = 16 bytes / element):
    no swizzle ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)); a W-byte swizzle
    ((T,W/16,m),(8,k)):((1,T,LBO),((W/16)T,SBO))."""
    t = 16 // element
    if width == 0:
        return (i % t) * element + (i // t) * sbo + (k % 8) * 16 + (k // 8) * lbo
    chunks = width // 16
    return (i % t) * element + (i // t % chunks) * 16 + i // (t * chunks) * lbo + (k % 8) * width + (k // 8) * sbo


def place_operand(
    matrix: NDArray[Any], offset: Callable[[int, int], int], width: int, base: int = 0
) -> NDArray[np.uint8]:
    """Bytes of shared memory holding `matrix` (rows x k) with element (i, k) at
    `swizzle_address(base + offset(i, k), width)`."""
    rows, k = matrix.shape
    element = matrix.dtype.itemsize
    places = [(i, kk, swizzle_address(base + offset(i, kk), width)) for i in range(rows) for kk in range(k)]
    out = np.zeros(max(p for _, _, p in places) + element, dtype=np.uint8)
    for i, kk, place in places:
        out[place : place + element] = matrix[i : i + 1, kk].view(np.uint8)
    return out


LDST_REGISTERS_PER_X = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}
"""Registers per thread of one `.x1` of each tcgen05.ld / st shape (docs/ptx-nvvm.md §1.4)."""


def ldst_cell(shape: str, lane: int, register: int, split: int = 0, pack: bool = False) -> tuple[int, int]:
    """(TMEM lane, column) relative to the address of register `register` of lane `lane`
    for tcgen05.ld / st (TVM's "native image" table, confirmed against CUTLASS
    `Copy_Traits<SM100_TMEM_LOAD_*>`). With `pack` it is the column of the low 16-bit
    half (the high half is the next column): every column doubles, except the
    16x32bx2 split, which counts TMEM columns (CUTLASS passes 2N for a packed .xN)."""
    match shape:
        case "32x32b":
            row, column = lane, register
        case "16x64b":
            row, column = lane // 4 + 8 * (lane % 2), (lane // 2) % 2 + 2 * register
        case "16x128b":
            row, column = lane // 4 + 8 * (register % 2), lane % 4 + 4 * (register // 2)
        case "16x256b":
            row, column = fragment_16x256b(lane, register)
        case _:  # 16x32bx2: lanes 16-31 read the same 16 TMEM lanes `split` columns further
            return lane % 16, (2 * register if pack else register) + (lane // 16) * split
    return row, 2 * column if pack else column

"""Independent expectations for the interpreter tests: shared-memory operand layouts
and tcgen05.ld register maps written from their documentation, not from our code.

Sources: the canonical K-major layouts of CUTLASS `make_umma_desc` (core matrices of
8 rows x 16 bytes; LBO = distance between the two 16-byte K chunks, SBO = distance
between 8-row groups; a swizzle XORs the 16-byte chunk index with address bits 7..),
and the tcgen05.ld "native image" table of https://tvm.apache.org/docs/tirx/tile_ops/tcgen05_ld_st.html.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.tools.run import make_context


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


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


def epilogue_rows(d: NDArray[np.float32], threads: int = 128, column_tiles: int = 8) -> NDArray[np.float32]:
    """What the shipped epilogues store per thread: for each 32-column tile, the 16
    registers of the upper half (rows 0-15 of the warp's quarter), then the lower."""
    out = np.zeros((threads, column_tiles * 32), dtype=np.float32)
    for tid in range(threads):
        warp, lane = divmod(tid, 32)
        for tile in range(column_tiles):
            for register in range(16):
                row, col = fragment_16x256b(lane, register)
                out[tid, tile * 32 + register] = d[32 * warp + row, tile * 32 + col]
                out[tid, tile * 32 + 16 + register] = d[32 * warp + 16 + row, tile * 32 + col]
    return out

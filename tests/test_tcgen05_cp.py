"""`tcgen05.cp`: a shared-memory matrix, described by a matrix descriptor, copied into TMEM
(the PTX ISA's tcgen05.cp section; docs/tcgen05_layouts.md §7), run at the NVVM level
and, selected by our backend, at the PTX level.

The expectation is built here from the layout text alone: `.128x256b` copies 128 rows of
256 bits, row i to TMEM lane i and bits 32w..32w+31 of the row to column `col0 + w`; the
source is a K-major SWIZZLE_NONE canonical layout of 8-row x 16-byte core matrices, so the
16-byte chunk j of row i is at `start + (i % 8) * 16 + (i // 8) * SBO + j * LBO`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from support import run_cli
from xdsl.parser import Parser

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.interpreter import run_kernel
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import make_context, parse_pipeline

LBO, SBO = 2048, 128
"""Chunk 1 of every row 2 KiB after chunk 0; 8-row groups 128 bytes apart (the 16 groups
of chunk 0 fill [0, 2048), those of chunk 1 [2048, 4096))."""
ROWS, WORDS = 128, 8


def descriptor(start: int, lbo: int, sbo: int) -> int:
    """The shared-memory matrix descriptor by its bit table (PTX ISA "Shared memory
    descriptor"): bits 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 46-48 the fixed
    0b001, swizzle (61-63) 0 = none."""
    return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46


KERNEL = f"""
module {{
  llvm.mlir.global internal @src() {{addr_space = 3 : i32, alignment = 1024 : i64}} : !llvm.array<4096 x i8>
  llvm.mlir.global internal @bar() {{addr_space = 3 : i32, alignment = 8 : i64}} : i64
  llvm.mlir.global internal @slot() {{addr_space = 3 : i32, alignment = 4 : i64}} : i32
  llvm.func @k(%inp: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {{nvvm.kernel}} {{
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c4_64 = arith.constant 4 : i64
    %ticks = arith.constant 1000000 : i32
    %src = llvm.mlir.addressof @src : !llvm.ptr<3>
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %warp = arith.divui %tid, %c32 : i32
    %is_w0 = arith.cmpi eq, %warp, %c0 : i32
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_w0 {{
      nvvm.tcgen05.alloc %slot, %c32 : !llvm.ptr<3>, i32
      nvvm.tcgen05.relinquish_alloc_permit
    }}
    scf.if %is_t0 {{
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }}
    // thread t writes bytes [32t, 32t + 32) of the source: words 8t .. 8t + 7 of %inp
    %from = llvm.getelementptr %inp[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<8xi32>
    %words = llvm.load %from : !llvm.ptr<1> -> vector<8xi32>
    %to = llvm.getelementptr %src[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<8xi32>
    llvm.store %words, %to : vector<8xi32>, !llvm.ptr<3>
    nvvm.fence.proxy {{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}}
    nvvm.tcgen05.fence <before>
    nvvm.barrier0
    nvvm.tcgen05.fence <after>
    %t = llvm.load %slot : !llvm.ptr<3> -> i32
    %tp = llvm.inttoptr %t : i32 to !llvm.ptr<6>
    scf.if %is_t0 {{
      %s = llvm.ptrtoint %src : !llvm.ptr<3> to i64
      %d0 = llvm.mlir.constant({descriptor(0, LBO, SBO)} : i64) : i64
      %s4 = llvm.lshr %s, %c4_64 : i64
      %desc = llvm.add %d0, %s4 : i64
      nvvm.tcgen05.cp %tp, %desc {{shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}}
      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    }}
    nvvm.mbarrier.try_wait.parity %bar, %c0, %ticks : !llvm.ptr<3>, i32, i32
    nvvm.tcgen05.fence <after>
    // warp w reads lanes 32w .. 32w + 31 (its lane quarter), columns 0-7
    %quarter = arith.muli %warp, %c32 : i32
    %lanes = arith.shli %quarter, %c16 : i32
    %ta = arith.addi %t, %lanes : i32
    %tap = llvm.inttoptr %ta : i32 to !llvm.ptr<6>
    %v = nvvm.tcgen05.ld %tap {{shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>}} : vector<8xi32>
    nvvm.tcgen05.wait <load>
    %o = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<8xi32>
    llvm.store %v, %o : vector<8xi32>, !llvm.ptr<1>
    nvvm.tcgen05.fence <before>
    nvvm.barrier0
    nvvm.tcgen05.fence <after>
    scf.if %is_w0 {{
      nvvm.tcgen05.dealloc %tp, %c32 : !llvm.ptr<6>, i32
    }}
    llvm.return
  }}
}}
"""


def expected_tmem(source: NDArray[np.uint8]) -> NDArray[np.uint32]:
    """TMEM lanes 0-127, columns 0-7 after the copy, by the layout text (module docstring)."""
    cells = np.zeros((ROWS, WORDS), np.uint32)
    for i in range(ROWS):
        for j in range(2):
            offset = (i % 8) * 16 + (i // 8) * SBO + j * LBO
            chunk = source[offset : offset + 16]
            for w in range(4):
                cells[i, 4 * j + w] = int.from_bytes(chunk[4 * w : 4 * w + 4].tobytes(), "little")
    return cells


@pytest.mark.parametrize("passes", ["", "convert-to-ptx"], ids=["nvvm-level", "our-ptx"])
def test_tcgen05_cp_128x256b_copies_the_described_matrix(passes: str) -> None:
    ctx = make_context()
    module = Parser(ctx, KERNEL).parse_module()
    if passes:
        parse_pipeline(passes, SourceMap()).apply(ctx, module)
    source = np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8)
    words = source.view(np.uint32).copy()
    out = np.zeros((ROWS, WORDS), np.uint32)
    # by position: the PTX backend names the parameters k_param_0, k_param_1
    result = run_kernel(module, "k", block=ROWS, args={"arg0": words, "arg1": out})
    copied = list(result.outputs.values())[1]
    # thread t of warp w loaded lane 32w + (t % 32) = t: row t of the copy
    np.testing.assert_array_equal(copied.reshape(ROWS, WORDS), expected_tmem(source))


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("shape = #nvvm.tcgen05_cp_shape<shape_4x256b>", "tcgen05.cp shape_4x256b none is not modelled"),
        (
            "shape = #nvvm.tcgen05_cp_shape<shape_128x256b>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>",
            "tcgen05.cp with a decompressing source format is not modelled",
        ),
    ],
    ids=["4x256b", "decompressing"],
)
@pytest.mark.parametrize("target", ["mlir", "ptx"])
def test_what_the_model_cannot_copy_is_a_located_refusal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, attributes: str, message: str, target: str
) -> None:
    program = tmp_path / "cp.mlir"
    program.write_text(KERNEL.replace("shape = #nvvm.tcgen05_cp_shape<shape_128x256b>", attributes))
    args = ["--kernel", "k", "--block", "128", "--arg", "inp=zeros:u32:1024", "--arg", "out=zeros:u32:1024"]
    result = run_cli(capsys, str(program), *args, "-t", target)
    assert result.code == run.EXIT_ERROR
    op = "nvvm.tcgen05.cp" if target == "mlir" else "ptx.tcgen05_cp"
    assert re.match(rf"{re.escape(str(program))}:\d+:\d+: error: xdsl-tmem-run: {op}: .*{message}", result.err), (
        result.err
    )

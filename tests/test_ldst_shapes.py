"""The one tcgen05.ld/st shape table (`nvvm.Tcgen05LdStShape`) against the PTX ISA.

The expectation is the PTX ISA's own table (PTX ISA 9.1, "tcgen05.ld" / "tcgen05.st",
`.shape`: lanes x bits accessed per `.x1`; `.16x32bx2` accesses two 16x32b pieces, the
second `immHalfSplitoff` columns further), written out here independently of the code.
"""

import numpy as np
import pytest

from xdsl_tmem.dialects import nvvm, tmem
from xdsl_tmem.interpreter.tcgen05 import ldst_plan

# PTX qualifier -> (TMEM lanes, bits per lane per `.x1`, pieces)
PTX_SHAPES = {
    "16x64b": (16, 64, 1),
    "16x128b": (16, 128, 1),
    "16x256b": (16, 256, 1),
    "32x32b": (32, 32, 1),
    "16x32bx2": (16, 32, 2),
}
MAX_REGISTERS = 128  # PTX ISA: at most 128 32-bit registers per thread


def test_shape_enum_is_the_ptx_table() -> None:
    assert {s.ptx_name for s in nvvm.Tcgen05LdStShape} == set(PTX_SHAPES)
    for shape in nvvm.Tcgen05LdStShape:
        lanes, bits, pieces = PTX_SHAPES[shape.ptx_name]
        assert (shape.lanes, shape.columns_per_num, shape.pieces) == (lanes, bits // 32, pieces)
        # The .x1 footprint's 32-bit cells are spread evenly over the warp's 32 threads.
        assert shape.registers_per_num == lanes * bits * pieces // (32 * 32)


def test_tmem_dialect_16x256b_constants() -> None:
    assert tmem.LDST_16X256B_REGS_PER_REPEAT == 16 * 256 // (32 * 32)
    assert tmem.LDST_16X256B_COLS_PER_REPEAT == 256 // 32


@pytest.mark.parametrize("name", list(PTX_SHAPES))
def test_interpreter_footprints(name: str) -> None:
    """For every legal `.num`: the plan's lanes x columns is the PTX footprint, and the
    (thread, register) map covers every cell of it exactly once (twice as many 16-bit
    halves with .pack::16b / .unpack::16b)."""
    lanes, bits, pieces = PTX_SHAPES[name]
    shape = nvvm.Tcgen05LdStShape(f"shape_{name}")
    per_num = lanes * bits * pieces // (32 * 32)
    num = 1
    while per_num * num <= MAX_REGISTERS:
        registers = per_num * num
        assert shape.fits(registers)
        width = bits // 32 * num  # columns of one piece
        for pack in (False, True):
            scale = 2 if pack else 1
            split = scale * width if pieces == 2 else 0  # the second piece just after the first
            plan = ldst_plan(shape, registers, split, pack)
            assert plan.rows == lanes
            assert plan.columns == scale * width * pieces
            assert plan.lane_set == (1 << lanes) - 1
            assert plan.column_set == (1 << plan.columns) - 1
            flat = np.unique(plan.flat)
            assert flat.size == 32 * registers  # one register, one (low) cell
            assert flat.size * scale == lanes * plan.columns
        num *= 2
    assert not shape.fits(per_num * num)

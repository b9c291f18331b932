"""The value instructions of `dialects/ptx/values.py` at the PTX level, beyond the silicon
replay (tests/test_ptx_gen_replay.py): the carry flag CC.CF is per lane and flows from one
instruction to the next, as 64-bit arithmetic on 32-bit halves needs (PTX ISA 9.0,
Extended-Precision Integer Arithmetic Instructions). Expectations: numpy's uint64 sums."""

from __future__ import annotations

import numpy as np

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import run_kernel

KERNEL = """\
.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 k_in, .param .u64 k_out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_in];
    ld.param.u64 %rd2, [k_out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.v4.u32 {%r2, %r3, %r4, %r5}, [%rd4];
    setp.lt.u32 %p1, %r1, 16;
    add.cc.u32 %r6, %r2, %r4;
    @%p1 bra SKIP;
    add.cc.u32 %r10, %r1, -1;
SKIP:
    addc.u32 %r7, %r3, %r5;
    sub.cc.u32 %r8, %r2, %r4;
    subc.u32 %r9, %r3, %r5;
    st.global.v4.u32 [%rd5], {%r6, %r7, %r8, %r9};
    ret;
}
"""


def test_carry_chain_per_lane() -> None:
    """`add.cc`/`addc` and `sub.cc`/`subc` on the halves of two u64 give the u64 sum and
    difference in every lane. Lanes 16..31 run another `add.cc` in between (a branch:
    tid + 0xffffffff, whose carry out is 1 for tid > 0), so their `addc` adds that carry,
    while lanes 0..15 keep the carry of their own first `add.cc`."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**64, 32, dtype=np.uint64, endpoint=False)
    b = rng.integers(0, 2**64, 32, dtype=np.uint64, endpoint=False)
    a[:4] = [2**64 - 1, 2**32 - 1, 0, 5]  # carries out of the low half, borrows into it
    b[:4] = [1, 1, 1, 2**32]
    words = np.stack([a, b], axis=1).view(np.uint32).reshape(-1)
    module = load_ptx(KERNEL, "carry.ptx", SourceMap())
    assert sum(isinstance(op, ptx.CarryOp) for op in module.walk()) == 5
    result = run_kernel(module, "k", block=(32, 1, 1), grid=(1, 1, 1), cluster=(1, 1, 1),
                        args={"k_in": words, "k_out": np.zeros(128, np.uint32)})  # fmt: skip
    out = np.asarray(result.outputs["k_out"]).view(np.uint64).reshape(32, 2)
    lo = (a + b) & np.uint64(0xFFFFFFFF)
    high = ((a >> np.uint64(32)) + (b >> np.uint64(32)) + np.uint64(1)) & np.uint64(0xFFFFFFFF)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out[:16, 0], (a + b)[:16])
        np.testing.assert_array_equal(out[16:, 0], (lo | (high << np.uint64(32)))[16:])
        np.testing.assert_array_equal(out[:, 1], a - b)

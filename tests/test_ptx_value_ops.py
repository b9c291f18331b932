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


def _bfe_reference(value: int, pos: int, length: int, signed: bool) -> int:
    """PTX ISA, bfe (32-bit): bits pos .. pos+len-1 of a, zeros (.u32) or the sign bit
    a[min(pos+len-1, 31)] (.s32, len != 0) past bit 31; len 0 gives 0."""
    pos, length = pos & 0xFF, length & 0xFF
    if not length:
        return 0
    field = 0
    for i in range(min(length, 32)):
        bit = pos + i
        if bit < 32:
            field |= ((value >> bit) & 1) << i
        elif signed:
            field |= ((value >> 31) & 1) << i
    if signed:  # the field's top bit (the bit at min(pos+len-1, 31)) fills the rest
        top = min(length, 32) - 1
        sign = (value >> min(pos + length - 1, 31)) & 1
        field = (field & ((1 << top) - 1)) | (-sign << top)
        return field & 0xFFFFFFFF
    return field


def test_shifts_and_bfe_by_immediates_are_the_isa_rules() -> None:
    """`shl` / `shr` by an immediate and 32-bit `bfe` with immediate position and length
    are decoded into one shift (integer.by_immediate): per lane as the ISA states them
    (shl, shr: "shift amounts greater than the register width N are clamped to N", shr of a
    signed type fills with the sign; bfe above), for amounts below, at and above the width,
    and the same lanes as the general semantics given the amounts' lanes."""
    from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE
    from xdsl_tmem.interpreter.ptx.integer import by_immediate
    from xdsl_tmem.interpreter.ptx.semantics import decode

    rng = np.random.default_rng(11)
    for ty in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"):
        dt = LANE_DTYPE[ty]
        width = dt.itemsize * 8
        bits = rng.integers(0, 1 << 64, 32, dtype=np.uint64) >> np.uint64(64 - width)
        a = bits.astype(dt.str.replace("i", "u")).view(dt)
        for op in ("shl", "shr") if ty[0] == "b" else ("shr",):
            general = decode(op, (ty,)).fn
            for k in (0, 1, width - 1, width, width + 1, 255, 0xFFFFFFFF):
                fn = by_immediate(op, ty, [k])
                assert fn is not None
                got = [int(x) for x in fn(a).view(dt.str.replace("i", "u"))]
                unsigned = [int(x) for x in bits]
                if op == "shl":
                    want = [0 if k >= width else (x << k) % (1 << width) for x in unsigned]
                elif ty[0] == "s":
                    signed = [x - (1 << width) if x >> (width - 1) else x for x in unsigned]
                    want = [(x >> min(k, width - 1)) % (1 << width) for x in signed]
                else:
                    want = [0 if k >= width else x >> k for x in unsigned]
                assert got == want, (op, ty, k)
                lanes = np.full(32, k, dtype=np.uint32)
                assert fn(a).tobytes() == general(a, lanes).tobytes(), (op, ty, k)
    for ty in ("u32", "s32"):
        dt = LANE_DTYPE[ty]
        a = rng.integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32).view(dt)
        general = decode("bfe", (ty,)).fn
        for pos, length in [(0, 0), (2, 5), (4, 15), (31, 1), (30, 8), (32, 4), (0, 32), (5, 40), (300, 3), (3, 260)]:
            fn = by_immediate("bfe", ty, [pos, length])
            assert fn is not None
            got = [int(x) for x in fn(a).view(np.uint32)]
            want = [_bfe_reference(int(x), pos, length, ty == "s32") for x in a.view(np.uint32)]
            assert got == want, (ty, pos, length)
            b, c = np.full(32, pos, dtype=np.uint32), np.full(32, length, dtype=np.uint32)
            assert fn(a).tobytes() == general(a, b, c).tobytes(), (ty, pos, length)
    assert by_immediate("bfe", "u64", [1, 2]) is None

"""Issue 13: the last forms of parsed PTX without a typed op (`setp` with a `p|q` pair
or a combining predicate, vector loads with sinks, `mov` of an address expression) are
typed and execute at the PTX level; the expectations are the PTX ISA's definitions,
computed here with numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import run_cli
from test_ptx_isa_rules import assemble

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.frontend import load_ptx

FORMS = """\
.version 8.7
.target sm_100a
.address_size 64

.visible .entry forms(
    .param .u64 .ptr .global .align 16 out,
    .param .align 16 .b8 args[16]
)
{
    .reg .pred %p<10>;
    .reg .b32 %r<20>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b32 x[4];
    ld.param.u64 %rd1, [out];
    mov.u32 %r0, %tid.x;
    mul.wide.u32 %rd2, %r0, 48;
    add.s64 %rd3, %rd1, %rd2;
    and.b32 %r1, %r0, 1;
    setp.eq.u32 %p0, %r1, 1;
    setp.lt.u32 %p1|%p2, %r0, 16;
    setp.lt.and.u32 %p3|%p4, %r0, 16, %p0;
    setp.lt.or.u32 %p5|%p6, %r0, 16, !%p0;
    setp.ge.xor.s32 _|%p7, %r0, 8, %p0;
    selp.u32 %r2, 1, 0, %p1;
    st.global.u32 [%rd3], %r2;
    selp.u32 %r2, 1, 0, %p2;
    st.global.u32 [%rd3+4], %r2;
    selp.u32 %r2, 1, 0, %p3;
    st.global.u32 [%rd3+8], %r2;
    selp.u32 %r2, 1, 0, %p4;
    st.global.u32 [%rd3+12], %r2;
    selp.u32 %r2, 1, 0, %p5;
    st.global.u32 [%rd3+16], %r2;
    selp.u32 %r2, 1, 0, %p6;
    st.global.u32 [%rd3+20], %r2;
    selp.u32 %r2, 1, 0, %p7;
    st.global.u32 [%rd3+24], %r2;
    ld.param.v4.u32 {%r8, _, %r9, %r10}, [args];
    st.global.u32 [%rd3+28], %r8;
    st.global.u32 [%rd3+32], %r9;
    st.global.u32 [%rd3+36], %r10;
    setp.eq.u32 %p8, %r0, 0;
    mov.u32 %r11, x+8;
    @%p8 st.shared.v4.u32 [x], {%r0, %r0, %r0, %r0};
    @%p8 st.shared.u32 [%r11], 77;
    bar.sync 0;
    ld.shared.v4.u32 {_, _, %r12, _}, [x];
    st.global.u32 [%rd3+40], %r12;
    ret;
}
"""
ARGS = (11, 22, 33, 44)


def test_forms_are_typed_and_assemble(ptxas: str) -> None:
    assert assemble(ptxas, FORMS) is None
    module = load_ptx(FORMS, "forms.ptx", SourceMap())
    ops = [op for op in module.walk() if isinstance(op, ptx.Instruction)]
    assert not [op.mnemonic() for op in ops if isinstance(op, ptx.InstOp)]
    kinds = {type(op) for op in ops}
    assert {ptx.SetpBoolOp, ptx.LdSinkOp, ptx.MovOp} <= kinds


def test_forms_execute_as_the_isa_defines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """setp (PTX ISA 9.0): `t = a cmp b; p = BoolOp(t, c); q = BoolOp(!t, c)`; a sink is
    not written; `ld.v4` with sinks reads the elements in order; `mov d, x+8` is x's
    address plus 8."""
    source = tmp_path / "forms.ptx"
    source.write_text(FORMS)
    out = tmp_path / "out"
    struct = ",".join(f"{4 * i}=u32:{v}" for i, v in enumerate(ARGS))
    result = run_cli(capsys, str(source), "--kernel", "forms", "--block", "32", "--arg", "out=zeros:u32:384",
                     "--arg", f"args=struct:{struct}", "--out", str(out))  # fmt: skip
    assert result.code == 0, result.err
    got = np.load(out / "out.npy").reshape(32, 12)
    tid = np.arange(32, dtype=np.int64)
    c = (tid & 1) == 1
    t = tid < 16
    expected = np.stack([
        t, ~t,  # setp.lt p|q
        t & c, ~t & c,  # setp.lt.and p|q, c
        t | ~c, ~t | ~c,  # setp.lt.or p|q, !c
        ~(tid >= 8) ^ c,  # setp.ge.xor _|q, c
    ], axis=1).astype(np.uint32)  # fmt: skip
    np.testing.assert_array_equal(got[:, :7], expected)
    np.testing.assert_array_equal(got[:, 7:10], np.tile([ARGS[0], ARGS[2], ARGS[3]], (32, 1)))
    np.testing.assert_array_equal(got[:, 10], np.full(32, 77))

"""Hazard-model gaps closed for the client kernels' seeded bugs (issue 14), each on a
hand-written PTX kernel whose expectation comes from the PTX ISA:

* `tcgen05.ld` destination registers are undefined until the warp's `tcgen05.wait::ld`
  (PTX ISA, tcgen05.wait): reading one before is `tcgen05-ld-register-before-wait`.
"""

from __future__ import annotations

import numpy as np
import pytest

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import KernelHazard, run_kernel

# ---- tcgen05.ld registers before wait::ld --------------------------------------------------

# One warp: allocate 32 columns, store lane i's value 7 + i into column 0 of its lane,
# load it back, then ({wait}) add 1 and store it to out[i].
_LD_BEFORE_WAIT = """\
.version 8.7
.target sm_100a
.address_size 64
.shared .align 4 .b32 tmem_slot;
.visible .entry k(.param .u64 out_ptr)
{{
\t.reg .b64 %out, %o;
\t.reg .b32 %tx, %t, %v, %w, %x;
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tmem_slot], 32;
\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
\tbar.sync 0;
\tld.shared.u32 %t, [tmem_slot];
\tadd.u32 %v, %tx, 7;
\ttcgen05.st.sync.aligned.32x32b.x1.b32 [%t], {{%v}};
\ttcgen05.wait::st.sync.aligned;
\ttcgen05.ld.sync.aligned.32x32b.x1.b32 {{%w}}, [%t];
{wait}
\tadd.u32 %x, %w, 1;
{wait_after}
\tmul.wide.u32 %o, %tx, 4;
\tadd.u64 %o, %out, %o;
\tst.global.u32 [%o], %x;
\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %t, 32;
\tret;
}}
"""

_WAIT_LD = "\ttcgen05.wait::ld.sync.aligned;"


def _ld_kernel(before: bool) -> str:
    return _LD_BEFORE_WAIT.format(wait=_WAIT_LD if before else "", wait_after="" if before else _WAIT_LD)


def test_tcgen05_ld_registers_read_after_wait_hold_the_loaded_values() -> None:
    """The registers hold the loaded cells once `wait::ld` completed the load."""
    module = load_ptx(_ld_kernel(True), "k.ptx", SourceMap())
    out = run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(32, np.uint32)}).outputs["out_ptr"]
    assert np.asarray(out).tolist() == [i + 8 for i in range(32)]


def test_tcgen05_ld_register_read_before_wait_is_a_hazard() -> None:
    """PTX ISA, tcgen05.wait: the destination registers of a `tcgen05.ld` are undefined
    until `tcgen05.wait::ld`; the `add` reading one before the wait is reported there."""
    module = load_ptx(_ld_kernel(False), "k.ptx", SourceMap())
    with pytest.raises(KernelHazard) as info:
        run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(32, np.uint32)})
    assert info.value.kind == "tcgen05-ld-register-before-wait"
    assert "add" in str(info.value.op.name if info.value.op else "")

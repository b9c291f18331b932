"""Hazard-model gaps closed for the client kernels' seeded bugs (issue 14), each on a
hand-written PTX kernel whose expectation comes from the PTX ISA:

* `tcgen05.ld` destination registers are undefined until the warp's `tcgen05.wait::ld`
  (PTX ISA, tcgen05.wait): reading one before is `tcgen05-ld-register-before-wait`;
* the tensor core's shared-memory operand reads are race-checked: a write not ordered
  before the MMA's issue, or not ordered after the completion of the commit tracking it,
  is an `smem-data-race` (PTX ISA, memory consistency model; tcgen05.commit);
* the mbarrier lifecycle (PTX ISA, mbarrier.init / mbarrier.inval):
  `mbarrier-invalid-lifecycle`.
"""

from __future__ import annotations

from pathlib import Path

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


# Two columns loaded, packed into a .b64 before the wait (as llc-22 emits), then
# {use}: the packed value stored to out[2i], out[2i+1].
_PACKED = """\
.version 8.7
.target sm_100a
.address_size 64
.shared .align 4 .b32 tmem_slot;
.visible .entry k(.param .u64 out_ptr)
{{
\t.reg .b64 %out, %o, %d, %e;
\t.reg .b32 %tx, %t, %v, %u, %w0, %w1;
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tmem_slot], 32;
\ttcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
\tbar.sync 0;
\tld.shared.u32 %t, [tmem_slot];
\tadd.u32 %v, %tx, 7;
\tadd.u32 %u, %tx, 100;
\ttcgen05.st.sync.aligned.32x32b.x2.b32 [%t], {{%v, %u}};
\ttcgen05.wait::st.sync.aligned;
\ttcgen05.ld.sync.aligned.32x32b.x2.b32 {{%w0, %w1}}, [%t];
\tmov.b64 %d, {{%w0, %w1}};
{use}
\tmul.wide.u32 %o, %tx, 8;
\tadd.u64 %o, %out, %o;
\tst.global.u64 [%o], %e;
\ttcgen05.dealloc.cta_group::1.sync.aligned.b32 %t, 32;
\tret;
}}
"""
_AFTER = "\ttcgen05.wait::ld.sync.aligned;\n\tmov.b64 %e, %d;"
_BEFORE = "\tadd.u64 %e, %d, 0;\n\ttcgen05.wait::ld.sync.aligned;"


def test_a_copy_of_tcgen05_ld_registers_is_pending_until_the_wait() -> None:
    """A `mov` packing loaded registers before the wait copies them, it does not use them
    (llc-22 packs them so): the packed register holds the loaded values once the wait
    completed the load; arithmetic on it before the wait reads undefined bits."""
    module = load_ptx(_PACKED.format(use=_AFTER), "k.ptx", SourceMap())
    out = run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(64, np.uint32)}).outputs["out_ptr"]
    assert np.asarray(out).tolist() == [v for i in range(32) for v in (i + 7, i + 100)]
    with pytest.raises(KernelHazard) as info:
        run_kernel(load_ptx(_PACKED.format(use=_BEFORE), "k.ptx", SourceMap()), "k", block=32,
                   args={"out_ptr": np.zeros(64, np.uint32)})  # fmt: skip
    assert info.value.kind == "tcgen05-ld-register-before-wait"


# ---- mbarrier lifecycle ----------------------------------------------------------------------

# Thread 0 of one warp: init, one arrival completes phase 0, wait for it, then {body}.
_LIFECYCLE = """\
.version 8.7
.target sm_100a
.address_size 64
.shared .align 8 .b64 bar;
.visible .entry k(.param .u64 out_ptr)
{{
\t.reg .b32 %tx;
\t.reg .pred %p, %q;
\tmov.u32 %tx, %tid.x;
\tsetp.eq.u32 %p, %tx, 0;
\t@!%p bra DONE;
\tmbarrier.init.shared::cta.b64 [bar], 1;
\tmbarrier.arrive.shared::cta.b64 _, [bar];
WAIT:
\tmbarrier.try_wait.parity.shared::cta.b64 %q, [bar], 0;
\t@!%q bra WAIT;
{body}
DONE:
\tret;
}}
"""

_LIFECYCLE_CASES = {
    # PTX ISA, mbarrier.inval: an object must be invalidated before its memory is reused,
    # and mbarrier.init may then make it a barrier again.
    "inval-then-init": ("\tmbarrier.inval.shared::cta.b64 [bar];\n\tmbarrier.init.shared::cta.b64 [bar], 1;\n"
                        "\tmbarrier.arrive.shared::cta.b64 _, [bar];", None),
    "inval-at-the-end": ("\tmbarrier.inval.shared::cta.b64 [bar];", None),
    # ... any operation but init on an invalidated object is undefined.
    "arrive-after-inval": ("\tmbarrier.inval.shared::cta.b64 [bar];\n\tmbarrier.arrive.shared::cta.b64 _, [bar];",
                           "mbarrier-invalid-lifecycle"),
    "wait-after-inval": ("\tmbarrier.inval.shared::cta.b64 [bar];\n"
                         "\tmbarrier.try_wait.parity.shared::cta.b64 %q, [bar], 0;", "mbarrier-invalid-lifecycle"),
    "inval-twice": ("\tmbarrier.inval.shared::cta.b64 [bar];\n\tmbarrier.inval.shared::cta.b64 [bar];",
                    "mbarrier-invalid-lifecycle"),
    # PTX ISA, mbarrier.init: initialising a valid mbarrier object is undefined.
    "init-of-a-valid-barrier": ("\tmbarrier.init.shared::cta.b64 [bar], 1;", "mbarrier-invalid-lifecycle"),
    # Transactions still due on the phase would complete on an invalidated object.
    "inval-with-tx-pending": ("\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 16;\n"
                              "\tmbarrier.inval.shared::cta.b64 [bar];", "mbarrier-invalid-lifecycle"),
}  # fmt: skip

_COMMIT_THEN_INVAL = (
    "\tmov.u32 %tx, bar;\n\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%tx];\n"
    "\tmbarrier.inval.shared::cta.b64 [bar];"
)


def test_mbarrier_inval_before_a_commit_arrives_is_a_lifecycle_hazard() -> None:
    """A tcgen05.commit arrives asynchronously, once the tensor core completed what it
    tracks; an inval not ordered after that arrival (no wait observed it) invalidates a
    barrier an operation is still due on. Schedules where the tensor core completes the
    commit before the inval are fine; the others must report it."""
    kinds: set[str | None] = set()
    for seed in range(8):
        module = load_ptx(_LIFECYCLE.format(body=_COMMIT_THEN_INVAL), "k.ptx", SourceMap())
        try:
            run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(1, np.uint32)}, schedule="random", seed=seed)
            kinds.add(None)
        except KernelHazard as e:
            kinds.add(e.kind)
    assert "mbarrier-invalid-lifecycle" in kinds
    assert kinds <= {None, "mbarrier-invalid-lifecycle"}


# Warp 1 waits for phase 0 of a barrier warp 0 initialised (ordered by bar.sync) and
# then invalidates without ever completing the phase.
_INVAL_UNDER_WAITER = """\
.version 8.7
.target sm_100a
.address_size 64
.shared .align 8 .b64 bar;
.visible .entry k(.param .u64 out_ptr)
{
\t.reg .b32 %tx;
\t.reg .pred %p, %q;
\tmov.u32 %tx, %tid.x;
\tsetp.eq.u32 %p, %tx, 0;
\t@%p mbarrier.init.shared::cta.b64 [bar], 1;
\tbar.sync 0;
\t@%p mbarrier.inval.shared::cta.b64 [bar];
\tsetp.lt.u32 %p, %tx, 32;
\t@%p bra DONE;
WAIT:
\tmbarrier.try_wait.parity.shared::cta.b64 %q, [bar], 0;
\t@!%q bra WAIT;
DONE:
\tret;
}
"""


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mbarrier_inval_under_a_waiter_is_a_lifecycle_hazard(seed: int) -> None:
    """The waiter's try_wait operates on the invalidated object, whether it blocked
    before the inval or starts after it (PTX ISA, mbarrier.inval)."""
    module = load_ptx(_INVAL_UNDER_WAITER, "k.ptx", SourceMap())
    with pytest.raises(KernelHazard) as info:
        run_kernel(module, "k", block=64, args={"out_ptr": np.zeros(1, np.uint32)}, schedule="random", seed=seed)
    assert info.value.kind == "mbarrier-invalid-lifecycle"


@pytest.mark.parametrize("case", list(_LIFECYCLE_CASES))
def test_mbarrier_lifecycle_follows_the_isa(case: str) -> None:
    body, expected = _LIFECYCLE_CASES[case]
    module = load_ptx(_LIFECYCLE.format(body=body), "k.ptx", SourceMap())
    args = {"out_ptr": np.zeros(1, np.uint32)}
    if expected is None:
        run_kernel(module, "k", block=32, args=args)
        return
    with pytest.raises(KernelHazard) as info:
        run_kernel(module, "k", block=32, args=args)
    assert info.value.kind == expected


# ---- the tensor core's operand reads ----------------------------------------------------------

_REF = Path(__file__).parent / "ptx_corpus" / "ref_pipeline.ptx"
"""The hand-written 2-stage pipeline (warps 0-3 epilogue, warp 4 MMA) whose MMAs read
A (`smem_a`) and B from shared memory; SAFE as it is."""


def _ref_run(text: str, seed: int) -> str | None:
    module = load_ptx(text.encode(), "ref.ptx", SourceMap())
    rng = np.random.default_rng(0)
    args = {
        "out": np.zeros(3 * 128 * 256, np.float32),
        "a_ptr": rng.standard_normal(128 * 32).astype(np.float16),
        "b_ptr": rng.standard_normal(256 * 32).astype(np.float16),
        "num_tiles": 3,
    }
    try:
        run_kernel(module, "ref_pipeline", block=160, args=args, schedule="random", seed=seed)
    except KernelHazard as e:
        return e.kind
    return None


def _after(text: str, anchor: str, insert: str) -> str:
    assert text.count(anchor) == 1
    return text.replace(anchor, anchor + insert)


_DONE = "$L_done:\n"
_TEARDOWN = "    setp.ne.u32     %p1, %r3, 4;\n    @%p1 bra.uni    $L_exit;\n"
"""Past it only the MMA warp runs (to its dealloc)."""
# The MMA warp (warp 4) overwrites a word of A.
_MMA_WARP_WRITES_A = "    setp.eq.u32 %p6, %r3, 4;\n    @%p6 st.shared.b32 [smem_a], %r21;\n"


def test_writing_an_operand_after_the_commit_completed_is_safe() -> None:
    """After the teardown barrier every warp knows the last commit completed (the
    epilogue observed its full[s] phase; commits complete in order): the MMA warp may
    reuse A's memory."""
    text = _after(_REF.read_text(), _TEARDOWN, "    st.shared.b32 [smem_a], %r21;\n")
    assert {_ref_run(text, seed) for seed in range(2)} == {None}


def test_overwriting_an_operand_before_the_mmas_complete_is_a_race() -> None:
    """The MMA warp writes A right after its last commit, before anything observed that
    commit's arrival: the tensor core may still be reading A (its reads complete with
    the commit, PTX ISA tcgen05.commit), so the write races with the MMA's read."""
    text = _after(_REF.read_text(), _DONE, _MMA_WARP_WRITES_A)
    assert {_ref_run(text, seed) for seed in range(2)} == {"smem-data-race"}


def test_an_operand_written_unordered_with_the_mma_issue_is_a_race() -> None:
    """Epilogue warp 0 writes A at the start of every tile, ordered with neither the
    MMA's issue (nothing publishes it to the MMA warp) nor its completion: a race,
    whichever comes first in the schedule (the MMA's read check or the write's)."""
    write = "    setp.eq.u32 %p6, %r3, 0;\n    @%p6 st.shared.b32 [smem_a+64], %r21;\n"  # warp 0 only
    text = _after(_REF.read_text(), "$L_epi_tile:\n", write)
    assert {_ref_run(text, seed) for seed in range(3)} == {"smem-data-race"}

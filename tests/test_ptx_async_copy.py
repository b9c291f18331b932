"""`cp.async` (non-bulk) groups and `ldmatrix` at the PTX level (interpreter/ptx/async_copy.py),
and dynamic shared memory (`.extern .shared`, sized by the launch).

Expectations come from the PTX ISA 9.0 sections "cp.async", "cp.async.commit_group",
"cp.async.wait_group" and "ldmatrix" (its fragment figures), stated in numpy; every kernel
below also assembles with `ptxas -arch=sm_100a`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from external import run_tool

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.interpreter import KernelHazard, RunResult, run_kernel

HEADER = ".version 8.8\n.target sm_100a\n.address_size 64\n"


def _kernel(body: str, *, shared: str = ".shared .align 16 .b8 buf[2048];", regs: str = "") -> str:
    return f"""{HEADER}{shared}
.visible .entry k(.param .u64 src, .param .u64 out, .param .u32 n)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<16>;
  {regs}
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r30, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
{body}
  ret;
}}
"""


def _run(text: str, block: int, src: np.ndarray[Any, Any], out: np.ndarray[Any, Any], n: int = 0,
         **launch: Any) -> RunResult:  # fmt: skip
    module = load_ptx(text, "k.ptx", SourceMap())
    return run_kernel(module, "k", block=block, args={"src": src, "out": out, "n": n}, **launch)


def _assembles(ptxas: str, text: str, tmp_path: Path) -> None:
    (tmp_path / "k.ptx").write_text(text)
    run_tool([ptxas, "-arch=sm_100a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")])


# --------------------------------------------------------------------------------------
# cp.async: sizes, src-size zero fill
# --------------------------------------------------------------------------------------

_COPY_THEN_STORE = """
  mul.wide.u32 %rd3, %r1, {size};
  add.s64 %rd4, %rd1, %rd3;
  mul.lo.u32 %r3, %r1, {size};
  add.s32 %r4, %r2, %r3;
  cp.async.{cache}.shared.global [%r4], [%rd4], {size}{src_size};
  cp.async.commit_group;
  cp.async.wait_group 0;
  add.s64 %rd5, %rd2, %rd3;
  {copy_out}
"""


def _copy_out(size: int) -> str:
    """Byte by byte: the copied bytes of each lane's slot, to out at the same offset."""
    return "\n  ".join(f"ld.shared.u8 %r6, [%r4+{i}];\n  st.global.u8 [%rd5+{i}], %r6;" for i in range(size))


@pytest.mark.parametrize(
    ("cache", "size", "src_size"),
    [("ca", 4, None), ("ca", 8, None), ("ca", 16, None), ("cg", 16, None), ("ca", 8, 3), ("cg", 16, 0),
     ("cg", 16, 11), ("ca", 4, "reg")],
)  # fmt: skip
def test_cp_async_copies_and_zero_fills(ptxas: str, tmp_path: Path, cache: str, size: int, src_size: object) -> None:
    """Each lane copies `cp-size` bytes: the first `src-size` from the source, the rest
    zero (PTX ISA, cp.async); `src-size` 0 reads nothing (the source may be anywhere)."""
    written = "" if src_size is None else ", %r30" if src_size == "reg" else f", {src_size}"
    text = _kernel(_COPY_THEN_STORE.format(cache=cache, size=size, src_size=written, copy_out=_copy_out(size)))
    _assembles(ptxas, text, tmp_path)
    src = np.random.default_rng(size).integers(1, 256, 32 * size, dtype=np.uint8)
    n = 2 if src_size == "reg" else 0
    got = _run(text, 32, src, np.full(32 * size, 0xEE, np.uint8), n).outputs["out"].reshape(32, size)
    keep = size if src_size is None else n if src_size == "reg" else int(str(src_size))
    want = src.reshape(32, size).copy()
    want[:, keep:] = 0
    np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------------------
# commit / wait groups and the hazards of reading too early
# --------------------------------------------------------------------------------------

PREFILL = "mov.u32 %r31, 0;\n  " + "\n  ".join(
    f"st.shared.v4.u32 [%r4+{at}], {{%r31, %r31, %r31, %r31}};" for at in (0, 512, 1024)
)
"""Each lane writes (zeros) the bytes its copies will write: the copies then reuse written
shared memory, as a ring's later stages do."""

_THREE_GROUPS = """
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  {prefill}
  cp.async.cg.shared.global [%r4], [%rd4], 16;
  cp.async.commit_group;
  cp.async.cg.shared.global [%r4+512], [%rd4+512], 16;
  cp.async.commit_group;
  cp.async.cg.shared.global [%r4+1024], [%rd4+1024], 16;
  cp.async.commit_group;
  cp.async.wait_group {pending};
  ld.shared.v4.u32 {{%r5, %r6, %r7, %r8}}, [%r4+{read}];
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.u32 [%rd5], {{%r5, %r6, %r7, %r8}};
"""


@pytest.mark.parametrize(("pending", "group"), [(2, 0), (1, 0), (1, 1), (0, 2)])
def test_wait_group_lands_all_but_the_newest_groups(ptxas: str, tmp_path: Path, pending: int, group: int) -> None:
    """`cp.async.wait_group N` waits for all but the N most recent committed groups: after
    it a group older than those reads as copied."""
    text = _kernel(_THREE_GROUPS.format(prefill="", pending=pending, read=512 * group))
    _assembles(ptxas, text, tmp_path)
    src = np.random.default_rng(3).integers(0, 256, 3 * 512, dtype=np.uint8)
    got = _run(text, 32, src, np.zeros(512, np.uint8)).outputs["out"]
    np.testing.assert_array_equal(got, src[512 * group : 512 * group + 512])


def test_wait_all_commits_and_waits_for_every_copy(ptxas: str, tmp_path: Path) -> None:
    """`cp.async.wait_all` is `cp.async.commit_group; cp.async.wait_group 0` (PTX ISA): the
    uncommitted copy lands too."""
    body = _THREE_GROUPS.format(prefill="", pending=0, read=1024).replace(
        "  cp.async.commit_group;\n  cp.async.wait_group 0;", "  cp.async.wait_all;"
    )
    assert body.count("commit_group") == 2
    text = _kernel(body)
    _assembles(ptxas, text, tmp_path)
    module = load_ptx(text, "k.ptx", SourceMap())
    assert any(isinstance(op, ptx.CpAsyncWaitAllOp) for op in module.walk())
    src = np.random.default_rng(4).integers(0, 256, 3 * 512, dtype=np.uint8)
    got = run_kernel(module, "k", block=32, args={"src": src, "out": np.zeros(512, np.uint8), "n": 0}).outputs["out"]
    np.testing.assert_array_equal(got, src[1024:])


@pytest.mark.parametrize(("pending", "group"), [(1, 2), (2, 1), (2, 2)])
@pytest.mark.parametrize("prefill", [True, False], ids=["reused", "first-use"])
def test_reading_a_group_still_pending_is_a_hazard(pending: int, group: int, prefill: bool) -> None:
    """Reading the destination of a copy whose group the wait left pending: the copy may
    land before or after the read. Memory written before: `async-copy-unfinished`,
    reported at the wait that lands the copy; never written: the read itself is
    `smem-read-uninitialized` (nothing has landed)."""
    body = _THREE_GROUPS.format(prefill=PREFILL if prefill else "", pending=pending, read=512 * group)
    text = _kernel(body + "  cp.async.wait_group 0;\n")
    src = np.zeros(3 * 512, np.uint8)
    with pytest.raises(KernelHazard) as caught:
        _run(text, 32, src, np.zeros(512, np.uint8))
    if prefill:
        assert caught.value.kind == "async-copy-unfinished"
        assert "ptx.ld by warp 0" in caught.value.message
        assert "before the cp.async.wait_group that completes it" in caught.value.message
        assert isinstance(caught.value.op, ptx.CpAsyncWaitGroupOp)
    else:
        assert caught.value.kind == "smem-read-uninitialized"
        assert isinstance(caught.value.op, ptx.LdOp)


def test_writing_the_destination_before_the_wait_is_a_hazard() -> None:
    body = """
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r3, %r1, 2;
  add.s32 %r4, %r2, %r3;
  cp.async.ca.shared.global [%r4], [%rd4], 4;
  cp.async.commit_group;
  st.shared.u32 [%r4], %r1;
  cp.async.wait_group 0;
"""
    with pytest.raises(KernelHazard) as caught:
        _run(_kernel(body), 32, np.zeros(128, np.uint8), np.zeros(4, np.uint8))
    assert caught.value.kind == "async-copy-unfinished"
    assert "ptx.st by warp 0" in caught.value.message


_TWO_WARPS = """
  setp.lt.u32 %p1, %r1, 32;
  @!%p1 bra CONSUMER;
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  {prefill}
  cp.async.cg.shared.global [%r4], [%rd4], 16;
  cp.async.commit_group;
  {producer}
  bra.uni DONE;
CONSUMER:
  bar.sync 0;
  sub.u32 %r9, %r1, 32;
  shl.b32 %r3, %r9, 4;
  add.s32 %r4, %r2, %r3;
  ld.shared.v4.u32 {{%r5, %r6, %r7, %r8}}, [%r4];
  mul.wide.u32 %rd3, %r9, 16;
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.u32 [%rd5], {{%r5, %r6, %r7, %r8}};
DONE:
"""


@pytest.mark.parametrize("prefill", [True, False], ids=["reused", "first-use"])
def test_another_warp_reads_after_the_issuers_wait_and_a_barrier(ptxas: str, tmp_path: Path, prefill: bool) -> None:
    """The issuing thread's wait, then a barrier: the other warp reads the copied bytes."""
    text = _kernel(
        _TWO_WARPS.format(prefill=PREFILL if prefill else "", producer="cp.async.wait_group 0;\n  bar.sync 0;")
    )
    _assembles(ptxas, text, tmp_path)
    src = np.random.default_rng(5).integers(0, 256, 512, dtype=np.uint8)
    for seed in (None, 1, 2):
        schedule: dict[str, Any] = {} if seed is None else {"schedule": "random", "seed": seed}
        got = _run(text, 64, src, np.zeros(512, np.uint8), **schedule).outputs["out"]
        np.testing.assert_array_equal(got, src)


@pytest.mark.parametrize("prefill", [True, False], ids=["reused", "first-use"])
def test_a_barrier_before_the_issuers_wait_orders_nothing(prefill: bool) -> None:
    """A barrier between the issue and the issuing thread's wait does not order the copy
    before the other warp's read: a data race, whichever comes first (on memory never
    written before, a read before the landing reads uninitialised memory)."""
    text = _kernel(
        _TWO_WARPS.format(prefill=PREFILL if prefill else "", producer="bar.sync 0;\n  cp.async.wait_group 0;")
    )
    for seed in (None, 1):
        schedule: dict[str, Any] = {} if seed is None else {"schedule": "random", "seed": seed}
        with pytest.raises(KernelHazard) as caught:
            _run(text, 64, np.zeros(512, np.uint8), np.zeros(512, np.uint8), **schedule)
        if prefill or caught.value.kind != "smem-read-uninitialized":
            assert caught.value.kind == "smem-data-race"
            assert "ptx.cp_async" in caught.value.message


@pytest.mark.parametrize(
    ("copy", "what"),
    [("cp.async.ca.shared.global [%r2], [%rd1], 16, 17;", "src-size 17"),
     ("cp.async.ca.shared.global [%r2+4], [%rd1], 8;", "destination address 0x4 is not aligned to cp-size 8"),
     ("cp.async.ca.shared.global [%r2], [%rd1+2], 4;", "is not aligned to cp-size 4"),
     ("cp.async.ca.shared.global [%r2+2048], [%rd1], 4;", "outside its 2048 bytes")],
)  # fmt: skip
def test_invalid_copies_are_reported_at_the_cp_async(copy: str, what: str) -> None:
    """src-size above cp-size is undefined (PTX ISA, cp.async); addresses are aligned to
    the access size ("Addresses as Operands"); bounds as for ld/st."""
    with pytest.raises(KernelHazard) as caught:
        _run(_kernel(f"  {copy}\n  cp.async.commit_group;\n  cp.async.wait_group 0;"), 32,
             np.zeros(64, np.uint8), np.zeros(4, np.uint8))  # fmt: skip
    assert caught.value.kind in ("cp-async-invalid", "out-of-bounds")
    assert what in caught.value.message
    assert isinstance(caught.value.op, ptx.CpAsyncOp)  # located at the copy, not at its wait


# --------------------------------------------------------------------------------------
# ldmatrix
# --------------------------------------------------------------------------------------

_LDMATRIX = """
  // smem <- src (2048 bytes: 64 rows of 8 b16), 16 bytes per lane, four times
  mul.wide.u32 %rd3, %r1, 16;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd4];
  st.shared.v4.u32 [%r4], {{%r5, %r6, %r7, %r8}};
  ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd4+512];
  st.shared.v4.u32 [%r4+512], {{%r5, %r6, %r7, %r8}};
  ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd4+1024];
  st.shared.v4.u32 [%r4+1024], {{%r5, %r6, %r7, %r8}};
  ld.global.v4.u32 {{%r5, %r6, %r7, %r8}}, [%rd4+1536];
  st.shared.v4.u32 [%r4+1536], {{%r5, %r6, %r7, %r8}};
  // lane l gives row address buf + 16 * rowof[l] (rowof: the u32 words at src + 2048)
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd7, %rd1, %rd6;
  ld.global.u32 %r9, [%rd7+2048];
  shl.b32 %r10, %r9, 4;
  add.s32 %r11, %r2, %r10;
  ldmatrix.sync.aligned.m8n8.x{count}{trans}.shared.b16 {{{regs}}}, [%r11];
  mul.wide.u32 %rd8, %r1, {stride};
  add.s64 %rd9, %rd2, %rd8;
  {stores}
"""


def _ldmatrix_kernel(count: int, trans: bool) -> str:
    regs = [f"%r{20 + i}" for i in range(count)]
    stores = "\n  ".join(f"st.global.u32 [%rd9+{4 * i}], {r};" for i, r in enumerate(regs))
    return _kernel(_LDMATRIX.format(count=count, trans=".trans" if trans else "", regs=", ".join(regs),
                                    stride=4 * count, stores=stores))  # fmt: skip


def _isa_fragments(
    rows: np.ndarray[Any, Any], row_of: np.ndarray[Any, Any], count: int, trans: bool
) -> np.ndarray[Any, Any]:
    """The PTX ISA's ldmatrix figures, element by element: matrix i's row r is the 8 b16
    at the address lane 8i + r gives; element (r, c) of the fragment a warp receives goes
    to lane 4r + c/2, register i, low half for even c. Without .trans the fragment is the
    matrix, with .trans its transpose."""
    got = np.zeros((32, count), dtype=np.uint32)
    for i in range(count):
        matrix = np.array([rows[row_of[8 * i + r]] for r in range(8)], dtype=np.uint32)
        fragment = matrix.T if trans else matrix
        for r in range(8):
            for c in range(8):
                got[4 * r + c // 2, i] |= fragment[r, c] << (16 * (c % 2))
    return got


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True], ids=["plain", "trans"])
def test_ldmatrix_fragments_follow_the_isa_figure(ptxas: str, tmp_path: Path, count: int, trans: bool) -> None:
    text = _ldmatrix_kernel(count, trans)
    _assembles(ptxas, text, tmp_path)
    rng = np.random.default_rng(count + 10 * trans)
    rows = rng.integers(0, 1 << 16, (128, 8), dtype=np.uint16)
    row_of = rng.permutation(128)[:32].astype(np.uint32)  # each lane its own row, anywhere
    src = np.concatenate([rows[:128].reshape(-1).view(np.uint8)[:2048], row_of.view(np.uint8)])
    # Rows 0..127 are 2048 bytes: the kernel copies all of them to shared memory.
    got = _run(text, 32, src, np.zeros(32 * count, np.uint32)).outputs["out"].reshape(32, count)
    np.testing.assert_array_equal(got, _isa_fragments(rows, row_of, count, trans))


def test_ldmatrix_in_divergent_code_is_a_hazard() -> None:
    body = """
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra SKIP;
  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r20}, [%r2];
SKIP:
"""
    with pytest.raises(KernelHazard) as caught:
        _run(_kernel(body), 32, np.zeros(4, np.uint8), np.zeros(4, np.uint8))
    assert caught.value.kind == "divergent-sync-aligned"


def test_ldmatrix_of_unwritten_shared_memory_is_uninitialised() -> None:
    with pytest.raises(KernelHazard) as caught:
        _run(_kernel("  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r20}, [%r2];"), 32,
             np.zeros(4, np.uint8), np.zeros(4, np.uint8))  # fmt: skip
    assert caught.value.kind == "smem-read-uninitialized"


# --------------------------------------------------------------------------------------
# Dynamic shared memory
# --------------------------------------------------------------------------------------

_DYNAMIC = """
  st.shared.u32 [%r2+{at}], %r1;
  ld.shared.u32 %r5, [%r2+{at}];
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd5, %rd2, %rd3;
  st.global.u32 [%rd5], %r5;
"""


def test_dynamic_shared_memory_has_the_launchs_size(ptxas: str, tmp_path: Path) -> None:
    """An unsized `.extern .shared` array is the launch's dynamic shared memory: the bytes
    the launch gives, after the static variables; past them an access is out of bounds."""
    shared = ".shared .align 4 .b8 fixed[12];\n.extern .shared .align 16 .b8 buf[];"
    text = _kernel(_DYNAMIC.format(at=60), shared=shared)
    _assembles(ptxas, text, tmp_path)
    out = np.zeros(32, np.uint32)
    got = _run(text, 32, np.zeros(4, np.uint8), out, dynamic_shared_bytes=64).outputs["out"]
    assert got.tolist() == [31] * 32  # every lane stored to the same word; the last lane wins
    with pytest.raises(KernelHazard) as caught:
        _run(text, 32, np.zeros(4, np.uint8), out, dynamic_shared_bytes=60)
    assert caught.value.kind == "out-of-bounds"
    assert "outside its 76 bytes" in caught.value.message  # 12 static, aligned to 16, + 60


@pytest.mark.parametrize(("producer", "verdict"),
                         [("cp.async.wait_group 0;\n  bar.sync 0;", None),
                          ("bar.sync 0;\n  cp.async.wait_group 0;", "smem-data-race")])  # fmt: skip
def test_exhaustive_exploration_of_a_copy_and_its_reader(producer: str, verdict: str | None) -> None:
    """Every interleaving at synchronisation points (pending copies are part of the warp's
    state): the wait-then-barrier hand-over is SAFE in all, the barrier-then-wait one races."""
    from xdsl_tmem.interpreter.explore import explore_exhaustive
    from xdsl_tmem.interpreter.launch import Launch

    # The copy reuses written memory (PREFILL), so the race is a race in every interleaving.
    module = load_ptx(_kernel(_TWO_WARPS.format(prefill=PREFILL, producer=producer)), "k.ptx", SourceMap())
    args = {"src": np.zeros(512, np.uint8), "out": np.zeros(512, np.uint8), "n": 0}
    result = explore_exhaustive(module, Launch.create("k", block=64, args=args))
    failure = result.failure
    if verdict is None:
        assert failure is None
        assert result.explored > 1
    else:
        assert isinstance(failure, KernelHazard)
        assert failure.kind == verdict


def _snapshot_run(monkeypatch: pytest.MonkeyPatch, text: str, block: int, src: np.ndarray[Any, Any],
                  together: bool) -> tuple[Any, ...]:  # fmt: skip
    """The run's output or report, and every shadow's records as the launch ends."""
    from xdsl_tmem.interpreter.ptx import async_copy
    from xdsl_tmem.interpreter.shadow import Shadow

    records: list[Any] = []
    drop = Shadow.drop

    def snapshot(shadow: Shadow) -> None:
        prev = None if shadow.prev is None else shadow.prev.tolist()
        records.append((shadow.base, shadow.write.tolist(), shadow.read.tolist(), prev, dict(shadow.readers)))
        drop(shadow)

    original = async_copy._land_together  # pyright: ignore[reportPrivateUsage]
    landed: list[bool] = []

    def land_together(w: Any, landing: Any) -> bool:
        landed.append(together and original(w, landing))
        return landed[-1]

    monkeypatch.setattr(Shadow, "drop", snapshot)
    monkeypatch.setattr(async_copy, "_land_together", land_together)
    try:
        outcome: Any = _run(text, block, src, np.zeros(512, np.uint8)).outputs["out"].tolist()
    except KernelHazard as e:
        outcome = (e.kind, e.message)
    monkeypatch.undo()
    return outcome, sorted(records, key=lambda r: r[0]), any(landed)


_OWN_WRITE = "  mov.u32 %r20, 7;\n  st.shared.u32 [%r4+516], %r20;\n"
_ZERO_FILL = "cp.async.cg.shared.global [%r4+512], [%rd4+512], 16, 0;"


@pytest.mark.parametrize(
    ("body", "joined"),
    [(_THREE_GROUPS.format(prefill="", pending=0, read=0), True),
     (_THREE_GROUPS.format(prefill=PREFILL, pending=1, read=512), True),
     (_THREE_GROUPS.format(prefill=PREFILL, pending=0, read=1024).replace(
         "  cp.async.wait_group 0;", _OWN_WRITE + "  cp.async.wait_group 0;"), False),
     (_THREE_GROUPS.format(prefill=PREFILL, pending=0, read=512).replace(
         "cp.async.cg.shared.global [%r4+512], [%rd4+512], 16;", _ZERO_FILL), True),
     (_THREE_GROUPS.format(prefill=PREFILL, pending=0, read=512).replace("%rd4+1024", "%rd4"), False),
     (_THREE_GROUPS.format(prefill=PREFILL, pending=0, read=512).replace("[%r4+1024]", "[%r4+512]"), False)],
    ids=["fresh", "reused", "own-write-between", "zero-fill", "same-source", "same-destination"],
)  # fmt: skip
def test_a_wait_lands_its_copies_together_as_one_by_one(monkeypatch: pytest.MonkeyPatch, body: str,
                                                        joined: bool) -> None:  # fmt: skip
    """A wait lands its copies' units together where that is the same as one by one
    (async_copy._land_together): the same output or report and the same race records
    when the launch ends as landing each copy in turn (the path the model had before).
    Copies that share source or destination units, or an access by the issuing warp
    between the issue and the wait, are landed one by one (`joined` False)."""
    text = _kernel(body)
    src = np.random.default_rng(6).integers(0, 256, 3 * 512, dtype=np.uint8)
    together = _snapshot_run(monkeypatch, text, 32, src, True)
    one_by_one = _snapshot_run(monkeypatch, text, 32, src, False)
    assert together[:2] == one_by_one[:2]
    assert (together[2], one_by_one[2]) == (joined, False)


_REISSUE = """
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  mov.u32 %r10, 0;
  mov.u32 %r12, 16;
LOOP:
  cp.async.cg.shared.global [%r4], [%rd4], 16, %r12;
  cp.async.commit_group;
  cp.async.wait_group 0;
  add.s64 %rd4, %rd4, {step};
  add.u32 %r12, %r12, {size_step};
  add.u32 %r10, %r10, 1;
  setp.lt.u32 %p1, %r10, 2;
  @%p1 bra LOOP;
  ld.shared.v4.u32 {{%r5, %r6, %r7, %r8}}, [%r4];
  add.s64 %rd5, %rd2, %rd3;
  st.global.v4.u32 [%rd5], {{%r5, %r6, %r7, %r8}};
"""


def _count_reuse(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per `cp.async` issue from then on: whether it reused destination checks made before
    (`async_copy._issue_from` gave its units)."""
    from xdsl_tmem.interpreter.ptx import async_copy

    reused: list[bool] = []
    issue_from = async_copy._issue_from  # pyright: ignore[reportPrivateUsage]

    def counted(w: Any, copy: Any, dst_base: int, dst: Any) -> Any:
        units = issue_from(w, copy, dst_base, dst)
        reused.append(units is not None)
        return units

    monkeypatch.setattr(async_copy, "_issue_from", counted)
    return reused


@pytest.mark.parametrize(
    ("step", "size_step", "what"),
    [(512, 0, None), (512, -16, None), (514, 0, "source address 0x"), (514, -16, "source address 0x"),
     (512, 1, "src-size 17"), (1024, 0, "outside every kernel buffer")],
    ids=["copy", "zero-fill", "misaligned-source", "misaligned-unread-source", "src-size", "source-out-of-bounds"],
)  # fmt: skip
def test_a_copy_reissued_to_the_same_destinations_is_checked_in_full(
    monkeypatch: pytest.MonkeyPatch, step: int, size_step: int, what: str | None
) -> None:
    """The second trip of a loop issues the copy to the destinations its first trip
    checked (async_copy._Planned reuses their checks): its source and src-size are still
    checked, and reported as the first trip would report them (PTX ISA, cp.async: src-size
    at most cp-size; "Addresses as Operands": the source aligned even where src-size 0
    reads nothing; bounds as for ld). The outcome and the race records are those of
    checking each issue in full."""
    from xdsl_tmem.interpreter.ptx import async_copy

    text = _kernel(_REISSUE.format(step=step, size_step=size_step))
    src = np.random.default_rng(7).integers(0, 256, 1024, dtype=np.uint8)
    reused = _count_reuse(monkeypatch)
    planned = _snapshot_run(monkeypatch, text, 32, src, True)
    assert reused == [what is None]  # the second trip: the checks reused, or (a failure) all made again
    check_issue = async_copy._check_issue  # pyright: ignore[reportPrivateUsage]

    def in_full(self: Any, w: Any, copy: Any) -> Any:
        return check_issue(w, copy)

    monkeypatch.setattr(async_copy._Planned, "issue", in_full)  # pyright: ignore[reportPrivateUsage]
    checked = _snapshot_run(monkeypatch, text, 32, src, True)
    assert planned[:2] == checked[:2]
    outcome = planned[0]
    if what is None:  # the second trip's bytes (or zeros), numpy's slice of the source
        expected = src[step : step + 512] if size_step == 0 else np.zeros(512, np.uint8)
        assert outcome == expected.tolist()
    else:
        kind, message = outcome
        assert kind in ("cp-async-invalid", "out-of-bounds")
        assert what in message


_TWO_CLOCKS = """
  mul.wide.u32 %rd3, %r1, 16;
  add.s64 %rd4, %rd1, %rd3;
  shl.b32 %r3, %r1, 4;
  add.s32 %r4, %r2, %r3;
  cp.async.cg.shared.global [%r4], [%rd4], 16;
  cp.async.commit_group;
  cp.async.cg.shared.global [%r4+1024], [%rd4+1024], 16;
  cp.async.commit_group;
  bar.sync 0;
  cp.async.cg.shared.global [%r4+2048], [%rd4+2048], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  ld.shared.u32 %r5, [%r4+2048];
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd5, %rd2, %rd6;
  st.global.u32 [%rd5], %r5;
"""


def test_a_wait_lands_the_groups_of_two_clocks_in_two_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two warps; each lands at its wait groups issued before and after a barrier, which
    joined the other warp's clock (two clocks): each run of one clock lands together
    (the two older copies; the newest alone), with the same output and records as one by
    one."""
    from xdsl_tmem.interpreter.ptx import async_copy

    text = _kernel(_TWO_CLOCKS, shared=".shared .align 16 .b8 buf[4096];")
    src = np.random.default_rng(8).integers(0, 256, 3072, dtype=np.uint8)
    runs: list[int] = []
    land_together = async_copy._land_together  # pyright: ignore[reportPrivateUsage]

    def counted(w: Any, landing: Any) -> bool:
        runs.append(len(landing))
        return land_together(w, landing)

    monkeypatch.setattr(async_copy, "_land_together", counted)
    together = _snapshot_run(monkeypatch, text, 64, src, True)
    assert runs == [2, 1, 2, 1]  # per warp: the run before the barrier, the one after
    one_by_one = _snapshot_run(monkeypatch, text, 64, src, False)
    assert together[:2] == one_by_one[:2]
    # each thread's first word of its newest copy: bytes 2048 + 16 t .. + 3 of the source
    expected = src[2048:3072].reshape(64, 16)[:, :4].reshape(-1)
    assert together[0][:256] == expected.tolist()
    assert together[2]


def test_the_checked_destinations_carry_over_to_the_next_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grid of two CTAs (clusters of one layout): the second CTA's copies reuse the
    destination checks of the first's (async_copy._Planned); each CTA copies its own
    512 bytes of the source to its own part of the output, as numpy slices them."""

    body = _REISSUE.format(step=512, size_step=0).replace(
        "  add.s64 %rd5, %rd2, %rd3;",
        "  mov.u32 %r13, %ctaid.x;\n  mul.wide.u32 %rd7, %r13, 512;\n  add.s64 %rd5, %rd2, %rd3;\n"
        "  add.s64 %rd5, %rd5, %rd7;",
    )
    src = np.random.default_rng(9).integers(0, 256, 1024, dtype=np.uint8)
    reused = _count_reuse(monkeypatch)
    got = _run(_kernel(body), 32, src, np.zeros(1024, np.uint8), grid=(2, 1, 1)).outputs["out"]
    assert reused == [True, True, True]  # CTA 0's second trip, both trips of CTA 1
    np.testing.assert_array_equal(got, np.concatenate([src[512:], src[512:]]))


def test_a_waits_records_per_copy_and_own_access_test_are_the_per_unit_ones() -> None:
    """The landing's per-copy records (async_copy._values_by_copy: each copy's one record,
    or None where a copy's rows hold several) and its own-access test on them
    (`_any_own`) against the per-unit definitions on random rows: a unit recorded SHARED
    (several accesses), or one of the warp's (component `me`) newer than its copy's issue
    epoch and not foreign (races.own_since's range), makes the copies land one by one."""
    from itertools import pairwise
    from types import SimpleNamespace

    from xdsl_tmem.interpreter.ptx import async_copy
    from xdsl_tmem.interpreter.shadow import COMP_SHIFT, FOREIGN_EPOCH, SHARED, SITE_SHIFT

    values_by_copy = async_copy._values_by_copy  # pyright: ignore[reportPrivateUsage]
    part_type = async_copy._Part  # pyright: ignore[reportPrivateUsage]
    any_own = async_copy._any_own  # pyright: ignore[reportPrivateUsage]
    rng = np.random.default_rng(12)
    me = 2
    for _ in range(300):
        copies = int(rng.integers(1, 5))
        counts = [int(c) for c in rng.integers(1, 4, copies)]
        issued = [int(e) for e in rng.integers(0, 6, copies)]

        def record() -> int:
            kind = int(rng.integers(0, 4))
            if kind == 0:
                return 0
            if kind == 1:
                return SHARED
            comp = me if rng.integers(0, 2) else 1
            epoch = FOREIGN_EPOCH if rng.integers(0, 5) == 0 else int(rng.integers(0, 8))
            return (int(rng.integers(1, 4)) << SITE_SHIFT) | (comp << COMP_SHIFT) | epoch

        def rows(counts: list[int]) -> np.ndarray[Any, Any]:
            blocks: list[np.ndarray[Any, Any]] = []
            for count in counts:
                block = np.full((count, 16), record(), dtype=np.int64)
                if rng.integers(0, 4) == 0:  # a copy whose rows hold several records
                    block[int(rng.integers(0, count)), int(rng.integers(0, 16))] = record()
                blocks.append(block)
            return np.concatenate(blocks)

        write, read = rows(counts), rows(counts)
        starts = np.cumsum([0, *counts])
        for got, recorded in ((values_by_copy(write, counts), write), (values_by_copy(read, counts), read)):
            each = [set(recorded[a:b].reshape(-1).tolist()) for a, b in pairwise(starts)]
            expected = None if any(len(s) > 1 for s in each) else [s.pop() for s in each]
            if not recorded.any():
                expected = [0] * copies
            assert got == expected
        part = part_type(None, np.arange(sum(counts)), list(range(copies)), counts, write, read,  # type: ignore[arg-type]
                         (0, 0), values_by_copy(write, counts), values_by_copy(read, counts))  # fmt: skip
        warp = SimpleNamespace(clock=SimpleNamespace(generic=me))
        bound = np.repeat(np.array(issued, dtype=np.int64), counts)[:, None]
        low = np.concatenate([read, write]) & ((1 << SITE_SHIFT) - 1)
        bounds = np.concatenate([bound, bound]) | (me << COMP_SHIFT)
        mine = (low > bounds) & (low < ((me << COMP_SHIFT) | FOREIGN_EPOCH))
        expected_own = bool((np.concatenate([read, write]) == SHARED).any() or mine.any())
        assert any_own(warp, [part], issued) == expected_own  # type: ignore[arg-type]

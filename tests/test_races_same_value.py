"""Same-value write-write races (races.py, docs/verification.md "Same-value writes").

Two unordered plain writes of the same bytes leave those bytes in every coherence order
(PTX ISA, "Memory Consistency Model": data races are allowed, the outcome is what some
coherence order gives; Lustig et al., ASPLOS 2019), so by default they are noted, not
reported; `race_policy="strict"` reports them. The checks must stay sound for what comes
after: a write of other bytes racing with either equal writer, and a read that is ordered
after one of them but may still see an older write, are races. Expectations are reasoned
from the memory model, per schedule (rr and random seeds), not taken from a run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gemm_reference import parse

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import KernelHazard, run_kernel

SCHEDULES = [("rr", 0), ("random", 1), ("random", 2), ("random", 3), ("random", 7)]
WARPS = 4

_PTX = """\
.version 8.6
.target sm_100a
.address_size 64
.shared .align 8 .b8 v[8];
.visible .entry k(.param .u64 out_ptr)
{{
\t.reg .b32 %tid, %w, %x, %o;
\t.reg .b64 %out, %a, %d;
\t.reg .pred %w0, %w1, %w2, %w3, %w02, %w13;
\tld.param.u64 %out, [out_ptr];
\tmov.u32 %tid, %tid.x;
\tshr.u32 %w, %tid, 5;
\tsetp.eq.u32 %w0, %w, 0;
\tsetp.eq.u32 %w1, %w, 1;
\tsetp.eq.u32 %w2, %w, 2;
\tsetp.eq.u32 %w3, %w, 3;
\tor.pred %w02, %w0, %w2;
\tor.pred %w13, %w1, %w3;
\tmov.u32 %x, 0;
{body}
\tmul.wide.u32 %a, %tid, 4;
\tadd.s64 %d, %out, %a;
\tst.global.b32 [%d], %x;
\tret;
}}
"""


def _module(body: str) -> Any:
    return load_ptx(_PTX.format(body=body), "same_value.ptx", SourceMap())


def _run(body: str, schedule: str = "rr", seed: int = 0, **launch: Any) -> Any:
    out = np.full(WARPS * 32, -1, np.int32)
    return run_kernel(_module(body), "k", block=WARPS * 32, args={"out_ptr": out}, schedule=schedule, seed=seed,
                      **launch)  # fmt: skip


def _hazard(body: str, schedule: str = "rr", seed: int = 0, **launch: Any) -> KernelHazard:
    with pytest.raises(KernelHazard) as caught:
        _run(body, schedule, seed, **launch)
    return caught.value


# Warps 0 and 1 store 7 to v with nothing ordering them; then every warp meets at bar.sync 0.
_EQUAL = "\t@%w0 st.shared.b32 [v], 7;\n\t@%w1 st.shared.b32 [v], 7;\n"


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_two_unordered_writes_of_the_same_value_are_noted_not_reported(schedule: str, seed: int) -> None:
    """Both orders of the two stores leave 7: every warp reads 7 after the barrier; one
    same-value race (the later of the two stores) is counted, at that store."""
    result = _run(_EQUAL + "\tbar.sync 0;\n\tld.shared.b32 %x, [v];\n", schedule, seed)
    assert result.outputs["out_ptr"].tolist() == [7] * (WARPS * 32)
    assert result.report.same_value_races == 1
    first = result.report.first_same_value
    assert first is not None
    assert first.op.name == "ptx.st"
    assert "@v+0" in first.message


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_the_strict_race_policy_reports_them(schedule: str, seed: int) -> None:
    hazard = _hazard(_EQUAL + "\tbar.sync 0;\n\tld.shared.b32 %x, [v];\n", schedule, seed, race_policy="strict")
    assert hazard.kind == "smem-data-race"
    assert "both write the same bytes" in hazard.message
    assert "warp 0" in hazard.message
    assert "warp 1" in hazard.message


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_unordered_writes_of_different_values_race(schedule: str, seed: int) -> None:
    hazard = _hazard("\t@%w0 st.shared.b32 [v], 7;\n\t@%w1 st.shared.b32 [v], 8;\n\tbar.sync 0;\n", schedule, seed)
    assert hazard.kind == "smem-data-race"
    assert "both write" not in hazard.message


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_a_write_of_another_value_ordered_after_one_equal_writer_races_with_the_other(schedule: str, seed: int) -> None:
    """Warp 2 meets warp 0 (bar.sync 1, 64) after the equal stores, then stores 9: ordered
    after warp 0's 7, not warp 1's, so v ends 7 or 9 depending on the order: a race, whichever
    of the three stores the schedule runs last (warp 1's 7 after warp 2's 9 races too)."""
    body = _EQUAL + "\t@%w02 bar.sync 1, 64;\n\t@%w2 st.shared.b32 [v], 9;\n\tbar.sync 0;\n"
    hazard = _hazard(body, schedule, seed)
    assert hazard.kind == "smem-data-race"
    assert "warp 1" in hazard.message
    assert "both write" not in hazard.message


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_a_write_of_the_same_value_ordered_after_one_equal_writer_is_another_same_value_race(
    schedule: str, seed: int
) -> None:
    body = _EQUAL + "\t@%w02 bar.sync 1, 64;\n\t@%w2 st.shared.b32 [v], 7;\n\tbar.sync 0;\n\tld.shared.b32 %x, [v];\n"
    result = _run(body, schedule, seed)
    assert result.outputs["out_ptr"].tolist() == [7] * (WARPS * 32)
    assert result.report.same_value_races >= 1


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_a_read_ordered_after_one_equal_writer_reads_their_value(schedule: str, seed: int) -> None:
    """v was never written before the two stores of 7, so a read ordered after either one
    (warp 2 meets warp 0 only) can only read 7 (coherence: it cannot read what precedes a
    write it is ordered after, and no other write exists): not a race, whichever store the
    schedule ran first."""
    body = _EQUAL + "\t@%w02 bar.sync 1, 64;\n\t@%w2 ld.shared.b32 %x, [v];\n"
    result = _run(body, schedule, seed)
    out = result.outputs["out_ptr"].reshape(WARPS, 32)
    assert out[2].tolist() == [7] * 32


# Warp 2 stores 5 and meets warp 0 (bar.sync 1, 64); warp 0 then stores 7, ordered after the
# 5; warp 1 stores 7 unordered with both; warp 3 meets warp 1 (bar.sync 2, 64) and reads v.
_OLDER = (
    "\t@%w2 st.shared.b32 [v], 5;\n"
    "\t@%w02 bar.sync 1, 64;\n"
    "\t@%w0 st.shared.b32 [v], 7;\n"
    "\t@%w1 st.shared.b32 [v], 7;\n"
    "\t@%w13 bar.sync 2, 64;\n"
    "\t@%w3 ld.shared.b32 %x, [v];\n"
)


def test_a_read_ordered_after_an_equal_writer_that_missed_an_older_write_races() -> None:
    """The unsound case for a shadow that keeps only the later of two equal writers: warp 3
    is ordered after warp 1's 7 only, and warp 1 is not ordered after warp 2's 5, so warp 3
    may read 5 (the 5 precedes warp 0's 7 in coherence order, not necessarily warp 1's).
    Every schedule reports a race: either warp 1's 7 meets the 5 (other bytes), or, where
    warp 0's 7 came between, warp 3's read, which is ordered after a writer of 7 but not
    after the 5 the first one replaced."""
    reads = 0
    for schedule, seed in [*SCHEDULES, *(("random", s) for s in range(8, 24))]:
        hazard = _hazard(_OLDER, schedule, seed)
        assert hazard.kind == "smem-data-race"
        reads += hazard.message.startswith("ptx.ld by warp 3")
        if hazard.message.startswith("ptx.ld by warp 3"):
            assert "warp 2" in hazard.message  # the older write it may read
    assert reads > 0


def test_a_write_the_check_does_not_see_is_never_a_same_value_one() -> None:
    """mbarrier.init writes its 8 bytes without the model putting them in shared memory (it
    holds zeros there), so a racing store of zeros is a race, not a same-value one."""
    body = "\t@%w0 mbarrier.init.shared.b64 [v], 1;\n\t@%w1 st.shared.b64 [v], 0;\n\tbar.sync 0;\n"
    hazard = _hazard(body)
    assert hazard.kind == "smem-data-race"
    assert "both write" not in hazard.message


def test_lanes_of_one_warp_storing_different_values_land_the_last_lanes() -> None:
    """All lanes of a warp store to v and the last lane's value lands (the model orders a
    warp's lanes so). Warp 0 lands 62 (lanes store 31..62); warp 1 storing 62 from every
    lane is a same-value race; warp 1 storing 62..93 lands 93, a race although its lane 0
    stores 62: what lands is compared, not each lane's bytes."""
    body = (
        "\t@%w0 add.u32 %o, %tid, 31;\n"
        "\t@%w1 add.u32 %o, %tid, 30;\n"
        "\t@%w1 mov.u32 %o, 62;\n"
        "\t@%w0 st.shared.b32 [v], %o;\n"
        "\t@%w1 st.shared.b32 [v], %o;\n"
        "\tbar.sync 0;\n\tld.shared.b32 %x, [v];\n"
    )
    result = _run(body)
    assert result.outputs["out_ptr"].tolist() == [62] * (WARPS * 32)
    assert result.report.same_value_races == 1
    differ = body.replace("\t@%w1 mov.u32 %o, 62;\n", "")  # warp 1's last lane lands 93
    assert _hazard(differ).kind == "smem-data-race"


_NVVM = """\
llvm.mlir.global internal @val() {addr_space = 3 : i32, alignment = 4 : i64} : i32
llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %seven = arith.constant 7 : i32
  %val = llvm.mlir.addressof @val : !llvm.ptr<3>
  llvm.store %seven, %val : i32, !llvm.ptr<3>
  nvvm.barrier0
  %x = llvm.load %val : !llvm.ptr<3> -> i32
  %i = arith.extui %tid : i32 to i64
  %p = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
  llvm.store %x, %p : i32, !llvm.ptr<1>
  llvm.return
}
"""


def test_the_nvvm_level_shares_the_policy() -> None:
    """The same check for the NVVM level's stores (one implementation, races.py): three
    warps store 7 to @val unordered, then read it after the barrier."""
    out = np.zeros(96, np.int32)
    result = run_kernel(parse(_NVVM), "k", block=96, args={"out": out})
    assert result.outputs["out"].tolist() == [7] * 96
    assert result.report.same_value_races == 2
    with pytest.raises(KernelHazard) as caught:
        run_kernel(parse(_NVVM), "k", block=96, args={"out": out}, race_policy="strict")
    assert caught.value.kind == "smem-data-race"
    assert "@val+0" in caught.value.message


def test_an_exploration_counts_them_whatever_the_jobs() -> None:
    """One same-value race per schedule (the test above): 6 random schedules count 6, in one
    process and spread over two, and both name the race at the same store."""
    from xdsl_tmem.interpreter import Launch
    from xdsl_tmem.interpreter.explore import explore_random

    module = _module(_EQUAL + "\tbar.sync 0;\n\tld.shared.b32 %x, [v];\n")
    launch = Launch.create("k", block=WARPS * 32, args={"out_ptr": np.full(WARPS * 32, -1, np.int32)}, seed=3)
    one, two = (explore_random(module, launch, 6, jobs=jobs) for jobs in (1, 2))
    assert one.verdict == two.verdict == "SAFE"
    assert one.same_value_races == two.same_value_races == 6
    assert one.first_same_value is not None
    assert two.first_same_value is not None
    assert two.first_same_value.message == one.first_same_value.message


def test_write_records_name_every_member_of_a_shared_write() -> None:
    """A byte whose record is SHARED stands for its unordered same-value writes
    (`Shadow.writers`): the own-access checks of asynchronous copies (cp.async's landing, a
    bulk store's wait) must see each of them, and nothing of the writes they replaced."""
    from xdsl_tmem.interpreter.races import write_records
    from xdsl_tmem.interpreter.shadow import SHARED, Shadow, Writers

    shadow = Shadow(8, 0, host=False)
    write = shadow.own_write()
    write[:] = [11, 12, SHARED, 14, SHARED, 16, 17, 18]
    shadow.writers = {2: Writers([21, 22], (1,)), 4: Writers([41, 42, 43], (2, 3))}
    got = write_records(shadow, np.array([1, 2, 4], dtype=np.int64))
    assert sorted(got.tolist()) == sorted([12, SHARED, SHARED, 21, 22, 41, 42, 43])
    assert write_records(shadow, np.array([0, 3], dtype=np.int64)).tolist() == [11, 14]

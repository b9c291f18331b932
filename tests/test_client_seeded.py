"""Seeded bugs in the client GEMMs (`tests/clients/seeded.py`, issue 14).

Each mutation applies to every client GEMM that has its pattern (and says why where it has not),
changes what it says and nothing else (opcodes counted by `sidecar.instructions`, a reader of
its own), and every variant assembles with `ptxas -arch=sm_100a` and runs to its expected class
(`test_variant_runs_to_its_class`; where a first expectation and the model disagreed, seeded.py
says which was wrong and why, traced by hand).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from clients.seeded import EXPECTED, GEMMS, MUTATIONS, TX_EXCESS, PatternAbsent, variants
from clients.sidecar import instructions
from external import run_tool
from support import ROOT

from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard

CLIENTS = ROOT / "tests" / "clients"
PAIRS = [(k, m) for k in GEMMS for m in MUTATIONS]


def _source(kernel: str) -> str:
    return (CLIENTS / f"{kernel}.ptx").read_text()


def _first(ops: list[str], prefix: str) -> int:
    return next(i for i, op in enumerate(ops) if op.startswith(prefix))


def test_every_pair_has_an_expectation() -> None:
    assert set(EXPECTED) == set(PAIRS)
    # Issue 14's six classes, and each applies to at least one client GEMM.
    assert all(any(not EXPECTED[k, m].absent for k in GEMMS) for m in MUTATIONS)


@pytest.mark.parametrize(("kernel", "mutation"), PAIRS, ids=[f"{k}:{m}" for k, m in PAIRS])
def test_mutation_changes_only_its_step(kernel: str, mutation: str) -> None:
    source = _source(kernel)
    if EXPECTED[kernel, mutation].absent:
        with pytest.raises(PatternAbsent):
            MUTATIONS[mutation](source)
        return
    before, after = instructions(source), instructions(MUTATIONS[mutation](source))
    changed = Counter(after)
    changed.subtract(Counter(before))
    delta = {op: n for op, n in changed.items() if n}
    if mutation == "no-wait-ld":
        assert delta == {"tcgen05.wait::ld.sync.aligned": -before.count("tcgen05.wait::ld.sync.aligned")}
        assert "tcgen05.wait::ld.sync.aligned" not in after
    elif mutation == "no-accumulator-commit":
        (commit,) = delta
        assert commit.startswith("tcgen05.commit")
        assert delta[commit] == -1

        def after_last_mma(ops: list[str]) -> int:
            last = max(i for i, op in enumerate(ops) if op.startswith("tcgen05.mma"))
            return sum(op.startswith("tcgen05.commit") for op in ops[last:])

        # the accumulator's commit, after the K loop: the last one in program order
        assert after_last_mma(after) == after_last_mma(before) - 1
    elif mutation == "flipped-parity":
        # every client keeps the accumulator parity in a register (the immediate form: below)
        assert delta == {"xor.b32": 1}
    elif mutation == "no-bulk-wait-read":
        read = "cp.async.bulk.wait_group.read"
        assert delta == {read: -before.count(read)}
        assert "cp.async.bulk.wait_group" in after  # the plain wait at the end stays
    elif mutation == "expect-tx-overcount":
        assert set(delta) <= {"add.u32"}
        assert delta.get("add.u32", 0) in (0, before.count(_expect_tx(before)))
        _check_overcount(source, MUTATIONS[mutation](source))
    else:
        assert delta == {}, "a move keeps every instruction"
        assert after != before
        if mutation == "release-above-loads":
            # an arrive now sits between the accumulator wait and the first tcgen05.ld
            ld = _first(after, "tcgen05.ld")
            wait = max(i for i, op in enumerate(after[:ld]) if op.startswith("mbarrier.try_wait"))
            assert any(op.startswith("mbarrier.arrive.") and "expect_tx" not in op for op in after[wait:ld])
        else:  # dealloc-above-teardown: a dealloc directly follows no barrier any more
            for i, op in enumerate(after):
                if op.startswith("tcgen05.dealloc"):
                    assert not after[i - 1].startswith(("bar.sync", "barrier.sync"))


def _expect_tx(ops: list[str]) -> str:
    return next(op for op in ops if op.startswith("mbarrier.arrive.expect_tx"))


def _check_overcount(source: str, mutated: str) -> None:
    """Every expect_tx's byte count is the original plus TX_EXCESS, immediate or through the
    scoped add."""
    import re

    pattern = re.compile(r"mbarrier\.arrive\.expect_tx\S*\s+[^,]+,\s*\[[^\]]+\],\s*([^;]+);")
    old = pattern.findall(source)
    new = pattern.findall(mutated)
    assert len(old) == len(new) > 0
    for o, n in zip(old, new, strict=True):
        if o.strip().isdigit():
            assert int(n) == int(o) + TX_EXCESS
        else:
            assert n.strip() == "%seeded_tx"
            assert f"add.u32 %seeded_tx, {o.strip()}, {TX_EXCESS};" in mutated


VARIANTS = variants()
VARIANT_IDS = [f"{k}:{m}" for k, m in VARIANTS]


@pytest.mark.parametrize(("kernel", "mutation"), VARIANTS, ids=VARIANT_IDS)
def test_variant_assembles(kernel: str, mutation: str, ptxas: str, tmp_path: Path) -> None:
    source = tmp_path / "variant.ptx"
    source.write_text(MUTATIONS[mutation](_source(kernel)))
    run_tool([ptxas, "-arch=sm_100a", str(source), "-o", str(tmp_path / "variant.cubin")])


@pytest.mark.parametrize(("kernel", "mutation"), VARIANTS, ids=VARIANT_IDS)
def test_variant_runs_to_its_class(kernel: str, mutation: str) -> None:
    """The PTX level runs the variant, whole grid with its sidecar's launch (tensor maps,
    dynamic shared memory; `mojo`: the kernels have no tcgen05.fence, as
    tests/test_clients.py runs them), to the class `EXPECTED` states (a hazard class, a
    deadlock, or a clean run where the kernel does not rely on the broken step)."""
    from test_clients import _run_client  # pyright: ignore[reportPrivateUsage]

    expected = EXPECTED[kernel, mutation].classes
    try:
        _run_client(kernel, MUTATIONS[mutation](_source(kernel)), fence_policy="mojo")
        verdict = None
    except KernelHazard as e:
        verdict = e.kind
    except KernelDeadlock:
        verdict = "deadlock"
    assert verdict in expected if expected else verdict is None, (mutation, verdict)


# A hand-written epilogue: one accumulator wait with an immediate parity, a 32x32b load, its wait,
# an immediate expect_tx, the release and a guarded dealloc after the teardown barrier.
SNIPPET = """\
.version 8.8
.target sm_100a
.address_size 64
.visible .entry k()
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<2>;
\tmov.u32 %r1, %tid.x;
\tsetp.lt.u32 %p1, %r1, 32;
\tmbarrier.arrive.expect_tx.shared.b64 %rd1, [%r2], 4096;
\t{
\t.reg .pred P1;
\tLAB_WAIT:
\tmbarrier.try_wait.parity.shared.b64 P1, [%r3], 0, 10000000;
\t@!P1 bra.uni LAB_WAIT;
\t}
\ttcgen05.ld.sync.aligned.32x32b.x2.b32 {%r4, %r5}, [%r6];
\ttcgen05.wait::ld.sync.aligned;
\tsetp.eq.b32 %p2, %r1, 0;
\t@%p2 mbarrier.arrive.shared.b64 %rd1, [%r7];
\tbar.sync 0;
\t@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r8, 32;
\tret;
}
"""


def test_mutations_on_a_hand_written_epilogue() -> None:
    from clients.seeded import (
        dealloc_above_teardown,
        flip_accumulator_wait_parity,
        overcount_expect_tx,
        release_above_loads,
        remove_accumulator_commit,
        remove_wait_ld,
    )

    assert "[%r3], 1, 10000000;" in flip_accumulator_wait_parity(SNIPPET)  # immediate parity flipped in place
    assert f"[%r2], {4096 + TX_EXCESS};" in overcount_expect_tx(SNIPPET)
    assert "wait::ld" not in remove_wait_ld(SNIPPET)
    with pytest.raises(PatternAbsent, match=r"no tcgen05\.commit"):
        remove_accumulator_commit(SNIPPET)
    moved = release_above_loads(SNIPPET).splitlines()
    # the release and the setp computing its guard, in order, right above the load
    at = next(i for i, line in enumerate(moved) if "tcgen05.ld" in line)
    assert [line.strip() for line in moved[at - 2 : at]] == [
        "setp.eq.b32 %p2, %r1, 0;",
        "@%p2 mbarrier.arrive.shared.b64 %rd1, [%r7];",
    ]
    tail = [line.strip() for line in dealloc_above_teardown(SNIPPET).splitlines()[-4:]]
    assert tail == ["@%p1 tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r8, 32;", "bar.sync 0;", "ret;", "}"]

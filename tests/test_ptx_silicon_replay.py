"""The hand-written silicon programs (silicon/programs/, docs/silicon.md) replayed through
the PTX level of the machine model: each program, parsed from the file an H100 ran (its
sha256 checked against the fixture), launched with the fixture's grid, cluster, block and
inputs, must write the recorded words bit for bit (tests/silicon/README.md, "The replay
the PTX interpreter must pass"). The expectation is the silicon record, never our output."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from silicon_replay import PROGRAMS, buffer_bytes, load, output_words

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import KernelHazard, Launch, run_kernel
from xdsl_tmem.interpreter.explore import explore_exhaustive

_DTYPES = {"u32": np.uint32}


def _program_text(fixture: dict[str, Any]) -> str:
    text = (PROGRAMS / fixture["ptx"]).read_text()
    assert hashlib.sha256(text.encode()).hexdigest() == fixture["ptx_sha256"], "re-record the fixture"
    return text


def _replay(
    fixture: dict[str, Any], text: str, *, schedule: str = "rr", seed: int = 0
) -> dict[str, NDArray[np.uint32]]:
    """Run `text` with the fixture's launch and inputs; the output buffers as u32 words.
    A hazard or deadlock raises (the programs are race-free by construction)."""
    launch = fixture["launch"]
    assert launch["dynamic_smem"] == 0  # none of the hand-written programs uses any
    args: dict[str, Any] = {}
    for param in fixture["params"]:
        data = buffer_bytes(param["init"], param["nbytes"])
        args[param["name"]] = np.frombuffer(data, _DTYPES[param["dtype"]]).copy()
    module = load_ptx(text, fixture["ptx"], SourceMap())
    result = run_kernel(module, fixture["kernel"], block=tuple(launch["block"]), grid=tuple(launch["grid"]),
                        cluster=tuple(launch["cluster"]), args=args, schedule=schedule, seed=seed)  # fmt: skip
    return {name: np.asarray(result.outputs[name]).view(np.uint32) for name in fixture["outputs"]}


def _recorded(fixture: dict[str, Any], name: str = "out_ptr") -> NDArray[np.uint32]:
    return np.array(output_words(fixture, name), np.uint32)


def _assert_replays(name: str, *, random_seeds: int = 0) -> None:
    """Every recorded word, under rr and under `random_seeds` random schedules."""
    fixture = load(name)
    text = _program_text(fixture)
    for schedule, seed in [("rr", 0)] + [("random", s) for s in range(random_seeds)]:
        got = _replay(fixture, text, schedule=schedule, seed=seed)
        for buffer in fixture["outputs"]:
            np.testing.assert_array_equal(got[buffer], _recorded(fixture, buffer), err_msg=f"{schedule} seed {seed}")


def test_mbarrier_ring_replays_bit_for_bit() -> None:
    """The 4-stage full/empty ring, 24 iterations (each parity flips six times): the values
    consumed, the completed-wait counts and the final parity states, all 2048 words, under
    round-robin and random warp schedules, with no hazard."""
    _assert_replays("mbarrier_ring", random_seeds=3)


def test_warp_ops_replays_bit_for_bit() -> None:
    """elect, shfl (every mode, clamps, segments), vote, match, redux and activemask,
    converged, under divergence (each path naming its own membermask) and after lanes
    exited: all 2304 words, under rr and random schedules. The program runs as it ran on
    silicon (membermasks such as 0xffffffff are typed immediates)."""
    fixture = load("warp_ops")
    text = _program_text(fixture)
    for seed in range(3):
        got = _replay(fixture, text, schedule="random" if seed else "rr", seed=seed)["out_ptr"]
        recorded = _recorded(fixture)
        assert got.shape == recorded.shape == (2304,)
        np.testing.assert_array_equal(got, recorded, err_msg=f"seed {seed}")


def test_named_barriers_replays_bit_for_bit() -> None:
    """bar.red / barrier.red (.popc, .and, .or; negated predicates; over the CTA and over
    64-thread subsets), bar/barrier arrive/sync hand-offs with thread counts, a
    non-.aligned barrier.sync reached by each half of every warp from its own
    instruction, barrier.cta.sync.aligned: all 1536 words, under rr and random schedules.
    The file as run: its `st.shared.u32 [val1], 0xABCD0001` needs the front end to keep
    an immediate above 0x7fffffff a typed immediate (the `frontend` part of issue 13);
    `test_named_barriers_replays_with_signed_immediates` runs the same bits without it."""
    _assert_replays("named_barriers", random_seeds=3)


def test_named_barriers_replays_with_signed_immediates() -> None:
    """named_barriers with its two stored constants above 0x7fffffff written as the same
    32 bits in signed decimal (nothing compared depends on the spelling): every recorded
    word, rr and random schedules, no hazard."""
    fixture = load("named_barriers")
    text = _program_text(fixture)
    for constant in ("0xABCD0001", "0xABCD0002"):
        assert text.count(constant) == 1
        text = text.replace(constant, str(int(constant, 16) - (1 << 32)))
    for seed in range(4):
        got = _replay(fixture, text, schedule="random" if seed else "rr", seed=seed)["out_ptr"]
        np.testing.assert_array_equal(got, _recorded(fixture), err_msg=f"seed {seed}")


@pytest.mark.parametrize("name", ["cluster_dsmem_c2", "cluster_dsmem_c4"])
def test_cluster_dsmem_replays_bit_for_bit(name: str) -> None:
    """Clusters of 2 and 4: special registers, barrier.cluster, ld/st.shared::cluster
    through mapa, remote mbarrier arrives, `st.async ... complete_tx::bytes` into the next
    rank (its 4 bytes complete the destination's mbarrier phase), and
    `red.relaxed.cluster.shared::cluster.add.u32` by every thread onto rank 0's counter
    (64 N on silicon): all 16 words per thread, rr and random schedules."""
    _assert_replays(name, random_seeds=3)


@pytest.mark.parametrize("name", ["cluster_dsmem_c2", "cluster_dsmem_c4"])
def test_cluster_special_registers_replay_bit_for_bit(name: str) -> None:
    """The first 7 words of every thread of cluster_dsmem (the part the model runs today):
    %cluster_ctarank, %cluster_nctarank, %clusterid.x, %cluster_ctaid.x, %nclusterid.x,
    %cluster_nctaid.x and %is_explicit_cluster (1 on silicon for a launch with a cluster
    dimension), in clusters of 2 and 4. The program returns after them (one `ret` added)."""
    fixture = load(name)
    text = _program_text(fixture)
    store = "\tst.global.u32 [%o+24], %v;\n"
    assert text.count(store) == 1
    got = _replay(fixture, text.replace(store, store + "\tret;\n"))["out_ptr"].reshape(-1, 16)
    recorded = _recorded(fixture).reshape(-1, 16)
    assert got.shape == recorded.shape == (2 * fixture["launch"]["cluster"][0] * 64, 16)
    assert (recorded[:, 6] == 1).all()
    np.testing.assert_array_equal(got[:, :7], recorded[:, :7])


def test_bulk_copy_replays_bit_for_bit() -> None:
    _assert_replays("bulk_copy")


_ARRIVE_KERNEL = """\
.version 8.6
.target sm_90
.address_size 64
.shared .align 8 .b64 bar;
.visible .entry k(.param .u64 out_ptr)
{{
\t.reg .b64 %out, %s;
\t.reg .b32 %tx, %c;
\t.reg .pred %leader;
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\tsetp.eq.u32 %leader, %tx, 0;
\t@!%leader bra DONE;
\tmbarrier.init.shared::cta.b64 [bar], 2;
\t{arrive}
\tmbarrier.pending_count.b64 %c, %s;
\tst.global.u32 [%out], %c;
DONE:
\tret;
}}
"""


@pytest.mark.parametrize(
    ("arrive", "completes"),
    [("mbarrier.arrive.noComplete.shared::cta.b64 %s, [bar], 1;", False),
     ("mbarrier.arrive.noComplete.shared::cta.b64 %s, [bar], 2;", True),
     ("mbarrier.arrive_drop.noComplete.shared::cta.b64 %s, [bar], 1;", False)],
)  # fmt: skip
def test_arrive_nocomplete_that_completes_the_phase_is_a_hazard(arrive: str, completes: bool) -> None:
    """PTX ISA 9.0, mbarrier.arrive: with `.noComplete` the arrive must not complete the
    current phase (else the behaviour is undefined): the hazard
    `mbarrier-nocomplete-completes`. Without completing, the state's pending count is the
    count before the arrive (2, as mbarrier_phases recorded on an H100)."""
    module = load_ptx(_ARRIVE_KERNEL.format(arrive=arrive), "k.ptx", SourceMap())
    if not completes:
        out = run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(1, np.uint32)}).outputs["out_ptr"]
        assert out.tolist() == [2]
        return
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(1, np.uint32)})
    assert caught.value.kind == "mbarrier-nocomplete-completes"
    assert "completes phase 0 of mbarrier" in caught.value.message


_REDUX_KERNEL = """\
.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 in_ptr, .param .u64 out_ptr)
{{
\t.reg .b64 %in, %out, %t;
\t.reg .b32 %tx, %v, %d;
\tld.param.u64 %in, [in_ptr];
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %in, %in;
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\tmul.wide.u32 %t, %tx, 4;
\tadd.u64 %in, %in, %t;
\tadd.u64 %out, %out, %t;
\tld.global.u32 %v, [%in];
\tredux.sync.{op} %d, %v, -1;
\tst.global.u32 [%out], %d;
\tret;
}}
"""

_REDUX_OPS = ["add.u32", "add.s32", "min.u32", "max.u32", "min.s32", "max.s32", "and.b32", "or.b32", "xor.b32"]


def _redux_numpy(op: str, values: NDArray[np.uint32]) -> int:
    kind, ptype = op.split(".")
    if kind == "add":
        return int(values.astype(np.uint64).sum()) % (1 << 32)
    if kind in ("min", "max"):
        view = values.view(np.int32) if ptype == "s32" else values
        return int(view.min() if kind == "min" else view.max()) & 0xFFFFFFFF
    ufunc = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[kind]
    return int(ufunc.reduce(values))


@pytest.mark.parametrize("op", _REDUX_OPS)
def test_redux_sync_reduces_as_numpy(op: str) -> None:
    """PTX ISA 9.0, redux.sync: every member lane gets the reduction of `a` over the
    member lanes (`.add` modulo 2^32, `.min/.max` as unsigned or signed); numpy reduces
    the same 32 random words (signs and wraparound included)."""
    values = np.random.default_rng(13).integers(0, 1 << 32, 32, dtype=np.uint64).astype(np.uint32)
    module = load_ptx(_REDUX_KERNEL.format(op=op), "k.ptx", SourceMap())
    args = {"in_ptr": values, "out_ptr": np.zeros(32, np.uint32)}
    got = np.asarray(run_kernel(module, "k", block=32, args=args).outputs["out_ptr"]).view(np.uint32)
    expected = np.uint32(_redux_numpy(op, values))
    assert (got == expected).all(), (op, got[:2], expected)


@pytest.mark.parametrize("name", ["named_barriers", "cluster_dsmem_c2"])
def test_barrier_programs_are_safe_under_exhaustive_exploration(name: str) -> None:
    """tests/silicon/README.md: the hand-written programs are race-free by construction,
    so every interleaving at synchronisation points (divergent barrier arrivals, bar.red,
    red onto rank 0, st.async completing a remote phase) ends without a hazard or
    deadlock, with the same outputs. One cluster (exhaustive exploration runs one);
    named_barriers with its constants in signed decimal (see above)."""
    fixture = load(name)
    text = _program_text(fixture).replace("0xABCD0001", "-1412628479").replace("0xABCD0002", "-1412628478")
    launch = fixture["launch"]
    cluster = tuple(launch["cluster"])
    args = {p["name"]: np.zeros(p["nbytes"] // 4, np.uint32) for p in fixture["params"]}
    module = load_ptx(text, fixture["ptx"], SourceMap())
    result = explore_exhaustive(module, Launch.create(fixture["kernel"], block=tuple(launch["block"]), grid=cluster,
                                                      cluster=cluster, args=args))  # fmt: skip
    assert result.failure is None, result.failure
    assert result.complete
    assert result.explored > 1

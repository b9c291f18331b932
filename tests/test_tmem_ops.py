"""tmem ops built from Python: builders produce verifying IR, verifiers follow the spec.

Rules are restated from the spec: 16x256b moves 4 registers and 8 columns per `.x1`,
at most 128 registers (docs/ptx-nvvm.md §1.4); stage indices are below num_stages; the
cta_group 2 multicast mask is non-zero (docs/semantics.md §4.3, §6.1); full[i] of the
output ring is initialised to 1 (one commit per stage), empty[i] and the dealloc
barrier to cta_group * epilogue threads (docs/semantics.md §6.1, §9 item 5, from Mojo's
`compute_accum_barrier_counts`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import CLEAN, run_cli
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, llvm, test
from xdsl.dialects.builtin import Float32Type, IntegerAttr, ModuleOp, VectorType, f32, i1, i16, i32, i64
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects import tmem
from xdsl_tmem.dialects.utils import SHARED_PTR

STAGE = tmem.TmemStageType(2, 256, 1)
RING = tmem.OutputRingType(2, 256, 1)
ALLOC = tmem.AllocationType(1, 512)


def test_builders_make_a_verifying_producer_consumer_pair() -> None:
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        slot, bars = test.TestOp(result_types=[SHARED_PTR, SHARED_PTR]).results
        c0 = arith.ConstantOp(IntegerAttr(0, i32)).result
        alloc = tmem.AllocOp(slot, ALLOC).allocation
        ring = tmem.RingCreateOp(bars, alloc, RING).ring
        stage = tmem.AcquireForMmaOp(ring).stage
        leader = test.TestOp(result_types=[i1]).results[0]
        release = tmem.ReleaseFromMmaOp(ring, stage, leader)
        ring1 = release.new_ring
        body = Region(Block(arg_types=[STAGE]))
        with ImplicitBuilder(body) as (s,):
            loaded = tmem.LoadUpperOp(s, VectorType(f32, [16]), column=c0).result
            tmem.WaitLoadOp()
            tmem.ArriveEmptyOp(ring1, s)
            tmem.YieldOp(loaded)
        consumer = tmem.ConsumerOp(ring1, body, [VectorType(f32, [16])])
        tmem.StageFromAllocOp(alloc, c0, STAGE)
    module.verify()
    assert consumer.new_ring.type == RING
    assert [r.type for r in consumer.outs] == [VectorType(f32, [16])]
    assert release.leader is leader
    assert "tmem.output_ring.release_from_mma" in str(module)


def _load(repeat: int, count: int, column: int | None) -> ModuleOp:
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        stage = test.TestOp(result_types=[STAGE]).results[0]
        col = None if column is None else arith.ConstantOp(IntegerAttr(column, i32)).result
        tmem.LoadLowerOp(stage, VectorType(Float32Type(), [count]), column=col, repeat=repeat)
    return module


@given(st.integers(1, 130), st.integers(1, 130), st.one_of(st.none(), st.integers(0, 300)))
def test_load_rule(repeat: int, count: int, column: int | None) -> None:
    is_pow2 = repeat & (repeat - 1) == 0
    start = column or 0
    valid = is_pow2 and 4 * repeat <= 128 and count == 4 * repeat and start + 8 * repeat <= 256
    module = _load(repeat, count, column)
    if valid:
        module.verify()
    else:
        with pytest.raises(VerifyException, match=r"tmem\.tmem_stage\.load_lower: "):
            module.verify()


@given(st.integers(-2, 5))
def test_stage_index_rule(index: int) -> None:
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        base = test.TestOp(result_types=[i32]).results[0]
        idx = arith.ConstantOp(IntegerAttr(index, i32)).result
        tmem.StageCreateOp(base, idx, tmem.TmemStageType(3, 128, 2))
    if 0 <= index < 3:
        module.verify()
    else:
        with pytest.raises(VerifyException, match=f"stage index {index} out of range"):
            module.verify()


@given(st.integers(0, 0xFFFF), st.sampled_from([1, 2]), st.booleans())
def test_mask_rule(mask: int, cta_group: int, with_mask: bool) -> None:
    valid = (cta_group == 2) == with_mask and (not with_mask or mask != 0)
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        slot, bars, dbar = test.TestOp(result_types=[SHARED_PTR] * 3).results
        m = arith.ConstantOp(IntegerAttr(mask, i16)).result if with_mask else None
        tmem.MmaCreateOp(slot, bars, dbar, tmem.MmaWarpContextType(2, 256, cta_group, 32, 128, 512), m)
    if valid:
        module.verify()
    else:
        with pytest.raises(VerifyException, match="mma_complete_mask"):
            module.verify()


def test_context_fields_have_the_context_types() -> None:
    ctx_type = tmem.EpilogueWarpContextType(1, 128, 2, 64, 256, 256)
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        ctx = test.TestOp(result_types=[ctx_type]).results[0]
        ring = tmem.ContextOutputRingOp(ctx).result
        alloc = tmem.ContextTmemOp(ctx).result
        barrier = tmem.ContextDeallocBarrierOp(ctx).result
    module.verify()
    assert ring.type == tmem.OutputRingType(1, 128, 2)
    assert alloc.type == tmem.AllocationType(2, 256)
    assert barrier.type == tmem.DeallocBarrierType(2)
    assert ctx_type.sync_threads == 64 + 256


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([1, 2]),
    st.sampled_from([32, 128, 256]),
    st.sampled_from([1, 2, 3]),
    st.sampled_from([0, 0, 0, -1, 1, 96]),
    st.sampled_from([0, 0, 0, -1, 1, 96]),
    st.sampled_from(["same value", "same global", "other barriers"]),
)
def test_barrier_count_rule(
    cta_group: int, epilogue_threads: int, producers: int, consumer_delta: int, dealloc_delta: int, storage: str
) -> None:
    required = cta_group * epilogue_threads
    consumers, dealloc = required + consumer_delta, required + dealloc_delta
    known = storage != "other barriers"  # only a context on the same barriers fixes the count
    valid = producers == 1 and (not known or (consumers == required and dealloc == required))
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        llvm.GlobalOp(i64, "bars", "internal", addr_space=3)
        llvm.GlobalOp(i64, "dbar", "internal", addr_space=3)
        slot, other = test.TestOp(result_types=[SHARED_PTR] * 2).results
        bars = llvm.AddressOfOp("bars", SHARED_PTR).result
        dbar = llvm.AddressOfOp("dbar", SHARED_PTR).result
        ring_type = tmem.OutputRingType(2, 256, cta_group)
        counts = {"producer_arv_count": producers, "consumer_arv_count": consumers}
        tmem.RingInitBarriersOp.create(
            operands=[bars],
            properties={"ring_type": ring_type, **{k: IntegerAttr(v, i32) for k, v in counts.items()}},
        )
        tmem.DeallocBarrierInitOp.create(
            operands=[dbar],
            properties={"arrival_count": IntegerAttr(dealloc, i32), "barrier_type": tmem.DeallocBarrierType(cta_group)},
        )
        if storage == "same global":  # another `llvm.mlir.addressof` of the same globals
            bars, dbar = llvm.AddressOfOp("bars", SHARED_PTR).result, llvm.AddressOfOp("dbar", SHARED_PTR).result
        elif storage == "other barriers":
            bars, dbar = other, other
        mask = arith.ConstantOp(IntegerAttr(3, i16)).result if cta_group == 2 else None
        context_type = tmem.EpilogueWarpContextType(2, 256, cta_group, 32, epilogue_threads, 512)
        tmem.EpilogueCreateOp(slot, bars, dbar, context_type, mask)
    if valid:
        module.verify()
    else:
        with pytest.raises(VerifyException, match=r"tmem\.(output_ring|dealloc_barrier)\.init.*(count is|, but)"):
            module.verify()


@settings(max_examples=100, deadline=None)
@given(st.integers(-4, 12), st.sampled_from([8, 16, 32, 64]), st.integers(-64, 64), st.sampled_from([1, 2, 4, 8]))
def test_load_rule_sees_folded_columns(tile: int, tile_cols: int, offset: int, repeat: int) -> None:
    # col = tile * tile_cols + offset, built from arith ops as an unrolled sub-tile walk
    # writes it; the access covers 8 * repeat columns (16x256b) of a 256-column stage.
    column = tile * tile_cols + offset
    valid = 0 <= column and column + 8 * repeat <= 256
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        stage = test.TestOp(result_types=[STAGE]).results[0]
        t, w, o = (arith.ConstantOp(IntegerAttr(v, i32)).result for v in (tile, tile_cols, offset))
        col = arith.AddiOp(arith.MuliOp(t, w).result, o).result
        tmem.LoadUpperOp(stage, VectorType(f32, [4 * repeat]), column=col, repeat=repeat)
    if valid:
        module.verify()
    else:
        with pytest.raises(VerifyException, match=rf"column {column} \+ width {8 * repeat} .* leaves the stage"):
            module.verify()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("consumer_arv_count 128", "consumer_arv_count 127", "consumer_arv_count is 127, but"),
        ("producer_arv_count 1", "producer_arv_count 2", "producer_arv_count is 2, but"),
        ("arrival_count 128", "arrival_count 256", "arrival_count is 256, but"),
    ],
)
def test_wrong_barrier_counts_stop_the_run_before_it_starts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, old: str, new: str, message: str
) -> None:
    """The issue's kernels: matmul_cg1 with a miscounted barrier runs SAFE for a few tiles
    today; the verifier rejects it, located, with exit code 1."""
    example, launch = CLEAN[0]
    source = example.read_text()
    line = next(i for i, text in enumerate(source.splitlines(), 1) if old in text)
    path = tmp_path / "kernel.mlir"
    path.write_text(source.replace(old, new, 1))
    result = run_cli(capsys, str(path), *shlex.split(launch))
    assert result.code == 1
    assert f"kernel.mlir:{line}:" in result.err, result.err
    assert message in result.err

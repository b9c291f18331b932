"""A persistent, warp-specialised tcgen05 GEMM in CuTe DSL, shared by gemm_1cta.py and gemm_2cta.py.

c[M, N] (f32) = a[M, K] (f16) @ b[N, K]^T (f16), both operands K-major.

Warps: 0 = TMA producer (A/B ring, `PipelineTmaUmma`), 1 = MMA issuer (also allocates TMEM with
`TmemAllocator`), 2..5 = epilogue (TMEM -> registers -> global, accumulator ring
`PipelineUmmaAsync`). Each CTA (each CTA pair with cta_group 2) walks output tiles
`tile = cluster_id + i * clusters`, so CTAs do more than one tile and both rings wrap.
"""

import cute_build
import cutlass
import cutlass.cute as cute
import cutlass.pipeline as pipeline
import cutlass.utils.blackwell_helpers as sm100_utils
from cutlass.cute.nvgpu import cpasync, tcgen05
from cutlass.cute.runtime import make_fake_compact_tensor
from cutlass.memory import TmemAllocator

AB_STAGES = 2
ACC_STAGES = 2
TMA_WARP, MMA_WARP = 0, 1
EPILOGUE_WARPS = (2, 3, 4, 5)
THREADS = 32 * 6
TMEM_BARRIER_ID = 1


class Gemm:
    def __init__(self, cta_group: int, mma_tiler_mnk: tuple[int, int, int], ctas: int):
        self.cta_group = cta_group
        self.mma_tiler_mnk = mma_tiler_mnk
        self.ctas = ctas
        self.cluster_mn = (cta_group, 1)

    def make_tiled_mma(self) -> cute.TiledMma:
        group = tcgen05.CtaGroup.TWO if self.cta_group == 2 else tcgen05.CtaGroup.ONE
        return sm100_utils.make_trivial_tiled_mma(
            cutlass.Float16, cutlass.Float16, tcgen05.OperandMajorMode.K, tcgen05.OperandMajorMode.K,
            cutlass.Float32, group, self.mma_tiler_mnk[:2],
        )  # fmt: skip

    @cute.jit
    def __call__(self, a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
        # Built again inside the kernel rather than passed: a TiledMma argument becomes an opaque
        # by-value struct of run-time MMA fields, which a launcher could not fill from the PTX.
        tiled_mma = self.make_tiled_mma()
        cluster_layout_vmnk = cute.tiled_divide(cute.make_layout((*self.cluster_mn, 1)), (tiled_mma.thr_id.shape,))
        a_smem = sm100_utils.make_smem_layout_a(tiled_mma, self.mma_tiler_mnk, cutlass.Float16, AB_STAGES)
        b_smem = sm100_utils.make_smem_layout_b(tiled_mma, self.mma_tiler_mnk, cutlass.Float16, AB_STAGES)
        a_stage = cute.slice_(a_smem, (None, None, None, 0))
        b_stage = cute.slice_(b_smem, (None, None, None, 0))
        a_op = sm100_utils.cluster_shape_to_tma_atom_A(self.cluster_mn, tiled_mma.thr_id)
        b_op = sm100_utils.cluster_shape_to_tma_atom_B(self.cluster_mn, tiled_mma.thr_id)
        tma_a, tma_tensor_a = cute.nvgpu.make_tiled_tma_atom_A(
            a_op, a, a_stage, self.mma_tiler_mnk, tiled_mma, cluster_layout_vmnk.shape
        )
        tma_b, tma_tensor_b = cute.nvgpu.make_tiled_tma_atom_B(
            b_op, b, b_stage, self.mma_tiler_mnk, tiled_mma, cluster_layout_vmnk.shape
        )
        self.a_swizzle = cute_build.swizzle_of(a_smem)
        self.b_swizzle = cute_build.swizzle_of(b_smem)
        # Only the leader CTA arms the full barrier (PipelineTmaUmma.producer_acquire) and both CTAs'
        # loads complete on it, so one stage is the pair's bytes with cta_group 2.
        self.tx_bytes = (
            cute.size_in_bytes(cutlass.Float16, a_stage) + cute.size_in_bytes(cutlass.Float16, b_stage)
        ) * cute.size(tiled_mma.thr_id.shape)

        @cute.struct
        class Storage:
            ab_barriers: cute.struct.MemRange[cutlass.Int64, AB_STAGES * 2]
            acc_barriers: cute.struct.MemRange[cutlass.Int64, ACC_STAGES * 2]
            tmem_dealloc_barrier: cutlass.Int64
            tmem_holder: cutlass.Int32
            sA: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(a_smem.outer)], 1024]
            sB: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, cute.cosize(b_smem.outer)], 1024]

        self.storage = Storage
        self.smem_bytes = Storage.size_in_bytes()
        self.a_box = [
            cute.size(a_stage, mode=[0, 1]) * cute.size(a_stage, mode=[2]),
            cute.size(a_stage, mode=[0, 0]) * cute.size(a_stage, mode=[1]),
        ]
        self.b_box = [
            cute.size(b_stage, mode=[0, 1]) * cute.size(b_stage, mode=[2]),
            cute.size(b_stage, mode=[0, 0]) * cute.size(b_stage, mode=[1]),
        ]
        self.layouts = {
            "a_smem_stage": str(a_stage),
            "b_smem_stage": str(b_stage),
            "tma_a": str(a_op),
            "tma_b": str(b_op),
        }
        self.kernel(tma_a, tma_tensor_a, tma_b, tma_tensor_b, c, cluster_layout_vmnk, a_smem, b_smem).launch(
            grid=[self.ctas, 1, 1], block=[THREADS, 1, 1], cluster=[*self.cluster_mn, 1], smem=self.smem_bytes
        )

    @cute.kernel
    def kernel(
        self,
        tma_a: cute.CopyAtom,
        mA: cute.Tensor,
        tma_b: cute.CopyAtom,
        mB: cute.Tensor,
        mC: cute.Tensor,
        cluster_layout_vmnk: cute.Layout,
        a_smem: cute.ComposedLayout,
        b_smem: cute.ComposedLayout,
    ):
        tiled_mma = self.make_tiled_mma()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        cta_rank = cute.arch.make_warp_uniform(cute.arch.block_idx_in_cluster())
        cta_coord = cluster_layout_vmnk.get_flat_coord(cta_rank)
        mma_peer = bidx % cute.size(tiled_mma.thr_id.shape)
        is_leader = mma_peer == 0
        cluster_id = bidx // cute.size(cluster_layout_vmnk)
        clusters = self.ctas // cute.size(cluster_layout_vmnk)

        if warp == TMA_WARP:
            cpasync.prefetch_descriptor(tma_a)
            cpasync.prefetch_descriptor(tma_b)

        storage = cutlass.utils.SmemAllocator().allocate(self.storage)
        sA = storage.sA.get_tensor(a_smem.outer, swizzle=a_smem.inner)
        sB = storage.sB.get_tensor(b_smem.outer, swizzle=b_smem.inner)

        ab_ring = pipeline.PipelineTmaUmma.create(
            num_stages=AB_STAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            tx_count=self.tx_bytes,
            barrier_storage=storage.ab_barriers.data_ptr(),
            cta_layout_vmnk=cluster_layout_vmnk,
            defer_sync=True,
        )
        acc_ring = pipeline.PipelineUmmaAsync.create(
            num_stages=ACC_STAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32 * len(EPILOGUE_WARPS) * self.cta_group),
            barrier_storage=storage.acc_barriers.data_ptr(),
            cta_layout_vmnk=cluster_layout_vmnk,
            defer_sync=True,
        )
        tmem = TmemAllocator(
            storage.tmem_holder.ptr,
            barrier_for_retrieve=pipeline.NamedBarrier(
                barrier_id=TMEM_BARRIER_ID, num_threads=32 * (1 + len(EPILOGUE_WARPS))
            ),
            allocator_warp_id=MMA_WARP,
            is_two_cta=self.cta_group == 2,
            two_cta_tmem_dealloc_mbar_ptr=storage.tmem_dealloc_barrier.ptr,
        )
        pipeline.pipeline_init_arrive(cluster_shape_mn=self.cluster_mn, is_relaxed=True)

        # Global tiles: (BM, BK, m tiles, k tiles) and (BN, BK, n tiles, k tiles), partitioned for the MMA.
        gA = cute.local_tile(mA, cute.slice_(self.mma_tiler_mnk, (None, 0, None)), (None, None))
        gB = cute.local_tile(mB, cute.slice_(self.mma_tiler_mnk, (0, None, None)), (None, None))
        gC = cute.local_tile(mC, cute.slice_(self.mma_tiler_mnk, (None, None, 0)), (None, None))
        thr_mma = tiled_mma.get_slice(mma_peer)
        tCgA = thr_mma.partition_A(gA)
        tCgB = thr_mma.partition_B(gB)
        tCgC = thr_mma.partition_C(gC)
        a_cta_layout = cute.make_layout(cute.slice_(cluster_layout_vmnk, (0, 0, None, 0)).shape)
        b_cta_layout = cute.make_layout(cute.slice_(cluster_layout_vmnk, (0, None, 0, 0)).shape)
        tAsA, tAgA = cpasync.tma_partition(
            tma_a, cta_coord[2], a_cta_layout, cute.group_modes(sA, 0, 3), cute.group_modes(tCgA, 0, 3)
        )
        tBsB, tBgB = cpasync.tma_partition(
            tma_b, cta_coord[1], b_cta_layout, cute.group_modes(sB, 0, 3), cute.group_modes(tCgB, 0, 3)
        )
        tCrA = tiled_mma.make_fragment_A(sA)
        tCrB = tiled_mma.make_fragment_B(sB)
        acc_shape = tiled_mma.partition_shape_C(self.mma_tiler_mnk[:2])
        tCtAcc_fake = tiled_mma.make_fragment_C(cute.append(acc_shape, ACC_STAGES))
        tmem_cols = cutlass.utils.get_num_tmem_alloc_cols(tCtAcc_fake)

        tiles_m = cute.size(tCgC, mode=[3])
        tiles_n = cute.size(tCgC, mode=[4])
        tiles = tiles_m * tiles_n
        k_tiles = cute.size(tAgA, mode=[2])

        pipeline.pipeline_init_wait(cluster_shape_mn=self.cluster_mn)

        if warp == TMA_WARP:
            state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, AB_STAGES)
            for tile in cutlass.range(cluster_id, tiles, clusters):
                m_tile = tile // tiles_n
                n_tile = tile % tiles_n
                for k in cutlass.range(k_tiles):
                    ab_ring.producer_acquire(state)
                    barrier = ab_ring.producer_get_barrier(state)
                    cute.copy(tma_a, tAgA[(None, m_tile, k)], tAsA[(None, state.index)], tma_bar_ptr=barrier)
                    cute.copy(tma_b, tBgB[(None, n_tile, k)], tBsB[(None, state.index)], tma_bar_ptr=barrier)
                    state.advance()
            ab_ring.producer_tail(state)

        if warp == MMA_WARP:
            tmem.allocate(tmem_cols)
            tmem.wait_for_alloc()
            acc = cute.make_tensor(tmem.retrieve_ptr(cutlass.Float32), tCtAcc_fake.layout)
            ab_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, AB_STAGES)
            acc_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Producer, ACC_STAGES)
            for _tile in cutlass.range(cluster_id, tiles, clusters):
                if is_leader:
                    acc_ring.producer_acquire(acc_state)
                    tiled_mma.set(tcgen05.Field.ACCUMULATE, False)
                    for _k in cutlass.range(k_tiles):
                        ab_ring.consumer_wait(ab_state)
                        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):
                            cute.gemm(
                                tiled_mma,
                                acc[(None, None, None, acc_state.index)],
                                tCrA[(None, None, kb, ab_state.index)],
                                tCrB[(None, None, kb, ab_state.index)],
                                acc[(None, None, None, acc_state.index)],
                            )
                            tiled_mma.set(tcgen05.Field.ACCUMULATE, True)
                        ab_ring.consumer_release(ab_state)
                        ab_state.advance()
                    acc_ring.producer_commit(acc_state)
                acc_state.advance()
            if is_leader:
                acc_ring.producer_tail(acc_state)

        if warp >= EPILOGUE_WARPS[0]:
            tmem.wait_for_alloc()
            acc = cute.make_tensor(tmem.retrieve_ptr(cutlass.Float32), tCtAcc_fake.layout)
            # tcgen05.ld lets warp w reach TMEM lanes 32 * (w % 4) .. + 31 only (PTX ISA, "Tensor Memory
            # accessible by warps"): thread t of warps 2..5 takes lane t % 128, row t % 128 of the tile.
            epi_tidx = tidx % (32 * len(EPILOGUE_WARPS))
            load_op = cute.make_copy_atom(tcgen05.copy.Ld32x32bOp(tcgen05.copy.Repetition.x32), cutlass.Float32)
            acc_state = pipeline.make_pipeline_state(pipeline.PipelineUserType.Consumer, ACC_STAGES)
            for tile in cutlass.range(cluster_id, tiles, clusters):
                m_tile = tile // tiles_n
                n_tile = tile % tiles_n
                stage_acc = acc[((None, None), 0, 0, acc_state.index)]
                tmem_load = tcgen05.make_tmem_copy(load_op, stage_acc)
                thr_load = tmem_load.get_slice(epi_tidx)
                tTR_tAcc = thr_load.partition_S(stage_acc)
                tTR_gC = thr_load.partition_D(tCgC[((None, None), 0, 0, m_tile, n_tile)])
                tTR_rAcc = cute.make_rmem_tensor(tTR_gC.shape, cutlass.Float32)
                acc_ring.consumer_wait(acc_state)
                cute.copy(tmem_load, tTR_tAcc, tTR_rAcc)
                cute.arch.fence_view_async_tmem_load()
                acc_ring.consumer_release(acc_state)
                acc_state.advance()
                cute.autovec_copy(tTR_rAcc, tTR_gC)
        if warp == MMA_WARP:
            tmem.relinquish_alloc_permit()

        # Every epilogue warp is done with TMEM before the MMA warp's allocator frees it.
        cute.arch.sync_threads()
        if warp == MMA_WARP:
            tmem.free(tmem.retrieve_ptr(cutlass.Float32), tmem_cols)


def build(cta_group: int, m: int, n: int, k: int, tiler: tuple[int, int, int], ctas: int):
    a = make_fake_compact_tensor(cutlass.Float16, (m, k), stride_order=(1, 0), assumed_align=16)
    b = make_fake_compact_tensor(cutlass.Float16, (n, k), stride_order=(1, 0), assumed_align=16)
    c = make_fake_compact_tensor(cutlass.Float32, (m, n), stride_order=(1, 0), assumed_align=16)
    return Gemm(cta_group, tiler, ctas), [a, b, c]


def params(gemm: Gemm, m: int, n: int, k: int) -> list:
    how = (
        "element type, dims and strides from the fake tensors; box from the shared-memory stage layout "
        "{} and swizzle from its S<B,M,S> functor, both recorded at trace time. The CUtensorMap itself is "
        "encoded by the host code at run time and is not in the PTX"
    )
    return [
        cute_build.TmaDesc("a", cute_build.tensormap_2d("a", [m, k], gemm.a_box, gemm.a_swizzle,
                                                        how.format(gemm.layouts["a_smem_stage"]))),
        cute_build.TmaDesc("b", cute_build.tensormap_2d("b", [n, k], gemm.b_box, gemm.b_swizzle,
                                                        how.format(gemm.layouts["b_smem_stage"]))),
        cute_build.PtrStruct("c"),
    ]  # fmt: skip


def sidecar_fields(gemm: Gemm, m: int, n: int, k: int, source: str) -> dict:
    return {
        "source": source,
        "tensors": {
            "a": ("float16", [m, k], "rand:1"),
            "b": ("float16", [n, k], "rand:2"),
            "c": ("float32", [m, n], "zeros"),
        },
        "expected": {"c": "a.astype(np.float32) @ b.astype(np.float32).T"},
        "tolerance": {"c": 1e-3},
        "exercises": [
            f"tcgen05.mma cta_group::{gemm.cta_group}",
            "TMA A/B ring (PipelineTmaUmma, expect_tx)",
            "accumulator ring (PipelineUmmaAsync)",
            "TmemAllocator alloc/relinquish/dealloc",
            "persistent tile loop",
            "tcgen05.ld 32x32b epilogue",
            *(["cluster 2x1x1, cluster barriers, mapa, remote mbarrier arrive"] if gemm.cta_group == 2 else []),
        ],
        "compiler_facts": lambda: {"tx_bytes_per_stage": gemm.tx_bytes, "layouts": gemm.layouts},
        "unverified": [
            "tensormap: see each parameter's `from`; l2 promotion and the OOB fill mode are the DSL's "
            "defaults for make_tiled_tma_atom, not read from the encoded map",
        ],
    }

// A real warp-specialised Blackwell GEMM, cta_group 2, in the tmem dialect:
// C (M x N, f32, row-major) = A (M x K, f16, row-major) * B^T, B (N x K, f16, K-major).
//
// The CTA-pair protocol of Mojo's default SM100 structured kernel (docs/semantics.md §8.4) on
// clusters of 2 CTAs x 192 threads (warps 0-3 epilogue, warp 4 MMA, warp 5 TMA load),
// persistent over 256 x 256 output tiles; pair p = blockIdx.x / 2 takes tiles
// p, p + gridDim.x / 2, ... (tile t = (t mod M/256, t div M/256)). M and N must be
// multiples of 256, K of 64.
//   * Input pipeline (4 stages): each CTA holds its half of a K block, at the same
//     shared-memory offsets: A rows m0 + 128 * rank (64 x 128 box) and B rows
//     n0 + 128 * rank (64 x 128 box), 16 KiB each (stage s of A at smem + s * 16 KiB,
//     of B at smem + 64 KiB + s * 16 KiB). Both CTAs' load warps wait their own
//     empty[s] and issue their two boxes with .cta_group::2, completing on the
//     **leader's** full[s] (the mbarrier may be in the peer CTA of the destination: PTX
//     ISA, cp.async.bulk.tensor, .cta_group), as CuTe's 2-CTA GEMM does; only the
//     leader arms full[s]: arrive.expect_tx of cta_group * (A + B bytes) = 64 KiB, so
//     full[s] counts 1 arrival (docs/semantics.md §6.1). The leader's MMA warp waits full[s]
//     and commits to empty[s] of both CTAs (multicast 0b11), so each empty[s] counts 1.
//   * Only the leader CTA (even rank) issues MMAs: tcgen05.mma.cta_group::2 with M = 256
//     reads A and B from both CTAs' shared memory and writes 128 accumulator rows into
//     each CTA's TMEM; its tile commit multicasts to full[s] of both output rings.
//   * Each CTA's epilogue drains its own TMEM (thread i: row m0 + 128 * rank + i of C)
//     and arrives on the leader's accumulator empty[s] (count 2 * 128); every epilogue
//     thread signals both CTAs' dealloc barriers (count 256).
//   * Each load warp drains its input pipeline before exiting, so no multicast commit is
//     still on its way to a CTA that has left.
// Barrier inits are published to the peer with fence.mbarrier_init and a cluster
// barrier before any remote arrive can happen (docs/semantics.md §6.2).
module {
  // The operand stages live in dynamic shared memory (131072 bytes at launch: over the 48 KiB
  // a static .shared may take on every target; ptxas refuses it for sm_100f).
  llvm.mlir.global external @smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @input_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<8 x i64>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @tma_gemm_cg2(%tma_a: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
                          %tma_b: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
                          %c: !llvm.ptr<1>, %m: i32, %n: i32, %k: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 192, 1, 1>, nvvm.minctasm = 1 : i32, nvvm.cluster_dim = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c6 = arith.constant 6 : i32
    %c8 = arith.constant 8 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %c256 = arith.constant 256 : i32
    %pair_mask = arith.constant 3 : i16
    %slot = llvm.mlir.addressof @tmem_slot : !llvm.ptr<3>
    %in_bars = llvm.mlir.addressof @input_bars : !llvm.ptr<3>
    %bars = llvm.mlir.addressof @accum_bars : !llvm.ptr<3>
    %dbar = llvm.mlir.addressof @dealloc_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem : !llvm.ptr<3>
    %sb = llvm.getelementptr %sa[65536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 192> : i32
    %warp = arith.shrui %tid, %c5 : i32
    %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
    %odd = arith.andi %rank, %c1 : i32
    %is_leader_cta = arith.cmpi eq, %odd, %c0 : i32
    %leader_rank = arith.subi %rank, %odd : i32
    %bid = nvvm.read.ptx.sreg.ctaid.x : i32
    %nctas = nvvm.read.ptx.sreg.nctaid.x : i32
    %pair = arith.shrui %bid, %c1 : i32
    %npairs = arith.shrui %nctas, %c1 : i32
    %tiles_m = arith.shrui %m, %c8 : i32
    %tiles_n = arith.shrui %n, %c8 : i32
    %ntiles = arith.muli %tiles_m, %tiles_n : i32
    %nk = arith.shrui %k, %c6 : i32
    // This CTA's 128 rows of the pair's A and B halves, and of the accumulator.
    %half = arith.muli %rank, %c128 : i32

    // Barriers (one thread per CTA): input full[s] = 1 (the leader's arrive.expect_tx),
    // input empty[s] = 1 (the leader's multicast commit); accumulator full[i] = 1,
    // empty[i] = 2 * 128 (both epilogues, on the leader); dealloc = 2 * 128.
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      tmem.pipeline.init_barriers %in_bars producer_arv_count 1 consumer_arv_count 1 : !tmem.pipeline<4>
      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 256 : !tmem.output_ring<2, 256, 2>
      tmem.dealloc_barrier.init %dbar arrival_count 256 : !tmem.dealloc_barrier<2>
      nvvm.fence.mbarrier.init
    }
    // Publish the barrier inits to the whole cluster.
    nvvm.cluster.arrive {aligned}
    nvvm.cluster.wait {aligned}

    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    %is_load = arith.cmpi eq, %warp, %c5 : i32
    %is_epilogue = arith.cmpi ult, %warp, %c4 : i32

    scf.if %is_load {
      // ================= TMA load warp (both CTAs) =================
      %pair_tx = arith.constant 65536 : i32
      %stage_bytes = arith.constant 16384 : i32
      %elected = nvvm.elect.sync -> i1
      %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<4>
      %in_end = scf.for %t = %pair to %ntiles step %npairs iter_args(%in = %in0) -> (!tmem.pipeline<4>) : i32 {
        %tm = arith.remui %t, %tiles_m : i32
        %tn = arith.divui %t, %tiles_m : i32
        %tile_m0 = arith.muli %tm, %c256 : i32
        %tile_n0 = arith.muli %tn, %c256 : i32
        %m0 = arith.addi %tile_m0, %half : i32
        %n0 = arith.addi %tile_n0, %half : i32
        %in_next = scf.for %kb = %c0 to %nk step %c1 iter_args(%p = %in) -> (!tmem.pipeline<4>) : i32 {
          tmem.pipeline.wait_consumer %p : !tmem.pipeline<4>
          %s = tmem.pipeline.producer_stage %p : !tmem.pipeline<4>
          %full = tmem.pipeline.producer_mbar %p, %s : !tmem.pipeline<4>
          scf.if %elected {
            scf.if %is_leader_cta {
              nvvm.mbarrier.arrive.expect_tx %full, %pair_tx : !llvm.ptr<3>, i32
            }
            // The leader's full[s], as the shared::cluster address the copy signals.
            %leader_full7 = nvvm.mapa %full, %leader_rank : !llvm.ptr<3> -> !llvm.ptr<7>
            %leader_full_i = llvm.ptrtoint %leader_full7 : !llvm.ptr<7> to i32
            %leader_full = llvm.inttoptr %leader_full_i : i32 to !llvm.ptr<3>
            %k0 = arith.muli %kb, %c64 : i32
            %off = arith.muli %s, %stage_bytes : i32
            %a_dst = llvm.getelementptr %sa[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
            %b_dst = llvm.getelementptr %sb[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
            %a_dst7 = llvm.addrspacecast %a_dst : !llvm.ptr<3> to !llvm.ptr<7>
            %b_dst7 = llvm.addrspacecast %b_dst : !llvm.ptr<3> to !llvm.ptr<7>
            nvvm.cp.async.bulk.tensor.shared.cluster.global %a_dst7, %tma_a, %leader_full, box[%k0, %m0] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
            nvvm.cp.async.bulk.tensor.shared.cluster.global %b_dst7, %tma_b, %leader_full, box[%k0, %n0] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
          }
          %p2 = tmem.pipeline.producer_step %p : !tmem.pipeline<4>
          scf.yield %p2 : !tmem.pipeline<4>
        }
        scf.yield %in_next : !tmem.pipeline<4>
      }
      // Drain: every stage released by the leader's (multicast) commit before exiting.
      %drained = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %in_end) -> (!tmem.pipeline<4>) : i32 {
        tmem.pipeline.wait_consumer %p : !tmem.pipeline<4>
        %p2 = tmem.pipeline.producer_step %p : !tmem.pipeline<4>
        scf.yield %p2 : !tmem.pipeline<4>
      }
    }

    scf.if %is_mma {
      // ================= MMA warp (both CTAs allocate and deallocate) =================
      tmem.warp_context.mma %slot, %bars, %dbar mma_complete_mask %pair_mask : !tmem.mma_warp_context<2, 256, 2, 32, 128> {
      ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 2, 32, 128>):
        scf.if %is_leader_cta {
          // Descriptors: (addr >> 4) & 0x3fff | LBO 16 B (unused) | SBO 1024 B | 1 << 46 | 128B swizzle.
          %hi = arith.constant 0x4000404000010000 : i64
          %mask14 = arith.constant 16383 : i32
          %sa_i = llvm.ptrtoint %sa : !llvm.ptr<3> to i32
          %sb_i = llvm.ptrtoint %sb : !llvm.ptr<3> to i32
          %sa_s = arith.shrui %sa_i, %c4 : i32
          %sb_s = arith.shrui %sb_i, %c4 : i32
          %sa_m = arith.andi %sa_s, %mask14 : i32
          %sb_m = arith.andi %sb_s, %mask14 : i32
          %sa_w = arith.extui %sa_m : i32 to i64
          %sb_w = arith.extui %sb_m : i32 to i64
          %adesc0 = arith.ori %sa_w, %hi : i64
          %bdesc0 = arith.ori %sb_w, %hi : i64
          // Stage stride (16 KiB) and the 32-byte K step, in descriptor units of 16 bytes.
          %stage_units = arith.constant 1024 : i64
          %kstep = arith.constant 2 : i64
          // Instruction descriptor: D f32, A and B f16, K-major, N = 256, M = 256.
          %idesc = arith.constant 0x10400010 : i32
          %true = arith.constant true
          %leader = nvvm.elect.sync -> i1
          %ring0 = tmem.warp_context.output_ring %ctx : !tmem.mma_warp_context<2, 256, 2, 32, 128> -> !tmem.output_ring<2, 256, 2>
          %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<4>
          %ring_end, %in_end = scf.for %t = %pair to %ntiles step %npairs iter_args(%ring = %ring0, %in = %in0) -> (!tmem.output_ring<2, 256, 2>, !tmem.pipeline<4>) : i32 {
            %stage = tmem.output_ring.acquire_for_mma %ring : !tmem.output_ring<2, 256, 2> -> !tmem.tmem_stage<2, 256, 2>
            %acc = tmem.tmem_stage.tensor %stage : !tmem.tmem_stage<2, 256, 2> -> !tmem.tensor<256x256xf32, 2>
            %d = tmem.tensor.address %acc : !tmem.tensor<256x256xf32, 2>
            %in_next = scf.for %kb = %c0 to %nk step %c1 iter_args(%p = %in) -> (!tmem.pipeline<4>) : i32 {
              tmem.pipeline.wait_producer %p : !tmem.pipeline<4>
              %s = tmem.pipeline.consumer_stage %p : !tmem.pipeline<4>
              %empty = tmem.pipeline.consumer_mbar %p, %s : !tmem.pipeline<4>
              %s64 = arith.extui %s : i32 to i64
              %step = arith.muli %s64, %stage_units : i64
              %a0 = arith.addi %adesc0, %step : i64
              %b0 = arith.addi %bdesc0, %step : i64
              %a1 = arith.addi %a0, %kstep : i64
              %b1 = arith.addi %b0, %kstep : i64
              %a2 = arith.addi %a1, %kstep : i64
              %b2 = arith.addi %b1, %kstep : i64
              %a3 = arith.addi %a2, %kstep : i64
              %b3 = arith.addi %b2, %kstep : i64
              %accumulate = arith.cmpi ne, %kb, %c0 : i32
              scf.if %leader {
                nvvm.tcgen05.mma %d, %a0, %b0, %idesc, %accumulate {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                nvvm.tcgen05.mma %d, %a1, %b1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                nvvm.tcgen05.mma %d, %a2, %b2, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                nvvm.tcgen05.mma %d, %a3, %b3, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                // Free the stage in both CTAs once these MMAs have read it.
                nvvm.tcgen05.commit %empty, multicast_mask = %pair_mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
              }
              %p2 = tmem.pipeline.consumer_step %p : !tmem.pipeline<4>
              scf.yield %p2 : !tmem.pipeline<4>
            }
            // release_from_mma multicasts the tile's commit to both CTAs' full[s].
            %ring_next = tmem.output_ring.release_from_mma %ring, %stage leader %leader : !tmem.output_ring<2, 256, 2>, !tmem.tmem_stage<2, 256, 2>
            scf.yield %ring_next, %in_next : !tmem.output_ring<2, 256, 2>, !tmem.pipeline<4>
          }
        }
        tmem.yield
      }
    }

    scf.if %is_epilogue {
      // ================= epilogue warps 0-3 of each CTA =================
      tmem.warp_context.epilogue %slot, %bars, %dbar mma_complete_mask %pair_mask : !tmem.epilogue_warp_context<2, 256, 2, 32, 128> {
      ^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 2, 32, 128>):
        %n64 = arith.extui %n : i32 to i64
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.epilogue_warp_context<2, 256, 2, 32, 128> -> !tmem.output_ring<2, 256, 2>
        %ring_end = scf.for %t = %pair to %ntiles step %npairs iter_args(%ring = %ring0) -> (!tmem.output_ring<2, 256, 2>) : i32 {
          %next = tmem.output_ring.consumer %ring : !tmem.output_ring<2, 256, 2> {
          ^bb0(%stage: !tmem.tmem_stage<2, 256, 2>):
            %tm = arith.remui %t, %tiles_m : i32
            %tn = arith.divui %t, %tiles_m : i32
            %tile_m0 = arith.muli %tm, %c256 : i32
            %n0 = arith.muli %tn, %c256 : i32
            // This thread's row of C: m0 + 128 * rank + tid (TMEM lane tid of this CTA's half).
            %m0 = arith.addi %tile_m0, %half : i32
            %row = arith.addi %m0, %tid : i32
            %row64 = arith.extui %row : i32 to i64
            %n0_64 = arith.extui %n0 : i32 to i64
            %row_elt = arith.muli %row64, %n64 : i64
            %elt = arith.addi %row_elt, %n0_64 : i64
            %obase = llvm.getelementptr %c[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
            %col0 = tmem.tmem_stage.offset %stage : !tmem.tmem_stage<2, 256, 2>
            scf.for %j = %c0 to %c8 step %c1 : i32 {
              %col = arith.muli %j, %c32 : i32
              %taddr_i = arith.addi %col0, %col : i32
              %taddr = llvm.inttoptr %taddr_i : i32 to !llvm.ptr<6>
              %bits = nvvm.tcgen05.ld %taddr {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<32xi32>
              tmem.wait_load
              %vals = llvm.bitcast %bits : vector<32xi32> to vector<32xf32>
              %o = llvm.getelementptr %obase[%col] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
              llvm.store %vals, %o {alignment = 16 : i64} : vector<32xf32>, !llvm.ptr<1>
            }
            // cta_group 2: arrive on the leader CTA's empty[s].
            tmem.output_ring.arrive_empty %ring, %stage : !tmem.output_ring<2, 256, 2>, !tmem.tmem_stage<2, 256, 2>
            tmem.yield
          }
          scf.yield %next : !tmem.output_ring<2, 256, 2>
        }
        tmem.yield
      }
    }
    llvm.return
  }
}

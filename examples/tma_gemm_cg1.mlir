// A real warp-specialised Blackwell GEMM, cta_group 1, in the tmem dialect:
// C (M x N, f32, row-major) = A (M x K, f16, row-major) * B^T, B (N x K, f16, K-major).
//
// Mojo's default SM100 structured kernel (docs/semantics.md §8.3) on one CTA of 192 threads,
// persistent over the output tiles:
//   * warp 5:    the TMA load warp, producer of the input pipeline (4 stages). For each
//                64-wide K block it waits empty[s], and one elected lane arms full[s] with
//                arrive.expect_tx of the stage's bytes (A 16 KiB + B 32 KiB) and issues two
//                TMA box loads (A: 64 x 128, B: 64 x 256, 128B swizzle) that complete them.
//   * warp 4:    the MMA warp. It allocates 512 TMEM columns; per output tile it acquires
//                an accumulator stage, and per K block waits full[s], issues four
//                tcgen05.mma (K = 16 each; the first of the tile overwrites D) and commits
//                to empty[s], which frees the input stage once the MMAs have read it; the
//                tile's commit to the accumulator's full barrier ends the stage.
//   * warps 0-3: the epilogue. Thread i owns TMEM lane i = row i of the 128 x 256 tile;
//                it reads 32 columns at a time (tcgen05.ld 32x32b.x32) and stores them to
//                its row of C, then arrives on the accumulator stage's empty barrier.
// Tile t (t = blockIdx.x, blockIdx.x + gridDim.x, ...) of the M/128 x N/256 tiles is
// (t mod M/128, t div M/128). M must be a multiple of 128, N of 256 and K of 64.
//
// Shared memory: stage s of A at smem + s * 16 KiB, of B at smem + 64 KiB + s * 32 KiB, each
// 1024-byte aligned (the 128B swizzle repeats every 8 rows of 128 bytes). A box row is
// one row of 64 f16 (128 bytes) and the TMA swizzles it on the absolute address, which
// is the K-major SWIZZLE_128B canonical layout the descriptors name: SBO = 1024 bytes
// (8-row groups), LBO unused (1), swizzle code 2; the k-th MMA of a block starts k * 32
// bytes into the rows (docs/tcgen05_layouts.md §5-6).
module {
  // The operand stages live in dynamic shared memory (196608 bytes at launch: over the 48 KiB
  // a static .shared may take on every target; ptxas refuses it for sm_100f).
  llvm.mlir.global external @smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @input_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<8 x i64>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @tma_gemm_cg1(%tma_a: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
                          %tma_b: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
                          %c: !llvm.ptr<1>, %m: i32, %n: i32, %k: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 192, 1, 1>, nvvm.minctasm = 1 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c6 = arith.constant 6 : i32
    %c7 = arith.constant 7 : i32
    %c8 = arith.constant 8 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %c256 = arith.constant 256 : i32
    %slot = llvm.mlir.addressof @tmem_slot : !llvm.ptr<3>
    %in_bars = llvm.mlir.addressof @input_bars : !llvm.ptr<3>
    %bars = llvm.mlir.addressof @accum_bars : !llvm.ptr<3>
    %dbar = llvm.mlir.addressof @dealloc_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem : !llvm.ptr<3>
    %sb = llvm.getelementptr %sa[65536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 192> : i32
    %warp = arith.shrui %tid, %c5 : i32
    %bid = nvvm.read.ptx.sreg.ctaid.x : i32
    %nctas = nvvm.read.ptx.sreg.nctaid.x : i32
    %tiles_m = arith.shrui %m, %c7 : i32
    %tiles_n = arith.shrui %n, %c8 : i32
    %ntiles = arith.muli %tiles_m, %tiles_n : i32
    %nk = arith.shrui %k, %c6 : i32

    // Barriers (one thread): input full[s] = 1 (the producer's arrive.expect_tx; the TMA
    // supplies the bytes), input empty[s] = 1 (the MMA warp's commit); accumulator
    // full[i] = 1 (the tile's commit), empty[i] = 128 (every epilogue thread); dealloc 128.
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      tmem.pipeline.init_barriers %in_bars producer_arv_count 1 consumer_arv_count 1 : !tmem.pipeline<4>
      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
      tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<1>
      nvvm.fence.mbarrier.init
    }
    nvvm.barrier0

    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    %is_load = arith.cmpi eq, %warp, %c5 : i32
    %is_epilogue = arith.cmpi ult, %warp, %c4 : i32

    scf.if %is_load {
      // ================= TMA load warp: producer of the input pipeline =================
      %stage_tx = arith.constant 49152 : i32
      %a_stage_bytes = arith.constant 16384 : i32
      %b_stage_bytes = arith.constant 32768 : i32
      %elected = nvvm.elect.sync -> i1
      %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<4>
      %in_end = scf.for %t = %bid to %ntiles step %nctas iter_args(%in = %in0) -> (!tmem.pipeline<4>) : i32 {
        %tm = arith.remui %t, %tiles_m : i32
        %tn = arith.divui %t, %tiles_m : i32
        %m0 = arith.muli %tm, %c128 : i32
        %n0 = arith.muli %tn, %c256 : i32
        %in_next = scf.for %kb = %c0 to %nk step %c1 iter_args(%p = %in) -> (!tmem.pipeline<4>) : i32 {
          tmem.pipeline.wait_consumer %p : !tmem.pipeline<4>
          %s = tmem.pipeline.producer_stage %p : !tmem.pipeline<4>
          %full = tmem.pipeline.producer_mbar %p, %s : !tmem.pipeline<4>
          scf.if %elected {
            nvvm.mbarrier.arrive.expect_tx %full, %stage_tx : !llvm.ptr<3>, i32
            %k0 = arith.muli %kb, %c64 : i32
            %a_off = arith.muli %s, %a_stage_bytes : i32
            %b_off = arith.muli %s, %b_stage_bytes : i32
            %a_dst = llvm.getelementptr %sa[%a_off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
            %b_dst = llvm.getelementptr %sb[%b_off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
            %a_dst7 = llvm.addrspacecast %a_dst : !llvm.ptr<3> to !llvm.ptr<7>
            %b_dst7 = llvm.addrspacecast %b_dst : !llvm.ptr<3> to !llvm.ptr<7>
            nvvm.cp.async.bulk.tensor.shared.cluster.global %a_dst7, %tma_a, %full, box[%k0, %m0] : !llvm.ptr<7>, !llvm.ptr
            nvvm.cp.async.bulk.tensor.shared.cluster.global %b_dst7, %tma_b, %full, box[%k0, %n0] : !llvm.ptr<7>, !llvm.ptr
          }
          %p2 = tmem.pipeline.producer_step %p : !tmem.pipeline<4>
          scf.yield %p2 : !tmem.pipeline<4>
        }
        scf.yield %in_next : !tmem.pipeline<4>
      }
      // Drain (Mojo's load warp): wait until the MMA warp has released every stage, so no
      // commit is still in flight to this CTA's barriers when it exits.
      %drained = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %in_end) -> (!tmem.pipeline<4>) : i32 {
        tmem.pipeline.wait_consumer %p : !tmem.pipeline<4>
        %p2 = tmem.pipeline.producer_step %p : !tmem.pipeline<4>
        scf.yield %p2 : !tmem.pipeline<4>
      }
    }

    scf.if %is_mma {
      // ================= MMA warp =================
      tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
      ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 1, 32, 128>):
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
        // Stage strides and the 32-byte K step, in descriptor units of 16 bytes.
        %a_stage_units = arith.constant 1024 : i64
        %b_stage_units = arith.constant 2048 : i64
        %kstep = arith.constant 2 : i64
        // Instruction descriptor: D f32, A and B f16, K-major, N = 256, M = 128.
        %idesc = arith.constant 0x08400010 : i32
        %true = arith.constant true
        %leader = nvvm.elect.sync -> i1
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
        %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<4>
        %ring_end, %in_end = scf.for %t = %bid to %ntiles step %nctas iter_args(%ring = %ring0, %in = %in0) -> (!tmem.output_ring<2, 256, 1>, !tmem.pipeline<4>) : i32 {
          // acquire_for_mma; the tile's K loop; release_from_mma commits from %leader.
          %stage = tmem.output_ring.acquire_for_mma %ring : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
          %acc = tmem.tmem_stage.tensor %stage : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>
          %d = tmem.tensor.address %acc : !tmem.tensor<128x256xf32, 1>
          %in_next = scf.for %kb = %c0 to %nk step %c1 iter_args(%p = %in) -> (!tmem.pipeline<4>) : i32 {
            tmem.pipeline.wait_producer %p : !tmem.pipeline<4>
            %s = tmem.pipeline.consumer_stage %p : !tmem.pipeline<4>
            %empty = tmem.pipeline.consumer_mbar %p, %s : !tmem.pipeline<4>
            %s64 = arith.extui %s : i32 to i64
            %a_step = arith.muli %s64, %a_stage_units : i64
            %b_step = arith.muli %s64, %b_stage_units : i64
            %a0 = arith.addi %adesc0, %a_step : i64
            %b0 = arith.addi %bdesc0, %b_step : i64
            %a1 = arith.addi %a0, %kstep : i64
            %b1 = arith.addi %b0, %kstep : i64
            %a2 = arith.addi %a1, %kstep : i64
            %b2 = arith.addi %b1, %kstep : i64
            %a3 = arith.addi %a2, %kstep : i64
            %b3 = arith.addi %b2, %kstep : i64
            // The tile's first MMA overwrites the accumulator (D = A * B).
            %accumulate = arith.cmpi ne, %kb, %c0 : i32
            scf.if %leader {
              nvvm.tcgen05.mma %d, %a0, %b0, %idesc, %accumulate {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              nvvm.tcgen05.mma %d, %a1, %b1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              nvvm.tcgen05.mma %d, %a2, %b2, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              nvvm.tcgen05.mma %d, %a3, %b3, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              // Free the input stage once these MMAs have read it.
              nvvm.tcgen05.commit %empty : !llvm.ptr<3>
            }
            %p2 = tmem.pipeline.consumer_step %p : !tmem.pipeline<4>
            scf.yield %p2 : !tmem.pipeline<4>
          }
          %ring_next = tmem.output_ring.release_from_mma %ring, %stage leader %leader : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
          scf.yield %ring_next, %in_next : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<4>
        }
        tmem.yield
      }
    }

    scf.if %is_epilogue {
      // ================= epilogue warps 0-3 =================
      tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> {
      ^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
        %n64 = arith.extui %n : i32 to i64
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
        %ring_end = scf.for %t = %bid to %ntiles step %nctas iter_args(%ring = %ring0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
          // acquire_for_epilogue ... release_from_epilogue (which does not arrive).
          %next = tmem.output_ring.consumer %ring : !tmem.output_ring<2, 256, 1> {
          ^bb0(%stage: !tmem.tmem_stage<2, 256, 1>):
            %tm = arith.remui %t, %tiles_m : i32
            %tn = arith.divui %t, %tiles_m : i32
            %m0 = arith.muli %tm, %c128 : i32
            %n0 = arith.muli %tn, %c256 : i32
            // This thread's row of C: m0 + tid (TMEM lane tid of the M = 128 accumulator).
            %row = arith.addi %m0, %tid : i32
            %row64 = arith.extui %row : i32 to i64
            %n0_64 = arith.extui %n0 : i32 to i64
            %row_elt = arith.muli %row64, %n64 : i64
            %elt = arith.addi %row_elt, %n0_64 : i64
            %obase = llvm.getelementptr %c[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
            %col0 = tmem.tmem_stage.offset %stage : !tmem.tmem_stage<2, 256, 1>
            // Eight sub-tiles of 32 columns (32x32b.x32: register j of lane i = column j of lane i).
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
            // Every epilogue thread frees the stage after its last wait_load.
            tmem.output_ring.arrive_empty %ring, %stage : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
            tmem.yield
          }
          scf.yield %next : !tmem.output_ring<2, 256, 1>
        }
        tmem.yield
      }
    }
    llvm.return
  }
}

// Blockwise-FP8 matmul pipeline (docs/semantics.md §4.4, §8.6), cta_group 1, in the tmem dialect.
//
// Each K block has its own scale, so the accumulator cannot stay in TMEM across K:
// the MMA warp computes every K block into a fresh output stage (D = A * B, the
// `init_c` form) and the epilogue scales each partial product and accumulates it in
// registers. The output ring therefore turns over once per K block (Mojo's
// `MmaKStage` / `EpilogueKContext`), and the epilogue also takes part in the input
// pipeline: lane 0 of each epilogue warp arrives on the input stage's empty barrier
// once it has read the stage's scale (`arrive_input`).
//
// One CTA of 192 threads:
//   * warps 0-3: epilogue (TMEM lanes 32w..32w+31); named barrier 1 is MMA + epilogue
//     = 160 threads;
//   * warp 4:    MMA warp;
//   * warp 5:    load warp, the producer of the input pipeline. It stands in for TMA:
//                it copies a K block of A (128x32 e4m3), of B (64x32 e4m3) and its scale
//                (16 copies) into an input stage, fences the generic proxy against the
//                async proxy, and every lane arrives on full[s] (count 32).
// Input pipeline: 2 stages; empty[s] = 1 (the MMA commit) + 4 (one lane per epilogue warp).
// Output ring: 2 stages of 256 columns; the 128x64 f32 partial products use 64 of them.
//
// Global memory: a: [ntiles * nk] K blocks of 4096 B, b: [ntiles * nk] K blocks of
// 2048 B (both already in the no-swizzle K-major core-matrix order), scales: f32
// [ntiles * nk], out: f32, per tile and thread 64 values in register order.
module {
  llvm.mlir.global internal @smem_a() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @smem_b() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<4096 x i8>
  llvm.mlir.global internal @smem_scale() {addr_space = 3 : i32, alignment = 64 : i64} : !llvm.array<32 x f32>
  llvm.mlir.global internal @input_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @blockwise_fp8_cg1(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %scales: !llvm.ptr<1>,
                               %ntiles: i32, %nk: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 192, 1, 1>, nvvm.minctasm = 1 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c16 = arith.constant 16 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %c256 = arith.constant 256 : i32
    %slot = llvm.mlir.addressof @tmem_slot : !llvm.ptr<3>
    %in_bars = llvm.mlir.addressof @input_bars : !llvm.ptr<3>
    %bars = llvm.mlir.addressof @accum_bars : !llvm.ptr<3>
    %dbar = llvm.mlir.addressof @dealloc_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem_a : !llvm.ptr<3>
    %sb = llvm.mlir.addressof @smem_b : !llvm.ptr<3>
    %sscale = llvm.mlir.addressof @smem_scale : !llvm.ptr<3>

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 192> : i32
    %warp = arith.shrui %tid, %c5 : i32
    %lane = nvvm.read.ptx.sreg.laneid range <i32, 0, 32> : i32

    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      // Input: full = 32 (the load warp), empty = 1 (MMA commit) + 4 (epilogue warps).
      tmem.pipeline.init_barriers %in_bars producer_arv_count 32 consumer_arv_count 5 : !tmem.pipeline<2>
      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
      tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<1>
      nvvm.fence.mbarrier.init
    }
    nvvm.barrier0

    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    %is_load = arith.cmpi eq, %warp, %c5 : i32
    %is_epilogue = arith.cmpi ult, %warp, %c4 : i32
    %total = arith.muli %ntiles, %nk : i32

    scf.if %is_load {
      // ================= load warp: producer of the input pipeline =================
      %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<2>
      %in_end = scf.for %kb = %c0 to %total step %c1 iter_args(%in = %in0) -> (!tmem.pipeline<2>) : i32 {
        tmem.pipeline.wait_consumer %in : !tmem.pipeline<2>
        %s = tmem.pipeline.producer_stage %in : !tmem.pipeline<2>
        // A block: 4096 B = 256 x 16 B; B block: 2048 B = 128 x 16 B; 32 lanes each copy
        // every 32nd chunk.
        %a_chunk0 = arith.muli %kb, %c256 : i32
        %sa_chunk0 = arith.muli %s, %c256 : i32
        scf.for %i = %lane to %c256 step %c32 : i32 {
          %gi = arith.addi %a_chunk0, %i : i32
          %si = arith.addi %sa_chunk0, %i : i32
          %src = llvm.getelementptr %a[%gi] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
          %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
          %dst = llvm.getelementptr %sa[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
          llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
        }
        %b_chunk0 = arith.muli %kb, %c128 : i32
        %sb_chunk0 = arith.muli %s, %c128 : i32
        scf.for %i = %lane to %c128 step %c32 : i32 {
          %gi = arith.addi %b_chunk0, %i : i32
          %si = arith.addi %sb_chunk0, %i : i32
          %src = llvm.getelementptr %b[%gi] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
          %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
          %dst = llvm.getelementptr %sb[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
          llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
        }
        // The scale, replicated 16 times so the epilogue reads it as one vector.
        %copy = arith.cmpi ult, %lane, %c16 : i32
        scf.if %copy {
          %src = llvm.getelementptr %scales[%kb] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
          %scale = llvm.load %src : !llvm.ptr<1> -> f32
          %base = arith.muli %s, %c16 : i32
          %si = arith.addi %base, %lane : i32
          %dst = llvm.getelementptr %sscale[%si] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
          llvm.store %scale, %dst : f32, !llvm.ptr<3>
        }
        // The tensor core reads the stage through the async proxy.
        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
        %full = tmem.pipeline.producer_mbar %in, %s : !tmem.pipeline<2>
        nvvm.mbarrier.arrive %full : !llvm.ptr<3>
        %next = tmem.pipeline.producer_step %in : !tmem.pipeline<2>
        scf.yield %next : !tmem.pipeline<2>
      }
    }

    scf.if %is_mma {
      // ================= MMA warp =================
      tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
      ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 1, 32, 128>):
        // Descriptors: (addr >> 4) & 0x3fff | LBO 128 B | SBO 256 B | 1 << 46.
        %hi = arith.constant 0x0000401000080000 : i64
        %mask14 = arith.constant 16383 : i32
        %sa_i = llvm.ptrtoint %sa : !llvm.ptr<3> to i32
        %sb_i = llvm.ptrtoint %sb : !llvm.ptr<3> to i32
        // Instruction descriptor: kind::f8f6f4, A and B e4m3, D f32, K-major, N = 64, M = 128.
        %idesc = arith.constant 0x08100010 : i32
        %false = arith.constant false
        %c4096 = arith.constant 4096 : i32
        %c2048 = arith.constant 2048 : i32
        %leader = nvvm.elect.sync -> i1
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
        %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<2>
        %ring_end, %in_end = scf.for %kb = %c0 to %total step %c1 iter_args(%ring = %ring0, %in = %in0) -> (!tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>) : i32 {
          // Acquire an output stage for this K block; commit to full[s] on exit.
          %next_ring = tmem.warp_context.mma_per_k_stage %ctx, %ring leader %leader : !tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1> {
          ^bb0(%stage: !tmem.tmem_stage<2, 256, 1>):
            tmem.pipeline.wait_producer %in : !tmem.pipeline<2>
            %s = tmem.pipeline.consumer_stage %in : !tmem.pipeline<2>
            %a_off = arith.muli %s, %c4096 : i32
            %b_off = arith.muli %s, %c2048 : i32
            %a_addr = arith.addi %sa_i, %a_off : i32
            %b_addr = arith.addi %sb_i, %b_off : i32
            %a_s = arith.shrui %a_addr, %c4 : i32
            %b_s = arith.shrui %b_addr, %c4 : i32
            %a_m = arith.andi %a_s, %mask14 : i32
            %b_m = arith.andi %b_s, %mask14 : i32
            %a_w = arith.extui %a_m : i32 to i64
            %b_w = arith.extui %b_m : i32 to i64
            %adesc = arith.ori %a_w, %hi : i64
            %bdesc = arith.ori %b_w, %hi : i64
            %acc = tmem.tmem_stage.tensor %stage : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x64xf32, 1>
            %d = tmem.tensor.address %acc : !tmem.tensor<128x64xf32, 1>
            %in_empty = tmem.pipeline.consumer_mbar %in, %s : !tmem.pipeline<2>
            scf.if %leader {
              // A fresh partial product per K block: D = A * B.
              nvvm.tcgen05.mma %d, %adesc, %bdesc, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f8f6f4>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              // Free the input stage once the MMA has read it.
              nvvm.tcgen05.commit %in_empty : !llvm.ptr<3>
            }
            tmem.yield
          }
          %next_in = tmem.pipeline.consumer_step %in : !tmem.pipeline<2>
          scf.yield %next_ring, %next_in : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
        }
        tmem.yield
      }
    }

    scf.if %is_epilogue {
      // ================= epilogue warps 0-3 =================
      tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> {
      ^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
        %zero = arith.constant dense<0.0> : vector<16xf32>
        %first_lane = arith.cmpi eq, %lane, %c0 : i32
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
        %in0 = tmem.pipeline.create %in_bars : !tmem.pipeline<2>
        %ring_end, %in_end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %ring0, %in = %in0) -> (!tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>) : i32 {
          %r1, %i1, %u0, %l0, %u1, %l1 = scf.for %k = %c0 to %nk step %c1 iter_args(%rk = %ring, %ik = %in, %au0 = %zero, %al0 = %zero, %au1 = %zero, %al1 = %zero) -> (!tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) : i32 {
            // Wait full[s]; on exit: input consumer_step, arrive empty[s], release.
            %rk2, %ik2, %nu0, %nl0, %nu1, %nl1 = tmem.warp_context.epilogue_per_k_stage %ctx, %rk, %ik : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2> -> vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32> {
            ^bb0(%stage: !tmem.tmem_stage<2, 256, 1>, %in_stage: i32):
              %sp = llvm.getelementptr %sscale[%in_stage] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<16xf32>
              %vs = llvm.load %sp {alignment = 64 : i64} : !llvm.ptr<3> -> vector<16xf32>
              // arrive_input: one lane per warp releases the input stage.
              scf.if %first_lane {
                %in_empty = tmem.pipeline.consumer_mbar %ik, %in_stage : !tmem.pipeline<2>
                nvvm.mbarrier.arrive %in_empty : !llvm.ptr<3>
              }
              %pu0 = tmem.tmem_stage.load_upper %stage[%c0] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
              %pl0 = tmem.tmem_stage.load_lower %stage[%c0] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
              %pu1 = tmem.tmem_stage.load_upper %stage[%c32] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
              %pl1 = tmem.tmem_stage.load_lower %stage[%c32] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
              tmem.wait_load
              %su0 = arith.mulf %pu0, %vs : vector<16xf32>
              %sl0 = arith.mulf %pl0, %vs : vector<16xf32>
              %su1 = arith.mulf %pu1, %vs : vector<16xf32>
              %sl1 = arith.mulf %pl1, %vs : vector<16xf32>
              %xu0 = arith.addf %au0, %su0 : vector<16xf32>
              %xl0 = arith.addf %al0, %sl0 : vector<16xf32>
              %xu1 = arith.addf %au1, %su1 : vector<16xf32>
              %xl1 = arith.addf %al1, %sl1 : vector<16xf32>
              tmem.yield %xu0, %xl0, %xu1, %xl1 : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
            }
            scf.yield %rk2, %ik2, %nu0, %nl0, %nu1, %nl1 : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
          }
          // The tile is complete in registers: out[(t * 128 + tid) * 64 + 0..63].
          %row = arith.muli %t, %c128 : i32
          %thr = arith.addi %row, %tid : i32
          %elt = arith.muli %thr, %c64 : i32
          %o0 = llvm.getelementptr %out[%elt] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
          %o1 = llvm.getelementptr %o0[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
          %o2 = llvm.getelementptr %o0[32] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
          %o3 = llvm.getelementptr %o0[48] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
          llvm.store %u0, %o0 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
          llvm.store %l0, %o1 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
          llvm.store %u1, %o2 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
          llvm.store %l1, %o3 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
          scf.yield %r1, %i1 : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
        }
        tmem.yield
      }
    }
    llvm.return
  }
}

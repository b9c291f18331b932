// Hazard class: tmem-stale-accumulator
// Level: tmem
// Run: --kernel matmul_cg1 --block 160 --arg out=zeros:f32:4x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=4
// Exit: 3
// Lowered: tmem-stale-accumulator
//
// examples/matmul_cg1.mlir whose tile 2 has no MMA (K = 0): the MMA warp acquires stage 0
// for the second time and commits it without writing it, so the epilogue would read tile
// 0's accumulator again (docs/semantics.md §9.12). At the tmem level the commit of a stage no
// MMA with enable_input_d = 0 wrote since its acquisition is reported; after lower-tmem
// (no stages) the epilogue's load of values it already read before its last mbarrier
// wait is.
module {
  llvm.mlir.global internal @smem_a() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @smem_b() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<16384 x i8>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @matmul_cg1(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %ntiles: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>, nvvm.minctasm = 1 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c8 = arith.constant 8 : i32
    %c32 = arith.constant 32 : i32
    %c128 = arith.constant 128 : i32
    %c160 = arith.constant 160 : i32
    %c512 = arith.constant 512 : i32
    %c1024 = arith.constant 1024 : i32
    %slot = llvm.mlir.addressof @tmem_slot : !llvm.ptr<3>
    %bars = llvm.mlir.addressof @accum_bars : !llvm.ptr<3>
    %dbar = llvm.mlir.addressof @dealloc_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem_a : !llvm.ptr<3>
    %sb = llvm.mlir.addressof @smem_b : !llvm.ptr<3>

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
    %warp = arith.shrui %tid, %c5 : i32

    // Barriers (one thread): full[i] = 1 (the commit), empty[i] = 128 (every
    // epilogue thread), the dealloc barrier = 128.
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
      tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<1>
      nvvm.fence.mbarrier.init
    }

    // Operand tiles: every thread copies 16-byte chunks of A and B.
    scf.for %i = %tid to %c512 step %c160 : i32 {
      %src = llvm.getelementptr %a[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst = llvm.getelementptr %sa[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    scf.for %i = %tid to %c1024 step %c160 : i32 {
      %src = llvm.getelementptr %b[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst = llvm.getelementptr %sb[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    // The tensor core reads shared memory through the async proxy.
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0

    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    scf.if %is_mma {
      // ================= MMA warp =================
      tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
      ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 1, 32, 128>):
        // Shared-memory descriptors: (addr >> 4) & 0x3fff | LBO 128 B | SBO 512 B | 1 << 46.
        %hi = arith.constant 0x0000402000080000 : i64
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
        %kstep = arith.constant 16 : i64
        %adesc1 = arith.addi %adesc0, %kstep : i64
        %bdesc1 = arith.addi %bdesc0, %kstep : i64
        // Instruction descriptor: D f32, A and B f16, K-major, N = 256, M = 128.
        %idesc = arith.constant 0x08400010 : i32
        %false = arith.constant false
        %true = arith.constant true
        %leader = nvvm.elect.sync -> i1
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
        %ring_end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %ring0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
          // acquire_for_mma; the MMAs; release_from_mma commits from %leader.
          %next = tmem.output_ring.producer %ring leader %leader : !tmem.output_ring<2, 256, 1> {
          ^bb0(%stage: !tmem.tmem_stage<2, 256, 1>):
            %acc = tmem.tmem_stage.tensor %stage : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>
            %d = tmem.tensor.address %acc : !tmem.tensor<128x256xf32, 1>
            %c2 = arith.constant 2 : i32
            %k0 = arith.cmpi eq, %t, %c2 : i32
            %has_k = arith.xori %k0, %true : i1
            %issue = arith.andi %leader, %has_k : i1
            scf.if %issue {
              // The first MMA of a tile overwrites the accumulator (D = A * B).
              nvvm.tcgen05.mma %d, %adesc0, %bdesc0, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              nvvm.tcgen05.mma %d, %adesc1, %bdesc1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
            }
            tmem.yield
          }
          scf.yield %next : !tmem.output_ring<2, 256, 1>
        }
        tmem.yield
      }
    } else {
      // ================= epilogue warps 0-3 =================
      tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> {
      ^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
        %ring_end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %ring0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
          // acquire_for_epilogue ... release_from_epilogue (which does not arrive).
          %next = tmem.output_ring.consumer %ring : !tmem.output_ring<2, 256, 1> {
          ^bb0(%stage: !tmem.tmem_stage<2, 256, 1>):
            %row = arith.muli %t, %c128 : i32
            %thr = arith.addi %row, %tid : i32
            %thr64 = arith.extui %thr : i32 to i64
            %c256_64 = arith.constant 256 : i64
            %elt = arith.muli %thr64, %c256_64 : i64
            %obase = llvm.getelementptr %out[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
            // Eight sub-tiles of 32 columns: rows 0-15 and 16-31 of this warp's quarter.
            scf.for %j = %c0 to %c8 step %c1 : i32 {
              %col = arith.muli %j, %c32 : i32
              %upper = tmem.tmem_stage.load_upper %stage[%col] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
              %lower = tmem.tmem_stage.load_lower %stage[%col] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
              tmem.wait_load
              %o0 = llvm.getelementptr %obase[%col] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
              %o1 = llvm.getelementptr %o0[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
              llvm.store %upper, %o0 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
              llvm.store %lower, %o1 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
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

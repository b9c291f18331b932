// A warp-specialised Blackwell matmul pipeline, cta_group 2, in the tmem dialect.
//
// The CTA-pair protocol of Mojo's default SM100 structured kernel (docs/semantics.md
// §8.4) on a cluster of 2 CTAs x 160 threads (warps 0-3 epilogue, warp 4 MMA):
//   * both CTAs allocate 512 TMEM columns with cta_group::2 and publish the
//     address on their own named barrier 1;
//   * only the leader CTA (even rank) runs the MMA tile loop. Its
//     tcgen05.mma.cta_group::2 (M = 256) writes 128 rows of the accumulator into
//     each CTA's TMEM, and its commit multicasts to full[s] of both CTAs
//     (mma_complete_mask = 0b11);
//   * each CTA's epilogue waits its own full[s], drains its own TMEM and arrives
//     on the leader's empty[s]: 256 arrivals per stage (init count 2 * 128);
//   * every epilogue thread signals both CTAs' dealloc barriers (count 256), so
//     each MMA warp deallocates only after both epilogues are done.
// Barrier inits are published to the peer with fence.mbarrier_init and a cluster
// barrier before any remote arrive can happen (docs/semantics.md §6.2).
module {
  llvm.mlir.global internal @smem_a() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @smem_b() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @matmul_cg2(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %ntiles: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>, nvvm.minctasm = 1 : i32, nvvm.cluster_dim = array<i32: 2, 1, 1>} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c8 = arith.constant 8 : i32
    %c32 = arith.constant 32 : i32
    %c128 = arith.constant 128 : i32
    %c160 = arith.constant 160 : i32
    %c512 = arith.constant 512 : i32
    %pair = arith.constant 3 : i16
    %slot = llvm.mlir.addressof @tmem_slot : !llvm.ptr<3>
    %bars = llvm.mlir.addressof @accum_bars : !llvm.ptr<3>
    %dbar = llvm.mlir.addressof @dealloc_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem_a : !llvm.ptr<3>
    %sb = llvm.mlir.addressof @smem_b : !llvm.ptr<3>

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
    %warp = arith.shrui %tid, %c5 : i32
    %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
    %odd = arith.andi %rank, %c1 : i32
    %is_leader_cta = arith.cmpi eq, %odd, %c0 : i32

    // Barriers (one thread per CTA): full[i] = 1 (the leader's multicast commit),
    // empty[i] = 2 * 128 (both epilogues, on the leader), dealloc = 2 * 128.
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 256 : !tmem.output_ring<2, 256, 2>
      tmem.dealloc_barrier.init %dbar arrival_count 256 : !tmem.dealloc_barrier<2>
      nvvm.fence.mbarrier.init
    }

    // Each CTA holds its half of the operands: A rows (128x32 f16) and B rows
    // (128 of the 256 N rows, 128x32 f16), at the same shared-memory offset.
    %cta_off = arith.muli %rank, %c512 : i32
    scf.for %i = %tid to %c512 step %c160 : i32 {
      %gi = arith.addi %i, %cta_off : i32
      %src = llvm.getelementptr %a[%gi] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst = llvm.getelementptr %sa[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
      %srcb = llvm.getelementptr %b[%gi] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %vb = llvm.load %srcb {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dstb = llvm.getelementptr %sb[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %vb, %dstb {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    // Publish barrier inits and operands to the whole cluster.
    nvvm.cluster.arrive {aligned}
    nvvm.cluster.wait {aligned}

    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    scf.if %is_mma {
      // ================= MMA warp (both CTAs allocate and deallocate) =================
      tmem.warp_context.mma %slot, %bars, %dbar mma_complete_mask %pair : !tmem.mma_warp_context<2, 256, 2, 32, 128> {
      ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 2, 32, 128>):
        scf.if %is_leader_cta {
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
          // Instruction descriptor: D f32, A and B f16, K-major, N = 256, M = 256.
          %idesc = arith.constant 0x10400010 : i32
          %false = arith.constant false
          %true = arith.constant true
          %leader = nvvm.elect.sync -> i1
          %ring0 = tmem.warp_context.output_ring %ctx : !tmem.mma_warp_context<2, 256, 2, 32, 128> -> !tmem.output_ring<2, 256, 2>
          %ring_end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %ring0) -> (!tmem.output_ring<2, 256, 2>) : i32 {
            // release_from_mma multicasts the commit to both CTAs' full[s].
            %next = tmem.output_ring.producer %ring leader %leader : !tmem.output_ring<2, 256, 2> {
            ^bb0(%stage: !tmem.tmem_stage<2, 256, 2>):
              %acc = tmem.tmem_stage.tensor %stage : !tmem.tmem_stage<2, 256, 2> -> !tmem.tensor<256x256xf32, 2>
              %d = tmem.tensor.address %acc : !tmem.tensor<256x256xf32, 2>
              scf.if %leader {
                nvvm.tcgen05.mma %d, %adesc0, %bdesc0, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
                nvvm.tcgen05.mma %d, %adesc1, %bdesc1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
              }
              tmem.yield
            }
            scf.yield %next : !tmem.output_ring<2, 256, 2>
          }
        }
        tmem.yield
      }
    } else {
      // ================= epilogue warps 0-3 of each CTA =================
      tmem.warp_context.epilogue %slot, %bars, %dbar mma_complete_mask %pair : !tmem.epilogue_warp_context<2, 256, 2, 32, 128> {
      ^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 2, 32, 128>):
        %ring0 = tmem.warp_context.output_ring %ctx : !tmem.epilogue_warp_context<2, 256, 2, 32, 128> -> !tmem.output_ring<2, 256, 2>
        %ring_end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %ring0) -> (!tmem.output_ring<2, 256, 2>) : i32 {
          %next = tmem.output_ring.consumer %ring : !tmem.output_ring<2, 256, 2> {
          ^bb0(%stage: !tmem.tmem_stage<2, 256, 2>):
            // Output row of this thread: t * 256 + rank * 128 + tid.
            %c256 = arith.constant 256 : i32
            %tile_row = arith.muli %t, %c256 : i32
            %cta_row = arith.muli %rank, %c128 : i32
            %row1 = arith.addi %tile_row, %cta_row : i32
            %row = arith.addi %row1, %tid : i32
            %row64 = arith.extui %row : i32 to i64
            %c256_64 = arith.constant 256 : i64
            %elt = arith.muli %row64, %c256_64 : i64
            %obase = llvm.getelementptr %out[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
            scf.for %j = %c0 to %c8 step %c1 : i32 {
              %col = arith.muli %j, %c32 : i32
              %upper = tmem.tmem_stage.load_upper %stage[%col] : !tmem.tmem_stage<2, 256, 2> -> vector<16xf32>
              %lower = tmem.tmem_stage.load_lower %stage[%col] : !tmem.tmem_stage<2, 256, 2> -> vector<16xf32>
              tmem.wait_load
              %o0 = llvm.getelementptr %obase[%col] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
              %o1 = llvm.getelementptr %o0[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
              llvm.store %upper, %o0 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
              llvm.store %lower, %o1 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
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

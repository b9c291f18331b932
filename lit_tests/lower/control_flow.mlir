// Every tmem type carried through scf.if, scf.for and scf.while (with scf.condition),
// in a complete kernel: examples/matmul_cg1.mlir with its region ops written out and
// its state threaded through control flow. tests/test_lowering.py runs it against
// numpy at the tmem level and lowered, and through mlir-opt-22, llc-22 and ptxas.
//
// RUN: xdsl-tmem-opt %s -p lower-tmem | filecheck %s
// RUN: xdsl-tmem-run %s --kernel control_flow_cg1 --block 160 --arg out=zeros:f32:3x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=3 -p lower-tmem --validate-lowering | filecheck %s --check-prefix=VALIDATE
//
// Each of the eight tmem types goes through each of scf.if, scf.for and scf.while:
// the tile loops (scf.while in the MMA warp, scf.for in the epilogue) carry rings,
// the allocation, the dealloc barrier and a pipeline; the rest goes through scf.if
// on a run-time condition and one-trip loops.
//
// Each carried value becomes its lowered values (docs/dialect.md, "Values").
// CHECK-LABEL: llvm.func @control_flow_cg1
// The MMA context through scf.if: allocation; ring barriers, TMEM base, producer
// (stage 0, phase 1), consumer (0, 0); dealloc barrier.
// CHECK:      %[[ALLOC:[0-9]+]] = llvm.load %slot : !llvm.ptr<3> -> i32
// CHECK:      scf.if %any -> (i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>) {
// CHECK-NEXT:   scf.yield %[[ALLOC]], %bars, %[[ALLOC]], %c0, %c1, %c0, %c0, %dbar
// The tile loop carries i32 t, the ring (6 values), the allocation and the dealloc barrier.
// CHECK:      %{{.*}}, %[[A_END:[0-9]+]], %[[D_END:[0-9]+]] = scf.while (%t = %c0, {{.*}}) : (i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, i32, !llvm.ptr<3>) -> (i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, i32, !llvm.ptr<3>) {
// CHECK-NEXT:   %go = arith.cmpi slt, %t, %ntiles : i32
// CHECK-NEXT:   scf.condition(%go) %t, {{(%[0-9]+, )+}}%{{[0-9]+}} : i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, i32, !llvm.ptr<3>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %{{.*}}: !llvm.ptr<3>, {{(%[0-9]+: i32, )+}}%{{[0-9]+}}: !llvm.ptr<3>):
// The stage (base, index) and the tensor (column address) through scf.if, then
// scf.while; the MMA's address and the commit's barrier index come out of the while.
// CHECK:      %[[SB:[0-9]+]], %[[SI:[0-9]+]], %[[SC:[0-9]+]] = scf.if %any -> (i32, i32, i32) {
// CHECK:      %{{.*}}, %{{[0-9]+}}, %[[WI:[0-9]+]], %[[WC:[0-9]+]] = scf.while (%{{.*}} = %c0, %{{[0-9]+}} = %[[SB]], %{{[0-9]+}} = %[[SI]], %{{[0-9]+}} = %[[SC]]) : (i32, i32, i32, i32) -> (i32, i32, i32, i32) {
// CHECK:      %dptr = llvm.inttoptr %[[WC]] : i32 to !llvm.ptr<6>
// CHECK:      llvm.getelementptr %{{[0-9]+}}[%[[WI]]]
// CHECK-NEXT: scf.if %leader {
// CHECK-NEXT:   nvvm.tcgen05.commit
// CHECK:      scf.yield %t1, {{(%[0-9]+, )+}}%{{[0-9]+}} : i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, i32, !llvm.ptr<3>
// The allocation and the dealloc barrier leave the tile loop through scf.if (the
// one-trip scf.for after it is folded away) into complete_dealloc.
// CHECK:      %[[A:[0-9]+]], %[[D:[0-9]+]] = scf.if %any -> (i32, !llvm.ptr<3>) {
// CHECK-NEXT:   scf.yield %[[A_END]], %[[D_END]] : i32, !llvm.ptr<3>
// CHECK:      nvvm.mbarrier.try_wait.parity %[[D]], %c0, %c0
// CHECK:      llvm.inttoptr %[[A]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.dealloc
// The epilogue context through scf.if and scf.while (8 values each); the ring and
// the pipeline (6 + 5 values) through scf.if and scf.while.
// CHECK:      scf.if %any -> (i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>) {
// CHECK:      scf.while ({{.*}}) : (i32, i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>) -> (i32, i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>) {
// CHECK:      scf.if %any -> (!llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>, i32, i32, i32, i32) {
// CHECK:      scf.while ({{.*}}) : (i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>, i32, i32, i32, i32) -> (i32, !llvm.ptr<3>, i32, i32, i32, i32, i32, !llvm.ptr<3>, i32, i32, i32, i32) {
// The epilogue's loop carries only what advances: the output ring's consumer
// (stage, phase) and the pipeline's.
// CHECK:      scf.for %{{.*}} = %c0 to %ntiles step %c1 iter_args({{.*}}) -> (i32, i32, i32, i32) : i32 {
// CHECK-NOT:  tmem.
//
// VALIDATE:      validate-lowering: input: ran to completion
// VALIDATE-NEXT: validate-lowering: after lower-tmem: ran to completion, outputs and verdict unchanged
module {
  llvm.mlir.global internal @smem_a() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @smem_b() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<16384 x i8>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @shadow_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @control_flow_cg1(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %ntiles: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>} {
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
    %shadow = llvm.mlir.addressof @shadow_bars : !llvm.ptr<3>
    %dbar = llvm.mlir.addressof @dealloc_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem_a : !llvm.ptr<3>
    %sb = llvm.mlir.addressof @smem_b : !llvm.ptr<3>
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
    %warp = arith.shrui %tid, %c5 : i32
    // Warp-uniform and true at run time, but not a constant the lowering could fold.
    %any = arith.cmpi sgt, %ntiles, %c0 : i32

    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
      tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<1>
      nvvm.fence.mbarrier.init
    }
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
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0

    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    scf.if %is_mma {
      // ================= MMA warp =================
      %ctx0 = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128>
      tmem.warp_context.mma_enter %ctx0 : !tmem.mma_warp_context<2, 256, 1, 32, 128>
      %ctx = scf.if %any -> (!tmem.mma_warp_context<2, 256, 1, 32, 128>) {
        scf.yield %ctx0 : !tmem.mma_warp_context<2, 256, 1, 32, 128>
      } else {
        scf.yield %ctx0 : !tmem.mma_warp_context<2, 256, 1, 32, 128>
      }
      // ... and through a one-trip scf.for and scf.while.
      %ctx_f = scf.for %i0 = %c0 to %c1 step %c1 iter_args(%x0 = %ctx) -> (!tmem.mma_warp_context<2, 256, 1, 32, 128>) : i32 {
        scf.yield %x0 : !tmem.mma_warp_context<2, 256, 1, 32, 128>
      }
      %n0, %ctx_w = scf.while (%i1 = %c0, %x1 = %ctx_f) : (i32, !tmem.mma_warp_context<2, 256, 1, 32, 128>) -> (i32, !tmem.mma_warp_context<2, 256, 1, 32, 128>) {
        %more = arith.cmpi slt, %i1, %c1 : i32
        scf.condition(%more) %i1, %x1 : i32, !tmem.mma_warp_context<2, 256, 1, 32, 128>
      } do {
      ^bb0(%i2: i32, %x2: !tmem.mma_warp_context<2, 256, 1, 32, 128>):
        %i3 = arith.addi %i2, %c1 : i32
        scf.yield %i3, %x2 : i32, !tmem.mma_warp_context<2, 256, 1, 32, 128>
      }
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
      %idesc = arith.constant 0x08400010 : i32
      %false = arith.constant false
      %true = arith.constant true
      %leader = nvvm.elect.sync -> i1
      %ring0 = tmem.warp_context.output_ring %ctx_w : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
      %alloc0 = tmem.warp_context.tmem %ctx_w : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.allocation<1, 512>
      %db0 = tmem.warp_context.dealloc_barrier %ctx_w : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.dealloc_barrier<1>
      %t_end, %ring_end, %alloc, %db = scf.while (%t = %c0, %r = %ring0, %al = %alloc0, %d = %db0)
          : (i32, !tmem.output_ring<2, 256, 1>, !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>)
          -> (i32, !tmem.output_ring<2, 256, 1>, !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>) {
        %go = arith.cmpi slt, %t, %ntiles : i32
        scf.condition(%go) %t, %r, %al, %d : i32, !tmem.output_ring<2, 256, 1>, !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>
      } do {
      ^bb0(%t: i32, %r: !tmem.output_ring<2, 256, 1>, %al: !tmem.allocation<1, 512>, %d: !tmem.dealloc_barrier<1>):
        %acquired = tmem.output_ring.acquire_for_mma %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
        %stage, %acc = scf.if %any -> (!tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>) {
          %view = tmem.tmem_stage.tensor %acquired : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>
          scf.yield %acquired, %view : !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>
        } else {
          // Never taken (%any is true): a different stage, so a wrong branch shows.
          %other = tmem.tmem_stage.from_alloc %al, %c0 : !tmem.allocation<1, 512> -> !tmem.tmem_stage<2, 256, 1>
          %view = tmem.tmem_stage.tensor %other : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>
          scf.yield %other, %view : !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>
        }
        %stage_f, %acc_f = scf.for %i4 = %c0 to %c1 step %c1 iter_args(%s5 = %stage, %v5 = %acc) -> (!tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>) : i32 {
          scf.yield %s5, %v5 : !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>
        }
        %n6, %stage_w, %acc_w = scf.while (%i6 = %c0, %s6 = %stage_f, %v6 = %acc_f) : (i32, !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>) -> (i32, !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>) {
          %more = arith.cmpi slt, %i6, %c1 : i32
          scf.condition(%more) %i6, %s6, %v6 : i32, !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>
        } do {
        ^bb0(%i7: i32, %s7: !tmem.tmem_stage<2, 256, 1>, %v7: !tmem.tensor<128x256xf32, 1>):
          %i8 = arith.addi %i7, %c1 : i32
          scf.yield %i8, %s7, %v7 : i32, !tmem.tmem_stage<2, 256, 1>, !tmem.tensor<128x256xf32, 1>
        }
        %dptr = tmem.tensor.address %acc_w : !tmem.tensor<128x256xf32, 1>
        scf.if %leader {
          nvvm.tcgen05.mma %dptr, %adesc0, %bdesc0, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          nvvm.tcgen05.mma %dptr, %adesc1, %bdesc1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        }
        %next = tmem.output_ring.release_from_mma %r, %stage_w leader %leader : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
        %t1 = arith.addi %t, %c1 : i32
        scf.yield %t1, %next, %al, %d : i32, !tmem.output_ring<2, 256, 1>, !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>
      }
      // MmaWarpContext.__exit__ on the carried allocation and dealloc barrier.
      %alloc_i, %db_i = scf.if %any -> (!tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>) {
        scf.yield %alloc, %db : !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>
      } else {
        scf.yield %alloc, %db : !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>
      }
      %alloc_f, %db_f = scf.for %i9 = %c0 to %c1 step %c1 iter_args(%a9 = %alloc_i, %d9 = %db_i) -> (!tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>) : i32 {
        scf.yield %a9, %d9 : !tmem.allocation<1, 512>, !tmem.dealloc_barrier<1>
      }
      tmem.dealloc_barrier.complete_dealloc %db_f, %alloc_f : !tmem.dealloc_barrier<1>, !tmem.allocation<1, 512>
    } else {
      // ================= epilogue warps 0-3 =================
      %ectx0 = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
      %ectx_i = scf.if %any -> (!tmem.epilogue_warp_context<2, 256, 1, 32, 128>) {
        scf.yield %ectx0 : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
      } else {
        scf.yield %ectx0 : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
      }
      %ectx_f = scf.for %i10 = %c0 to %c1 step %c1 iter_args(%e10 = %ectx_i) -> (!tmem.epilogue_warp_context<2, 256, 1, 32, 128>) : i32 {
        scf.yield %e10 : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
      }
      %n11, %ectx = scf.while (%i11 = %c0, %e11 = %ectx_f) : (i32, !tmem.epilogue_warp_context<2, 256, 1, 32, 128>) -> (i32, !tmem.epilogue_warp_context<2, 256, 1, 32, 128>) {
        %more = arith.cmpi slt, %i11, %c1 : i32
        scf.condition(%more) %i11, %e11 : i32, !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
      } do {
      ^bb0(%i12: i32, %e12: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
        %i13 = arith.addi %i12, %c1 : i32
        scf.yield %i13, %e12 : i32, !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
      }
      %ring0 = tmem.warp_context.output_ring %ectx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
      %alloc = tmem.warp_context.tmem %ectx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> !tmem.allocation<1, 512>
      // A second 2-stage ring whose consumer steps once a tile, as the output ring's
      // does: its consumer stage names the same TMEM stage. Its barriers are never used.
      %shadow0 = tmem.pipeline.create %shadow : !tmem.pipeline<2>
      %ring_i, %shadow_i = scf.if %any -> (!tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>) {
        scf.yield %ring0, %shadow0 : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
      } else {
        scf.yield %ring0, %shadow0 : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
      }
      %n14, %ring_w, %shadow_w = scf.while (%i14 = %c0, %r14 = %ring_i, %p14 = %shadow_i) : (i32, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>) -> (i32, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>) {
        %more = arith.cmpi slt, %i14, %c1 : i32
        scf.condition(%more) %i14, %r14, %p14 : i32, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
      } do {
      ^bb0(%i15: i32, %r15: !tmem.output_ring<2, 256, 1>, %p15: !tmem.pipeline<2>):
        %i16 = arith.addi %i15, %c1 : i32
        scf.yield %i16, %r15, %p15 : i32, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
      }
      %ring_end, %shadow_end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %ring_w, %p = %shadow_w) -> (!tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>) : i32 {
        %acquired = tmem.output_ring.acquire_for_epilogue %ring : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
        %index = tmem.pipeline.consumer_stage %p : !tmem.pipeline<2>
        %stage = tmem.tmem_stage.from_alloc %alloc, %index : !tmem.allocation<1, 512> -> !tmem.tmem_stage<2, 256, 1>
        %row = arith.muli %t, %c128 : i32
        %thr = arith.addi %row, %tid : i32
        %thr64 = arith.extui %thr : i32 to i64
        %c256_64 = arith.constant 256 : i64
        %elt = arith.muli %thr64, %c256_64 : i64
        %obase = llvm.getelementptr %out[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
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
        tmem.output_ring.arrive_empty %ring, %acquired : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
        %next = tmem.output_ring.release_from_epilogue %ring : !tmem.output_ring<2, 256, 1>
        %p1 = tmem.pipeline.consumer_step %p : !tmem.pipeline<2>
        scf.yield %next, %p1 : !tmem.output_ring<2, 256, 1>, !tmem.pipeline<2>
      }
      tmem.warp_context.epilogue_exit %ectx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
    }
    llvm.return
  }
}

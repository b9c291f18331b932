// Hazard class: smem-data-race
// Level: nvvm
// Run: --kernel matmul_cg1 --block 160 --arg out=zeros:f32:4x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=4
// Exit: 3
//
// examples/matmul_cg1.mlir lowered (lower-tmem), with named barrier 1 counting only the
// 128 epilogue threads and without the MMA warp's barrier.arrive: the epilogue loads the
// TMEM address from @tmem_slot with nothing ordering it after the tcgen05.alloc that
// writes it (docs/semantics.md §9.13). The tmem dialect cannot express this: its warp
// contexts always publish the address with the barrier.
builtin.module {
  llvm.mlir.global internal @smem_a() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @smem_b() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<16384 x i8>
  llvm.mlir.global internal @accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @dealloc_bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32
  llvm.func @matmul_cg1(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %ntiles: i32) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>, nvvm.minctasm = 1 : i32} {
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
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      nvvm.mbarrier.init %bars, %c1 : !llvm.ptr<3>, i32
      %0 = llvm.getelementptr %bars[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.init %0, %c1 : !llvm.ptr<3>, i32
      %1 = llvm.getelementptr %bars[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.init %1, %c128 : !llvm.ptr<3>, i32
      %2 = llvm.getelementptr %bars[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.init %2, %c128 : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %dbar, %c128 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    scf.for %i = %tid to %c512 step %c160 : i32 {
      %src = llvm.getelementptr %a[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst = llvm.getelementptr %sa[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    scf.for %i_1 = %tid to %c1024 step %c160 : i32 {
      %src_1 = llvm.getelementptr %b[%i_1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v_1 = llvm.load %src_1 {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst_1 = llvm.getelementptr %sb[%i_1] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v_1, %dst_1 {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.barrier0
    %is_mma = arith.cmpi eq, %warp, %c4 : i32
    scf.if %is_mma {
      nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
      nvvm.tcgen05.fence <before>
      %3 = arith.constant -1 : i32
      nvvm.bar.warp.sync %3 : i32
      nvvm.tcgen05.fence <after>
      %4 = llvm.load %slot : !llvm.ptr<3> -> i32
      nvvm.tcgen05.fence <before>
      %hi = arith.constant 70506183655424 : i64
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
      %idesc = arith.constant 138412048 : i32
      %false = arith.constant false
      %true = arith.constant true
      %leader = nvvm.elect.sync -> i1
      %5, %6 = scf.for %t = %c0 to %ntiles step %c1 iter_args(%7 = %c0, %8 = %c1) -> (i32, i32) : i32 {
        %9 = arith.constant 2 : i32
        %10 = arith.addi %7, %9 : i32
        %11 = llvm.getelementptr %bars[%10] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        nvvm.mbarrier.try_wait.parity %11, %8, %c0 : !llvm.ptr<3>, i32, i32
        nvvm.tcgen05.fence <after>
        %12 = arith.constant 256 : i32
        %13 = arith.muli %7, %12 : i32
        %14 = arith.addi %4, %13 : i32
        %d = llvm.inttoptr %14 : i32 to !llvm.ptr<6>
        scf.if %leader {
          nvvm.tcgen05.mma %d, %adesc0, %bdesc0, %idesc, %false {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          nvvm.tcgen05.mma %d, %adesc1, %bdesc1, %idesc, %true {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
        }
        %15 = llvm.getelementptr %bars[%7] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        scf.if %leader {
          nvvm.tcgen05.commit %15 : !llvm.ptr<3>
        }
        %16 = arith.addi %7, %c1 : i32
        %17 = arith.cmpi eq, %16, %9 : i32
        %18 = arith.select %17, %c0, %16 : i32
        %19 = arith.extui %17 : i1 to i32
        %20 = arith.xori %8, %19 : i32
        scf.yield %18, %20 : i32, i32
      }
      nvvm.tcgen05.relinquish_alloc_permit
      nvvm.mbarrier.try_wait.parity %dbar, %c0, %c0 : !llvm.ptr<3>, i32, i32
      nvvm.tcgen05.fence <after>
      %21 = llvm.inttoptr %4 : i32 to !llvm.ptr<6>
      nvvm.tcgen05.dealloc %21, %c512 : !llvm.ptr<6>, i32
    } else {
      nvvm.barrier id = %c1 number_of_threads = %c128
      nvvm.tcgen05.fence <after>
      %22 = llvm.load %slot : !llvm.ptr<3> -> i32
      %23, %24 = scf.for %t_1 = %c0 to %ntiles step %c1 iter_args(%25 = %c0, %26 = %c0) -> (i32, i32) : i32 {
        %27 = llvm.getelementptr %bars[%25] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        nvvm.mbarrier.try_wait.parity %27, %26, %c0 : !llvm.ptr<3>, i32, i32
        nvvm.tcgen05.fence <after>
        %row = arith.muli %t_1, %c128 : i32
        %thr = arith.addi %row, %tid : i32
        %thr64 = arith.extui %thr : i32 to i64
        %c256 = arith.constant 256 : i64
        %elt = arith.muli %thr64, %c256 : i64
        %obase = llvm.getelementptr %out[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
        scf.for %j = %c0 to %c8 step %c1 : i32 {
          %col = arith.muli %j, %c32 : i32
          %28 = arith.constant 256 : i32
          %29 = arith.muli %25, %28 : i32
          %30 = arith.addi %22, %29 : i32
          %31 = arith.addi %30, %col : i32
          %32 = llvm.inttoptr %31 : i32 to !llvm.ptr<6>
          %33 = nvvm.tcgen05.ld %32 {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
          %upper = llvm.bitcast %33 : vector<16xi32> to vector<16xf32>
          %34 = arith.constant 1048576 : i32
          %35 = arith.addi %31, %34 : i32
          %36 = llvm.inttoptr %35 : i32 to !llvm.ptr<6>
          %37 = nvvm.tcgen05.ld %36 {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
          %lower = llvm.bitcast %37 : vector<16xi32> to vector<16xf32>
          nvvm.tcgen05.wait <load>
          %o0 = llvm.getelementptr %obase[%col] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
          %o1 = llvm.getelementptr %o0[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
          llvm.store %upper, %o0 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
          llvm.store %lower, %o1 {alignment = 16 : i64} : vector<16xf32>, !llvm.ptr<1>
        }
        %38 = arith.constant 2 : i32
        %39 = arith.addi %25, %38 : i32
        %40 = llvm.getelementptr %bars[%39] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        nvvm.tcgen05.fence <before>
        nvvm.mbarrier.arrive %40 : !llvm.ptr<3>
        %41 = arith.addi %25, %c1 : i32
        %42 = arith.cmpi eq, %41, %38 : i32
        %43 = arith.select %42, %c0, %41 : i32
        %44 = arith.extui %42 : i1 to i32
        %45 = arith.xori %26, %44 : i32
        scf.yield %43, %45 : i32, i32
      }
      nvvm.tcgen05.fence <before>
      nvvm.mbarrier.arrive %dbar : !llvm.ptr<3>
    }
    llvm.return
  }
}


// RUN: not xdsl-tmem-run %s --kernel divergent --block 32 2>&1 | filecheck %s --check-prefix=DIVERGENT
// RUN: not xdsl-tmem-run %s --kernel ncols --block 32 2>&1 | filecheck %s --check-prefix=NCOLS
// RUN: not xdsl-tmem-run %s --kernel quarter --block 64 2>&1 | filecheck %s --check-prefix=QUARTER
// RUN: not xdsl-tmem-run %s --kernel uninit --block 32 2>&1 | filecheck %s --check-prefix=UNINIT

llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32
llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64

// A .sync.aligned op in a divergent warp.
llvm.func @divergent() attributes {nvvm.kernel} {
  %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
  %cols = arith.constant 32 : i32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c5 = arith.constant 5 : i32
  %few = arith.cmpi ult, %tid, %c5 : i32
  scf.if %few {
    nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
  }
  llvm.return
}
// DIVERGENT: hazards.mlir:[[# @LINE - 4]]:5: error: hazard divergent-sync-aligned: tcgen05.alloc is .sync.aligned but warp 0 executes it with lanes 0-4 of 0-31 active
// DIVERGENT-NEXT: nvvm.tcgen05.alloc %slot, %cols
// DIVERGENT: note: in warp 0, after {{[0-9]+}} warp-instructions

// A column count ptxas cannot check (it is in a register).
llvm.func @ncols() attributes {nvvm.kernel} {
  %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
  %c16 = arith.constant 16 : i32
  %c3 = arith.constant 3 : i32
  %cols = arith.muli %c16, %c3 : i32
  nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
  llvm.return
}
// NCOLS: hazards.mlir:[[# @LINE - 3]]:3: error: hazard ncols-invalid: tcgen05.alloc: ncols must be a power of two in [32, 512], got 48

// Warp 1 may only reach TMEM lanes 32-63; lane 64 belongs to warp 2.
llvm.func @quarter() attributes {nvvm.kernel} {
  %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
  %cols = arith.constant 32 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %warp = arith.shrui %tid, %c5 : i32
  %is_warp0 = arith.cmpi eq, %warp, %c0 : i32
  scf.if %is_warp0 {
    nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
  }
  nvvm.barrier0
  %base = llvm.load %slot : !llvm.ptr<3> -> i32
  %lane64 = arith.constant 4194304 : i32
  %addr = arith.addi %base, %lane64 : i32
  %p = llvm.inttoptr %addr : i32 to !llvm.ptr<6>
  %is_warp1 = arith.cmpi eq, %warp, %c1 : i32
  scf.if %is_warp1 {
    %v = nvvm.tcgen05.ld %p {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
  }
  llvm.return
}
// QUARTER: hazards.mlir:[[# @LINE - 4]]:5: error: hazard lane-quarter-violation: tcgen05.ld by warp 1 (lanes 32-63) addresses TMEM lane 64

// An mbarrier used before mbarrier.init.
llvm.func @uninit() attributes {nvvm.kernel} {
  %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
  nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
  llvm.return
}
// UNINIT: hazards.mlir:[[# @LINE - 3]]:3: error: hazard barrier-before-init: mbarrier @bar of CTA 0 is used before mbarrier.init

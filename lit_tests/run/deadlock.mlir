// RUN: not xdsl-tmem-run %s --kernel k --block 64 --arg out=zeros:i32:64 2>&1 | filecheck %s

// Two warps share one full/empty barrier pair. Warp 1 (the producer) waits for an
// empty slot, writes, and should arrive on `full`, but the arrive is missing: warp 0
// waits on `full` forever, and warp 1's second acquisition waits on `empty`.

llvm.mlir.global internal @bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>

llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %bars = llvm.mlir.addressof @bars : !llvm.ptr<3>
  %empty = llvm.getelementptr %bars[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %is_t0 = arith.cmpi eq, %tid, %c0 : i32
  scf.if %is_t0 {
    nvvm.mbarrier.init %bars, %c32 : !llvm.ptr<3>, i32
    nvvm.mbarrier.init %empty, %c32 : !llvm.ptr<3>, i32
  }
  nvvm.barrier0
  %producer = arith.cmpi uge, %tid, %c32 : i32
  scf.if %producer {
    scf.for %i = %c0 to %c32 step %c1 : i32 {
      %phase = arith.xori %i, %c1 : i32
      %parity = arith.andi %phase, %c1 : i32
      nvvm.mbarrier.try_wait.parity %empty, %parity, %c0 : !llvm.ptr<3>, i32, i32
      // (missing) nvvm.mbarrier.arrive %bars
    }
  } else {
    nvvm.mbarrier.try_wait.parity %bars, %c0, %c0 : !llvm.ptr<3>, i32, i32
  }
  llvm.return
}

// CHECK:      error: deadlock: 2 warp(s) blocked and nothing in flight can release them
// CHECK-NEXT: deadlock.mlir:[[# @LINE - 6]]:5: note: warp 0 blocked at 'nvvm.mbarrier.try_wait.parity': waits on mbarrier @bars[0] for parity 0; barrier phase bit 0 (0 completed), pending 32 of 32
// CHECK-NEXT: deadlock.mlir:[[# @LINE - 11]]:7: note: warp 1 blocked at 'nvvm.mbarrier.try_wait.parity': waits on mbarrier @bars[1] for parity 0; barrier phase bit 0 (0 completed), pending 32 of 32
// CHECK-NEXT: note: cause: hazard missing-epilogue-arrive: mbarrier @bars[0] needs 32 more thread arrivals for its phase 0, and no live warp will make them
// CHECK-NEXT: note: after {{[0-9]+}} warp-instructions

// A deadlock that only some schedules reach (tcgen05.alloc blocks until the columns
// are free, docs/ptx-nvvm.md §1.3). Each of two warps allocates all 512 TMEM columns and
// deallocates them at the end; warp 1 waits on an mbarrier that warp 0 arrives on.
// If warp 0 allocates first it arrives, deallocates, and warp 1 then proceeds; if
// warp 1 allocates first it waits for an arrival that warp 0, blocked in its
// allocation, never makes.
module {
  llvm.mlir.global internal @slots() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<2 x i32>
  llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64

  llvm.func @k() attributes {nvvm.kernel} {
    %c0 = arith.constant 0 : i32
    %c5 = arith.constant 5 : i32
    %c32 = arith.constant 32 : i32
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 64> : i32
    %warp = arith.shrui %tid, %c5 : i32
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      nvvm.mbarrier.init %bar, %c32 : !llvm.ptr<3>, i32
    }
    nvvm.barrier0
    %slots = llvm.mlir.addressof @slots : !llvm.ptr<3>
    %slot = llvm.getelementptr %slots[%warp] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
    %a = tmem.alloc %slot : !tmem.allocation<1, 512>
    %is_w0 = arith.cmpi eq, %warp, %c0 : i32
    scf.if %is_w0 {
      %token = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
    } else {
      nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32
    }
    tmem.dealloc %a : !tmem.allocation<1, 512>
    llvm.return
  }
}

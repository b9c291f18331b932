// Two warps store different values to out[0], each right after its arrival on an
// mbarrier neither waits on, with nothing ordering the stores: which value remains
// depends on the schedule. The happens-before checks report the race in any schedule
// (global-data-race); the exploration's comparison of complete schedules
// (schedule-dependent-result) stays as a backstop for what they do not shadow.
module {
  llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64

  llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %c0 = arith.constant 0 : i32
    %c5 = arith.constant 5 : i32
    %c32 = arith.constant 32 : i32
    %c64 = arith.constant 64 : i32
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 64> : i32
    %warp = arith.shrui %tid, %c5 : i32
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      nvvm.mbarrier.init %bar, %c64 : !llvm.ptr<3>, i32
    }
    nvvm.barrier0
    %token = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
    llvm.store %warp, %out : i32, !llvm.ptr<1>
    llvm.return
  }
}

// Warp 1 probes an mbarrier (test.wait, which never blocks) that warp 0 arrives on, and
// stores what it saw; warp 0 stores nothing. No two warps touch the same byte, so there
// is no data race, yet out[0] is 1 when the arrival came first and 0 otherwise: only
// comparing complete schedules (schedule-dependent-result) reveals it.
module {
  llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64

  llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
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
    %is_w0 = arith.cmpi eq, %warp, %c0 : i32
    scf.if %is_w0 {
      %token = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
    } else {
      %done = nvvm.mbarrier.test.wait %bar, %c0 : !llvm.ptr<3>, i32 -> i1
      %seen = arith.extui %done : i1 to i32
      llvm.store %seen, %out : i32, !llvm.ptr<1>
    }
    llvm.return
  }
}

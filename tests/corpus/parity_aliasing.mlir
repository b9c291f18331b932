// Hazard class: parity-aliasing
// Level: nvvm
// Run: --kernel k --block 64
// Exit: 3
//
// Warp 1 completes three phases of a count-1 mbarrier before warp 0's first wait for
// parity 0 (it needs phase 0): after three completions the phase bit is 1 again, so the
// wait passes, on a later lap than the one it waits for (docs/semantics.md §9.11).
module {
  llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64

  llvm.func @k() attributes {nvvm.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
    }
    nvvm.barrier0
    %producer = arith.cmpi uge, %tid, %c32 : i32
    scf.if %producer {
      %lane = nvvm.read.ptx.sreg.laneid : i32
      %first = arith.cmpi eq, %lane, %c0 : i32
      scf.if %first {
        nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
        nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
        nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
      }
    }
    nvvm.barrier0
    %consumer = arith.cmpi ult, %tid, %c32 : i32
    scf.if %consumer {
      nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32
    }
    llvm.return
  }
}

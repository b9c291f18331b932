// Hazard class: divergent-sync-aligned
// Level: tmem
// Run: --kernel k --block 32
// Exit: 3
//
// tcgen05.alloc is .sync.aligned: all 32 lanes of the warp must execute it together; here
// only lanes 0-15 do (docs/ptx-nvvm.md §1.3; ptxas does not check it).
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @k() attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %c16 = arith.constant 16 : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %low = arith.cmpi ult, %tid, %c16 : i32
    scf.if %low {
      %a = tmem.alloc %slot : !tmem.allocation<1, 32>
      tmem.dealloc %a : !tmem.allocation<1, 32>
    }
    llvm.return
  }
}

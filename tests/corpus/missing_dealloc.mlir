// Hazard class: missing-dealloc
// Level: tmem
// Run: --kernel k --block 32
// Exit: 3
//
// TMEM allocated and never deallocated: all columns must be freed before the kernel
// exits (docs/ptx-nvvm.md §1.3; ptxas does not check it).
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @k() attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %a = tmem.alloc %slot : !tmem.allocation<1, 256>
    tmem.relinquish %a : !tmem.allocation<1, 256>
    llvm.return
  }
}

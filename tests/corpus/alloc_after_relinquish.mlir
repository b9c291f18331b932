// Hazard class: alloc-after-relinquish
// Level: tmem
// Run: --kernel k --block 32
// Exit: 3
//
// A CTA that gave up its allocation permit allocates again (docs/ptx-nvvm.md §1.3).
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @k() attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %a = tmem.alloc %slot : !tmem.allocation<1, 128>
    tmem.relinquish %a : !tmem.allocation<1, 128>
    %b = tmem.alloc %slot : !tmem.allocation<1, 128>
    tmem.dealloc %b : !tmem.allocation<1, 128>
    tmem.dealloc %a : !tmem.allocation<1, 128>
    llvm.return
  }
}

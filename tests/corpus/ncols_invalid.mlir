// Hazard class: ncols-invalid
// Level: nvvm
// Run: --kernel k --block 32 --arg cols=48
// Exit: 3
//
// A column count in a register is never checked by ptxas (docs/ptx-nvvm.md §1.3): 48 is not a
// power of two in [32, 512].
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @k(%cols: i32) attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
    %base = llvm.load %slot : !llvm.ptr<3> -> i32
    %t = llvm.inttoptr %base : i32 to !llvm.ptr<6>
    nvvm.tcgen05.dealloc %t, %cols : !llvm.ptr<6>, i32
    llvm.return
  }
}

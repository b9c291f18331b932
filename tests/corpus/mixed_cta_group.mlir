// Hazard class: mixed-cta-group
// Level: nvvm
// Run: --kernel k --block 32
// Exit: 3
//
// The kernel allocates with cta_group::1 and a helper function deallocates with
// cta_group::2. Each function verifies on its own; ptxas rejects a kernel whose callees
// mix the two (docs/ptx-nvvm.md §4), which only a run (or whole-program analysis) can see.
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @release(%t: !llvm.ptr<6>, %cols: i32) {
    nvvm.tcgen05.dealloc %t, %cols {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
    llvm.return
  }

  llvm.func @k() attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %cols = arith.constant 32 : i32
    nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
    %base = llvm.load %slot : !llvm.ptr<3> -> i32
    %t = llvm.inttoptr %base : i32 to !llvm.ptr<6>
    llvm.call @release(%t, %cols) : (!llvm.ptr<6>, i32) -> ()
    llvm.return
  }
}

// Hazard class: lane-quarter-violation
// Level: nvvm
// Run: --kernel k --block 64
// Exit: 3
//
// Warp 1 may only load TMEM lanes 32-63 (warp % 4 selects the lane quarter); it loads
// lane 64 (docs/ptx-nvvm.md §1.2; ptxas does not check it).
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @k() attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %cols = arith.constant 32 : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c5 = arith.constant 5 : i32
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %warp = arith.shrui %tid, %c5 : i32
    %is_warp0 = arith.cmpi eq, %warp, %c0 : i32
    scf.if %is_warp0 {
      nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
    }
    nvvm.barrier0
    %base = llvm.load %slot : !llvm.ptr<3> -> i32
    %lane64 = arith.constant 4194304 : i32
    %addr = arith.addi %base, %lane64 : i32
    %p = llvm.inttoptr %addr : i32 to !llvm.ptr<6>
    %is_warp1 = arith.cmpi eq, %warp, %c1 : i32
    scf.if %is_warp1 {
      %v = nvvm.tcgen05.ld %p {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
      nvvm.tcgen05.wait <load>
    }
    llvm.return
  }
}

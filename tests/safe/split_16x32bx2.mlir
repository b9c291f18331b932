// SAFE (no hazard), NVVM level: a tcgen05.ld .16x32bx2 whose immHalfSplitoff (64) is
// larger than its width (4 columns) reads two pieces, not the columns between them.
// Run: --kernel split_ld --block 32 --arg inp0=rand:u32:32x4:1 --arg inp1=rand:u32:32x4:2 --arg out=zeros:u32:32x4
//
// One warp allocates 128 columns and writes columns 0-3 and 64-67 of TMEM lanes 0-31 with
// two 32x32b.x4 stores (lane l, register r → TMEM lane l, column r: PTX ISA 9.1, tcgen05
// "Matrix fragments" for .32x32b). It then loads with 16x32bx2.x4 and immHalfSplitoff 64:
// lanes 0-15 read TMEM lanes 0-15 at columns 0-3, lanes 16-31 the same TMEM lanes at
// columns 64-67 (PTX ISA, .16x32bx2: the second half at taddr + immHalfSplitoff). Columns
// 4-63 are never written and never read. out[l, r] = inp0[l, r] for l < 16, inp1[l - 16, r]
// for l >= 16.
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @split_ld(%inp0: !llvm.ptr<1>, %inp1: !llvm.ptr<1>, %out: !llvm.ptr<1>)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>} {
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 32> : i32
    nvvm.tcgen05.alloc %slot, %c128 : !llvm.ptr<3>, i32
    nvvm.tcgen05.fence <before>
    nvvm.barrier0
    nvvm.tcgen05.fence <after>
    %t = llvm.load %slot : !llvm.ptr<3> -> i32
    %tp = llvm.inttoptr %t : i32 to !llvm.ptr<6>
    %t64 = arith.addi %t, %c64 : i32
    %tp64 = llvm.inttoptr %t64 : i32 to !llvm.ptr<6>
    %src0 = llvm.getelementptr %inp0[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
    %src1 = llvm.getelementptr %inp1[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
    %v0 = llvm.load %src0 : !llvm.ptr<1> -> vector<4xi32>
    %v1 = llvm.load %src1 : !llvm.ptr<1> -> vector<4xi32>
    nvvm.tcgen05.st %tp, %v0 {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    nvvm.tcgen05.st %tp64, %v1 {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<4xi32>
    nvvm.tcgen05.wait <store>
    %off = llvm.mlir.constant(64 : i64) : i64
    %r = nvvm.tcgen05.ld %tp, %off {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<4xi32>
    nvvm.tcgen05.wait <load>
    %dst = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
    llvm.store %r, %dst : vector<4xi32>, !llvm.ptr<1>
    nvvm.tcgen05.relinquish_alloc_permit
    nvvm.tcgen05.dealloc %tp, %c128 : !llvm.ptr<6>, i32
    llvm.return
  }
}

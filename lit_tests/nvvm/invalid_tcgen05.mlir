// Verifier errors of the tcgen05 ops: mlir-opt-22's own checks (reworded) and
// what ptxas / the LLVM IR verifier reject that mlir-opt-22 lets through.
// `// mlir-opt-22: "..."` and `// toolchain: "..."` lines are checked by
// tests/test_nvvm_upstream.py: mlir-opt-22 rejects the chunk with that message,
// or mlir-opt-22 accepts it and the route to ptxas fails with that message.
// RUN: xdsl-tmem-opt %s --verify-diagnostics --split-input-file | filecheck %s

llvm.func @f(%slot: !llvm.ptr<3>) {
  %c48 = llvm.mlir.constant(48 : i32) : i32
  nvvm.tcgen05.alloc %slot, %c48 : !llvm.ptr<3>, i32
  llvm.return
}
// ptxas rejects the immediate ("value must be power of 2", docs/ptx-nvvm.md §1.3); llc-22
// passes a register instead, which nothing checks
// CHECK: invalid_tcgen05.mlir:10:3: error: nvvm.tcgen05.alloc: ncols must be a power of two in [32, 512], got 48

// -----
llvm.func @f(%slot: !llvm.ptr<3>) {
  %c1024 = arith.constant 1024 : i32
  nvvm.tcgen05.alloc %slot, %c1024 : !llvm.ptr<3>, i32
  llvm.return
}
// ptxas rejects the immediate ("value '1024' out of range", docs/ptx-nvvm.md §1.3)
// CHECK: error: nvvm.tcgen05.alloc: ncols must be a power of two in [32, 512], got 1024

// -----
llvm.func @f(%x: i64, %n: i32) {
  "nvvm.tcgen05.alloc"(%x, %n) : (i64, i32) -> ()
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer type or LLVM pointer in address space 3"
// CHECK: error: nvvm.tcgen05.alloc: operand 'addr' at position 0 does not verify: i64 should be of base attribute llvm.ptr

// -----
llvm.func @f(%slot: !llvm.ptr<3>, %n: i32) {
  nvvm.tcgen05.dealloc %slot, %n : !llvm.ptr<3>, i32
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 6"
// CHECK: error: nvvm.tcgen05.dealloc: taddr must be !llvm.ptr<6> (tensor memory), got !llvm.ptr<3>

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %c48 = llvm.mlir.constant(48 : i32) : i32
  nvvm.tcgen05.dealloc %t, %c48 : !llvm.ptr<6>, i32
  llvm.return
}
// ptxas rejects an immediate that is not a multiple of 32 (docs/ptx-nvvm.md §1.3)
// CHECK: error: nvvm.tcgen05.dealloc: ncols must be a multiple of 32, got 48

// -----
llvm.func @f(%bar: !llvm.ptr<3>, %mask: i32) {
  nvvm.tcgen05.commit %bar, multicast_mask = %mask : !llvm.ptr<3>, i32
  llvm.return
}
// mlir-opt-22: "operand #1 must be 16-bit signless integer"
// CHECK: error: nvvm.tcgen05.commit: multicast_mask must be i16, got i32

// -----
llvm.func @f(%slot: !llvm.ptr<3>, %n: i32) attributes {nvvm.kernel} {
  nvvm.tcgen05.alloc %slot, %n : !llvm.ptr<3>, i32
  nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
  llvm.return
}
// toolchain: "uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2)"
// CHECK: error: nvvm.tcgen05.relinquish_alloc_permit: function @f mixes cta_group 1 (first used by nvvm.tcgen05.alloc) and cta_group 2; ptxas rejects a function that uses both

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1, %bar: !llvm.ptr<3>) attributes {nvvm.kernel} {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  nvvm.tcgen05.commit %bar : !llvm.ptr<3>
  llvm.return
}
// toolchain: "uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2)"
// CHECK: error: nvvm.tcgen05.commit: function @f mixes cta_group 2 (first used by nvvm.tcgen05.mma) and cta_group 1; ptxas rejects a function that uses both

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<2xi32>
  llvm.return
}
// mlir-opt-22: "invalid result type length 2 for shape shape_16x256b in tcgen05.ld Op"
// CHECK: error: nvvm.tcgen05.ld: shape_16x256b needs 4 x num registers (num a power of two, at most 128 registers): got vector<2xi32>

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<3xi32>
  llvm.return
}
// mlir-opt-22: "vector of 32-bit signless integer values of length 2/4/8/16/32/64/128"
// CHECK: error: nvvm.tcgen05.ld: shape_32x32b needs 1 x num registers (num a power of two, at most 128 registers): got vector<3xi32>

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<256xi32>
  llvm.return
}
// mlir-opt-22: "vector of 32-bit signless integer values of length 2/4/8/16/32/64/128"
// CHECK: error: nvvm.tcgen05.ld: shape_16x128b needs 2 x num registers (num a power of two, at most 128 registers): got vector<256xi32>

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : i32
  llvm.return
}
// mlir-opt-22: "invalid result type length 1 for shape shape_16x128b in tcgen05.ld Op"
// CHECK: error: nvvm.tcgen05.ld: shape_16x128b needs 2 x num registers (num a power of two, at most 128 registers): got i32

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<2xf32>
  llvm.return
}
// mlir-opt-22: "must be 32-bit signless integer or vector of 32-bit signless integer"
// CHECK: error: nvvm.tcgen05.ld: the result must be i32 or vector<N x i32>, got vector<2xf32>

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
  llvm.return
}
// mlir-opt-22: "shape 16x32bx2 requires offset argument"
// CHECK: error: nvvm.tcgen05.ld: shape_16x32bx2 needs the offset operand (immHalfSplitoff)

// -----
llvm.func @f(%t: !llvm.ptr<6>, %off: i64) {
  %v = nvvm.tcgen05.ld %t, %off {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
  llvm.return
}
// toolchain: "immarg operand has non-immediate parameter"
// CHECK: error: nvvm.tcgen05.ld: offset must be a constant (llvm.mlir.constant or arith.constant): it is the immediate immHalfSplitoff

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %off = llvm.mlir.constant(2 : i64) : i64
  %v = nvvm.tcgen05.ld %t, %off {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<2xi32>
  llvm.return
}
// mlir-opt-22: "offset argument is only supported for shape 16x32bx2"
// CHECK: error: nvvm.tcgen05.ld: the offset operand is only allowed with shape_16x32bx2, not shape_32x32b

// -----
llvm.func @f(%t: !llvm.ptr<6>, %v: i32) {
  %off = llvm.mlir.constant(2 : i64) : i64
  nvvm.tcgen05.st %t, %v, %off {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
  llvm.return
}
// mlir-opt-22 accepts this; mlir-translate-22 then emits a call the LLVM verifier rejects:
// toolchain: "Incorrect number of arguments passed to called function!"
// CHECK: error: nvvm.tcgen05.st: the offset operand is only allowed with shape_16x32bx2, not shape_32x32b

// -----
llvm.func @f(%t: !llvm.ptr<6>, %v: vector<12xi32>) {
  nvvm.tcgen05.st %t, %v {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<12xi32>
  llvm.return
}
// mlir-opt-22: "vector of 32-bit signless integer values of length 2/4/8/16/32/64/128"
// CHECK: error: nvvm.tcgen05.st: shape_16x256b needs 4 x num registers (num a power of two, at most 128 registers): got vector<12xi32>

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1, %m: vector<8xi32>) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en mask = %m {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, vector<8xi32>)
  llvm.return
}
// mlir-opt-22: "Disable Output Lane of length 8 is incompatible with CtaGroupAttr"
// CHECK: error: nvvm.tcgen05.mma: mask (disable-output-lane) must be vector<4xi32> for cta_1, got vector<8xi32>

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en {aShift, kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  llvm.return
}
// mlir-opt-22: "A-shift can be applied only when matrix A is in tensor memory"
// CHECK: error: nvvm.tcgen05.mma: aShift needs matrix A in tensor memory (!llvm.ptr<6>), got i64

// -----
llvm.func @f(%d: !llvm.ptr<6>, %b: i64, %idesc: i32, %en: i1) {
  nvvm.tcgen05.mma %d, %d, %b, %idesc, %en {aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<fill>, kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
  llvm.return
}
// mlir-opt-22: "Cannot use collector buffer operation fill or use with ashift"
// CHECK: error: nvvm.tcgen05.mma: collectorOp fill cannot be combined with aShift (allowed: discard, lastuse)

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: !llvm.ptr<3>, %b: i64, %idesc: i32, %en: i1) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, !llvm.ptr<3>, i64, i32, i1)
  llvm.return
}
// mlir-opt-22: "operand #1 must be LLVM pointer in address space 6 or 64-bit signless integer"
// CHECK: error: nvvm.tcgen05.mma: matrix_a must be i64 (shared-memory descriptor) or !llvm.ptr<6> (tensor memory), got !llvm.ptr<3>

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1) {
  %s = llvm.mlir.constant(3 : i64) : i64
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en scale = %s {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  llvm.return
}
// the LLVM verifier rejects the kind operand of the .scale_d intrinsic:
// toolchain: "immarg value 3 out of range [0, 2)"
// CHECK: error: nvvm.tcgen05.mma: scale (scale-input-d) needs kind f16 or tf32, got i8

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1, %s: i64) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en scale = %s {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  llvm.return
}
// toolchain: "immarg operand has non-immediate parameter"
// CHECK: error: nvvm.tcgen05.mma: scale must be a constant (llvm.mlir.constant or arith.constant): PTX scale-input-d is an immediate

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1) {
  %s = llvm.mlir.constant(16 : i64) : i64
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en scale = %s {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  llvm.return
}
// toolchain: "immarg value 16 out of range [0, 16)"
// CHECK: error: nvvm.tcgen05.mma: scale must be in [0, 15], got 16

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  llvm.return
}
// mlir-opt-22: "requires attribute 'ctaGroup'"
// CHECK: error: nvvm.tcgen05.mma: property 'ctaGroup' expected in operation 'nvvm.tcgen05.mma'

// -----
llvm.func @f(%d: !llvm.ptr<3>, %a: i64, %b: i64, %idesc: i32, %en: i1) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<3>, i64, i64, i32, i1)
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 6"
// CHECK: error: nvvm.tcgen05.mma: matrix_d must be !llvm.ptr<6> (tensor memory), got !llvm.ptr<3>

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %idesc: i32, %en: i1, %s: i32) {
  nvvm.tcgen05.mma %d, %a, %b, %idesc, %en scale = %s {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i32)
  llvm.return
}
// mlir-opt-22: "operand #5 must be 64-bit signless integer"
// CHECK: error: nvvm.tcgen05.mma: scale must be i64, got i32

// -----
llvm.func @f(%t: !llvm.ptr<6>, %desc: i64) {
  nvvm.tcgen05.cp %t, %desc {shape = #nvvm.tcgen05_cp_shape<shape_64x128b>}
  llvm.return
}
// mlir-opt-22: "Shape 64x128b requires multicast warpx2_01_23 or warpx2_02_13 for tcgen05.cp Op"
// CHECK: error: nvvm.tcgen05.cp: shape_64x128b needs multicast warpx2_01_23 or warpx2_02_13, got none

// -----
llvm.func @f(%t: !llvm.ptr<6>, %desc: i64) {
  nvvm.tcgen05.cp %t, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>}
  llvm.return
}
// mlir-opt-22: "Invalid multicast type for tcgen05.cp Op"
// CHECK: error: nvvm.tcgen05.cp: shape_128x256b needs multicast none, got warpx4

// -----
llvm.func @f(%t: !llvm.ptr<6>, %desc: i64) {
  nvvm.tcgen05.cp %t, %desc {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, multicast = #nvvm.tcgen05_cp_multicast<warpx2_01_23>}
  llvm.return
}
// mlir-opt-22: "Shape 32x128b requires multicast warpx4 for tcgen05.cp Op"
// CHECK: error: nvvm.tcgen05.cp: shape_32x128b needs multicast warpx4, got warpx2_01_23

// -----
llvm.func @f(%p: !llvm.ptr<3>) {
  nvvm.tcgen05.shift %p : !llvm.ptr<3>
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 6"
// CHECK: error: nvvm.tcgen05.shift: taddr must be !llvm.ptr<6> (tensor memory), got !llvm.ptr<3>

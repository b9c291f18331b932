// Errors found while parsing nvvm (and the llvm pieces we add): bad enum values,
// bad attribute parameters, operand/type count mismatches. `// mlir-opt-22: "..."`
// lines are checked by tests/test_nvvm_upstream.py.
// RUN: xdsl-tmem-opt %s --parsing-diagnostics --split-input-file | filecheck %s

llvm.func @f() {
  nvvm.tcgen05.fence <middle>
  llvm.return
}
// mlir-opt-22: "expected ::mlir::NVVM::Tcgen05FenceKind to be one of: before, after"
// CHECK: invalid_parse.mlir:7:23: error: Expected `before`, or `after`.

// -----
llvm.func @f() {
  nvvm.tcgen05.wait <ld>
  llvm.return
}
// mlir-opt-22: "expected ::mlir::NVVM::Tcgen05WaitKind to be one of: load, store"
// CHECK: error: Expected `load`, or `store`.

// -----
llvm.func @f(%p: !llvm.ptr<3>, %n: i32) {
  nvvm.tcgen05.alloc %p, %n {group = #nvvm.cta_group<cta_3>} : !llvm.ptr<3>, i32
  llvm.return
}
// mlir-opt-22: "expected ::mlir::NVVM::CTAGroupKind to be one of: cta_1, cta_2"
// CHECK: error: Expected `cta_1`, or `cta_2`.

// -----
llvm.func @f(%t: !llvm.ptr<6>) {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x64b>} : i32
  llvm.return
}
// mlir-opt-22: "expected ::mlir::NVVM::Tcgen05LdStShape to be one of"
// CHECK: error: Expected `shape_16x64b`, `shape_16x128b`, `shape_16x256b`, `shape_32x32b`, or `shape_16x32bx2`.

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %i: i32, %e: i1) {
  nvvm.tcgen05.mma %d, %a, %b, %i, %e {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32)
  llvm.return
}
// CHECK: error: expected 5 operand types, got 4

// -----
llvm.func @f(%d: !llvm.ptr<6>, %a: i64, %b: i64, %i: i32, %e: i1) {
  nvvm.tcgen05.mma %d, %a, %b, %i, %e {kind = #nvvm.tcgen05_mma_kind<bf16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  llvm.return
}
// mlir-opt-22: "expected ::mlir::NVVM::Tcgen05MMAKind to be one of"
// CHECK: error: Expected `f16`, `tf32`, `f8f6f4`, or `i8`.

// -----
llvm.func @f() {
  %t = nvvm.read.ptx.sreg.tid.x range <i32, 5, 5> : i32
  llvm.return
}
// mlir-opt-22: "invalid range attribute: Lower == Upper, but they aren't min (0) or max (4294967295) value!"
// CHECK: error: invalid range <i32, 5, 5>: lower == upper is only allowed for 0 or 4294967295 (the empty or full range)

// -----
llvm.func @f() {
  %t = nvvm.read.ptx.sreg.tid.x range <f32, 0, 5> : i32
  llvm.return
}
// CHECK: error: constant_range expects an integer type, got f32

// -----
llvm.func @f(%v: i32, %i: i32) {
  %x = llvm.extractelement %v[%i : i32] : i32
  llvm.return
}
// CHECK: error: llvm.extractelement expects a vector type, got i32

// -----
llvm.func @f(%v: vector<4xi32>, %i: i32) {
  %x = "llvm.extractelement"(%v, %i) : (vector<4xi32>, i32) -> i64
  llvm.return
}
// mlir-opt-22: "failed to verify that result type matches vector element type"
// CHECK: error: llvm.extractelement: result type must be the element type i32 of vector<4xi32>, got i64

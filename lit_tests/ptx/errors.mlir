// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_100f}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SM100F
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_110a}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SM110A
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_90a}' --split-input-file --verify-diagnostics | filecheck %s --check-prefix=SM90A
// RUN: xdsl-tmem-opt %s -t ptx --split-input-file --verify-diagnostics | filecheck %s

// A feature the target lacks is a diagnostic at the op, not a ptxas error
// (docs/ptx-nvvm.md §1.1: kind::i8 only on sm_100a/sm_110a, shift only on `a` targets;
// ptxas 13.0 rejects the scale-input-d immediate on sm_110a).
llvm.func @i8(%t: !llvm.ptr<6>, %ad: i64, %bd: i64, %idesc: i32, %en: i1) attributes {nvvm.kernel} {
  nvvm.tcgen05.mma %t, %ad, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  llvm.return
}
// SM100F: errors.mlir:[[# @LINE - 3]]:3: error: ptx backend: tcgen05.mma kind::i8 is not available on sm_100f (only sm_100a and sm_110a)
// SM90A: error: unsupported PTX target 'sm_90a'; supported: sm_100a, sm_100f, sm_103a, sm_110a

// -----

llvm.func @shift(%t: !llvm.ptr<6>) attributes {nvvm.kernel} {
  nvvm.tcgen05.shift %t : !llvm.ptr<6>
  llvm.return
}
// SM100F: errors.mlir:[[# @LINE - 3]]:3: error: ptx backend: tcgen05.shift is not available on sm_100f (only the 'a' targets)

// -----

llvm.func @scale(%t: !llvm.ptr<6>, %ad: i64, %bd: i64, %idesc: i32, %en: i1) attributes {nvvm.kernel} {
  %s = llvm.mlir.constant(3 : i64) : i64
  nvvm.tcgen05.mma %t, %ad, %bd, %idesc, %en scale = %s {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  llvm.return
}
// SM110A: errors.mlir:[[# @LINE - 3]]:3: error: ptx backend: the tcgen05.mma scale-input-d operand is not available on sm_110a

// -----

// tmem ops must be lowered first; the message says how.
llvm.func @unlowered(%slot: !llvm.ptr<3>) attributes {nvvm.kernel} {
  %a = tmem.alloc %slot : !tmem.allocation<1, 512>
  llvm.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:3: error: ptx backend: tmem.alloc must be lowered to nvvm first: add -p lower-tmem

// -----

llvm.func @device(i32) -> i32
llvm.func @k(%x: i32) attributes {nvvm.kernel} {
  %y = llvm.call @device(%x) : (i32) -> i32
  llvm.return
}
// CHECK: errors.mlir:[[# @LINE - 5]]:1: error: ptx backend: @device is only declared: an external function cannot be linked

// -----

llvm.func @k(%x: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %y = arith.ceildivsi %x, %x : i32
  llvm.store %y, %out : i32, !llvm.ptr<1>
  llvm.return
}
// CHECK: errors.mlir:[[# @LINE - 4]]:3: error: ptx backend: arith.ceildivsi has no PTX lowering

// -----

llvm.mlir.global internal @table() {addr_space = 1 : i32} : !llvm.array<4 x i32>
llvm.func @k() attributes {nvvm.kernel} {
  llvm.return
}
// CHECK: errors.mlir:[[# @LINE - 4]]:1: error: ptx backend: global @table in address space 1: only shared (3) globals are supported

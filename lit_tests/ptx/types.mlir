// RUN: xdsl-tmem-opt %s -t ptx --split-input-file | filecheck %s

// Types PTX has no instructions for, selected as the PTX ISA allows (and as llc-22
// does): 8-bit integers in 16-bit registers (extended where the high byte matters),
// shift amounts as .u32, f16/bf16 division in f32, f64 maximumf without `.NaN`
// (which PTX has only for f16/bf16/f32), and i1 in memory as the byte 0 or 1.
llvm.func @narrow(%p: !llvm.ptr<1>, %q: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %a = llvm.load %p : !llvm.ptr<1> -> i8
  %b = llvm.load %q : !llvm.ptr<1> -> i8
  %m = arith.muli %a, %b : i8
  %d = arith.divsi %m, %b : i8
  %s = arith.shrui %d, %b : i8
  llvm.store %s, %p : i8, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .entry narrow(
// CHECK:       ld.global.b8 %rs[[A:[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       ld.global.b8 %rs[[B:[0-9]+]], [%rd{{[0-9]+}}];
// CHECK:       mul.lo.s16 %rs[[M:[0-9]+]], %rs[[A]], %rs[[B]];
// CHECK:       cvt.s16.s8 %rs[[MX:[0-9]+]], %rs[[M]];
// CHECK:       cvt.s16.s8 %rs[[BX:[0-9]+]], %rs[[B]];
// CHECK:       div.s16 %rs[[D:[0-9]+]], %rs[[MX]], %rs[[BX]];
// CHECK:       cvt.u32.u8 %r[[AMOUNT:[0-9]+]], %rs[[B]];
// CHECK:       cvt.u16.u8 %rs[[DX:[0-9]+]], %rs[[D]];
// CHECK:       shr.u16 %rs[[S:[0-9]+]], %rs[[DX]], %r[[AMOUNT]];
// CHECK:       st.global.b8 [%rd{{[0-9]+}}], %rs[[S]];

// -----

llvm.func @wide_shift(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %a = llvm.load %p : !llvm.ptr<1> -> i64
  %s = arith.shli %a, %a : i64
  llvm.store %s, %p : i64, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .entry wide_shift(
// CHECK:       cvt.u32.u64 %r[[AMOUNT:[0-9]+]], %rd[[A:[0-9]+]];
// CHECK-NEXT:  shl.b64 %rd{{[0-9]+}}, %rd[[A]], %r[[AMOUNT]];

// -----

llvm.func @halves(%p: !llvm.ptr<1>, %r: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %a = llvm.load %p : !llvm.ptr<1> -> f16
  %q = llvm.fdiv %a, %a : f16
  llvm.store %q, %p : f16, !llvm.ptr<1>
  %b = llvm.load %r : !llvm.ptr<1> -> bf16
  %c = arith.constant 1.5 : bf16
  %s = arith.addf %b, %c : bf16
  llvm.store %s, %r : bf16, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .entry halves(
// CHECK:       cvt.f32.f16 %r[[X:[0-9]+]], %rs[[A:[0-9]+]];
// CHECK-NEXT:  cvt.f32.f16 %r[[Y:[0-9]+]], %rs[[A]];
// CHECK-NEXT:  div.rn.f32 %r[[Q:[0-9]+]], %r[[X]], %r[[Y]];
// CHECK-NEXT:  cvt.rn.f16.f32 %rs{{[0-9]+}}, %r[[Q]];
// 1.5 in bf16 is 0x3FC0 = 16320; PTX has no bf16 immediates.
// CHECK:       mov.b16 %rs[[C:[0-9]+]], 16320;
// CHECK-NEXT:  add.rn.bf16 %rs{{[0-9]+}}, %rs{{[0-9]+}}, %rs[[C]];

// -----

llvm.func @doubles(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %a = llvm.load %p : !llvm.ptr<1> -> f64
  %m = arith.maximumf %a, %a : f64
  llvm.store %m, %p : f64, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .entry doubles(
// CHECK-NOT:   .NaN
// CHECK:       setp.nan.f64
// CHECK:       max.f64
// CHECK:       selp.f64 %rd{{[0-9]+}}, 0d7FF8000000000000,
// CHECK-NOT:   .NaN
// CHECK:       ret;

// -----

llvm.func @bits(%p: !llvm.ptr<1>, %x: i32) attributes {nvvm.kernel} {
  %b = llvm.load %p : !llvm.ptr<1> -> i1
  %z = arith.constant 0 : i32
  %c = arith.cmpi slt, %x, %z : i32
  %y = arith.xori %b, %c : i1
  llvm.store %y, %p : i1, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .entry bits(
// CHECK:       ld.global.u8 %rs[[BYTE:[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT:  and.b16 %rs[[LOW:[0-9]+]], %rs[[BYTE]], 1;
// CHECK-NEXT:  setp.ne.b16 %p[[B:[0-9]+]], %rs[[LOW]], 0;
// CHECK:       xor.pred %p[[Y:[0-9]+]], %p[[B]], %p{{[0-9]+}};
// CHECK-NEXT:  selp.b16 %rs[[OUT:[0-9]+]], 1, 0, %p[[Y]];
// CHECK-NEXT:  st.global.b8 [%rd{{[0-9]+}}], %rs[[OUT]];

// -----

// llvm.addrspacecast goes through the generic space (PTX ISA "cvta"); shared
// pointers are 32-bit here, generic ones 64-bit.
llvm.func @casts(%g: !llvm.ptr, %s: !llvm.ptr<3>) attributes {nvvm.kernel} {
  %v = llvm.mlir.constant(7 : i32) : i32
  %0 = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<3>
  llvm.store %v, %0 : i32, !llvm.ptr<3>
  %1 = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr<7>
  llvm.store %v, %1 : i32, !llvm.ptr<7>
  llvm.return
}
// CHECK-LABEL: .entry casts(
// CHECK:       cvta.to.shared.u64 %rd[[SH:[0-9]+]], %rd{{[0-9]+}};
// CHECK-NEXT:  cvt.u32.u64 %r[[S32:[0-9]+]], %rd[[SH]];
// CHECK-NEXT:  st.shared.b32 [%r[[S32]]], 7;
// CHECK:       cvt.u64.u32 %rd[[W:[0-9]+]], %r{{[0-9]+}};
// CHECK-NEXT:  cvta.shared.u64 %rd[[GEN:[0-9]+]], %rd[[W]];
// CHECK-NEXT:  cvta.to.shared::cluster.u64 %rd[[CL:[0-9]+]], %rd[[GEN]];
// CHECK-NEXT:  cvt.u32.u64 %r[[C32:[0-9]+]], %rd[[CL]];
// CHECK-NEXT:  st.shared::cluster.b32 [%r[[C32]]], 7;

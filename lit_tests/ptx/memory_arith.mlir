// RUN: xdsl-tmem-opt %s -t ptx | filecheck %s

// Loads and stores split into .v4 / .v2 / scalar pieces by alignment (at most 16 B);
// getelementptr scales by the element size, folds constant parts into the address;
// integer, float, compare, select and cast ops map one to one.
llvm.mlir.global internal @buf() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i32>
llvm.func @k(%g: !llvm.ptr<1>, %i: i32, %x: f32, %n: i64) attributes {nvvm.kernel} {
  %s = llvm.mlir.addressof @buf : !llvm.ptr<3>
  %v = llvm.load %g {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xi32>
  %p = llvm.getelementptr %s[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  llvm.store %v, %p {alignment = 8 : i64} : vector<8xi32>, !llvm.ptr<3>
  %c3 = arith.constant 3 : i32
  %i3 = arith.addi %i, %c3 : i32
  %q = llvm.getelementptr %s[%i3] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  %w = llvm.load %q : !llvm.ptr<3> -> i32
  %lt = arith.cmpi ult, %w, %i : i32
  %m = arith.select %lt, %w, %i : i32
  %f = arith.uitofp %m : i32 to f32
  %h = arith.mulf %f, %x : f32
  %e = arith.extui %m : i32 to i64
  %t = arith.muli %e, %n : i64
  %r = arith.trunci %t : i64 to i32
  %o = llvm.getelementptr %g[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  llvm.store %h, %o : f32, !llvm.ptr<1>
  llvm.store %r, %g : i32, !llvm.ptr<1>
  llvm.return
}
// CHECK:      .shared .align 16 .b8 buf[256];
// CHECK:      ld.param.b64 %rd[[G:[0-9]+]], [k_param_0];
// CHECK-NEXT: ld.param.b32 %r[[I:[0-9]+]], [k_param_1];
// CHECK-NEXT: ld.param.b32 %r[[X:[0-9]+]], [k_param_2];
// CHECK-NEXT: ld.param.b64 %rd[[N:[0-9]+]], [k_param_3];
// The shared variable's address is materialised once, at the start.
// CHECK-NEXT: mov.u32 %r[[BUF:[0-9]+]], buf;
// 32 bytes aligned to 16: two 16-byte loads.
// CHECK-NEXT: ld.global.v4.b32 {%r[[V0:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd[[G]]];
// CHECK-NEXT: ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r[[V7:[0-9]+]]}, [%rd[[G]]+16];
// A 32-bit shared address: base + i * 4.
// CHECK-NEXT: mad.lo.s32 %r[[P:[0-9]+]], %r[[I]], 4, %r[[BUF]];
// Aligned to 8: four 8-byte stores.
// CHECK-NEXT: st.shared.v2.b32 [%r[[P]]], {%r[[V0]], %r{{[0-9]+}}};
// CHECK-NEXT: st.shared.v2.b32 [%r[[P]]+8], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK-NEXT: st.shared.v2.b32 [%r[[P]]+16], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK-NEXT: st.shared.v2.b32 [%r[[P]]+24], {%r{{[0-9]+}}, %r[[V7]]};
// buf[i + 3]: the + 3 folds into the offset (12 bytes).
// CHECK-NEXT: mad.lo.s32 %r[[Q:[0-9]+]], %r[[I]], 4, %r[[BUF]];
// CHECK-NEXT: ld.shared.b32 %r[[W:[0-9]+]], [%r[[Q]]+12];
// CHECK-NEXT: setp.lt.u32 %p[[LT:[0-9]+]], %r[[W]], %r[[I]];
// CHECK-NEXT: selp.b32 %r[[M:[0-9]+]], %r[[W]], %r[[I]], %p[[LT]];
// CHECK-NEXT: cvt.rn.f32.u32 %r[[F:[0-9]+]], %r[[M]];
// CHECK-NEXT: mul.rn.f32 %r[[H:[0-9]+]], %r[[F]], %r[[X]];
// CHECK-NEXT: cvt.u64.u32 %rd[[E:[0-9]+]], %r[[M]];
// CHECK-NEXT: mul.lo.s64 %rd[[T:[0-9]+]], %rd[[E]], %rd[[N]];
// CHECK-NEXT: cvt.u32.u64 %r[[R:[0-9]+]], %rd[[T]];
// A 64-bit global address with an i32 index: mul.wide.s32 (GEP indices are signed).
// CHECK-NEXT: mul.wide.s32 %rd[[OFF:[0-9]+]], %r[[I]], 4;
// CHECK-NEXT: add.s64 %rd[[O:[0-9]+]], %rd[[G]], %rd[[OFF]];
// CHECK-NEXT: st.global.b32 [%rd[[O]]], %r[[H]];
// CHECK-NEXT: st.global.b32 [%rd[[G]]], %r[[R]];
// CHECK-NEXT: ret;

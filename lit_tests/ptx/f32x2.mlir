// RUN: xdsl-tmem-opt %s -t ptx | filecheck %s
// ptxas assembles it for every target (all of them have .f32x2, PTX ISA 8.6, sm_100+):
// REQUIRES: ptxas
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_100a}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_100f}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_103a}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_110a}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// PTXAS: ptxas: k (sm_1{{[01]}}{{[0-9]}}{{[af]}}): {{[0-9]+}} registers

// vector<2xf32> (and each lane pair of an even vector<Nxf32>) add/sub/mul select the
// packed .f32x2 instruction, as llc-22 does: the lanes packed low-first into a .b64
// (`mov.b64 %rd, {lo, hi}`), one instruction, unpacked. A result feeding another packed
// op is read from its .b64 directly. An odd lane count keeps its last lane scalar;
// division (no .f32x2 form) and f16 stay scalar.
llvm.func @k(%g: !llvm.ptr<1>, %h: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %a = llvm.load %g {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
  %b = llvm.load %h {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
  %m = arith.mulf %a, %b : vector<2xf32>
  %s = arith.addf %m, %a : vector<2xf32>
  %d = llvm.fsub %s, %b : vector<2xf32>
  %q = arith.divf %d, %b : vector<2xf32>
  %c = arith.constant dense<[2.0, 0.5]> : vector<2xf32>
  %z = arith.mulf %q, %c : vector<2xf32>
  llvm.store %z, %g {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
  %u = llvm.load %h {alignment = 4 : i64} : !llvm.ptr<1> -> vector<3xf32>
  %w = arith.mulf %u, %u : vector<3xf32>
  llvm.store %w, %h {alignment = 4 : i64} : vector<3xf32>, !llvm.ptr<1>
  llvm.return
}
// CHECK:      ld.global.v2.b32 {%r[[A0:[0-9]+]], %r[[A1:[0-9]+]]}, [%rd{{[0-9]+}}];
// CHECK-NEXT: ld.global.v2.b32 {%r[[B0:[0-9]+]], %r[[B1:[0-9]+]]}, [%rd{{[0-9]+}}];
// CHECK-NEXT: mov.b64 %rd[[A:[0-9]+]], {%r[[A0]], %r[[A1]]};
// CHECK-NEXT: mov.b64 %rd[[B:[0-9]+]], {%r[[B0]], %r[[B1]]};
// CHECK-NEXT: mul.rn.f32x2 %rd[[M:[0-9]+]], %rd[[A]], %rd[[B]];
// CHECK-NEXT: mov.b64 %rd[[A2:[0-9]+]], {%r[[A0]], %r[[A1]]};
// CHECK-NEXT: add.rn.f32x2 %rd[[S:[0-9]+]], %rd[[M]], %rd[[A2]];
// CHECK-NEXT: mov.b64 %rd[[B2:[0-9]+]], {%r[[B0]], %r[[B1]]};
// CHECK-NEXT: sub.rn.f32x2 %rd[[D:[0-9]+]], %rd[[S]], %rd[[B2]];
// CHECK-NEXT: mov.b64 {%r[[D0:[0-9]+]], %r[[D1:[0-9]+]]}, %rd[[D]];
// CHECK-NEXT: div.rn.f32 %r[[Q0:[0-9]+]], %r[[D0]], %r[[B0]];
// CHECK-NEXT: div.rn.f32 %r[[Q1:[0-9]+]], %r[[D1]], %r[[B1]];
// A constant operand: its lanes moved into registers, then packed.
// CHECK-NEXT: mov.b64 %rd[[Q:[0-9]+]], {%r[[Q0]], %r[[Q1]]};
// CHECK-NEXT: mov.b32 %r[[C0:[0-9]+]], 0f40000000;
// CHECK-NEXT: mov.b32 %r[[C1:[0-9]+]], 0f3F000000;
// CHECK-NEXT: mov.b64 %rd[[C:[0-9]+]], {%r[[C0]], %r[[C1]]};
// CHECK-NEXT: mul.rn.f32x2 %rd[[Z:[0-9]+]], %rd[[Q]], %rd[[C]];
// Lanes stored as they came out of one .f32x2 op: the .b64 is stored (no unpack).
// CHECK-NEXT: st.global.b64 [%rd{{[0-9]+}}], %rd[[Z]];
// vector<3xf32>: one pair (the same pair twice is packed once), the third lane scalar.
// CHECK-NEXT: ld.global.b32 %r[[U0:[0-9]+]], [%rd{{[0-9]+}}];
// CHECK-NEXT: ld.global.b32 %r[[U1:[0-9]+]], [%rd{{[0-9]+}}+4];
// CHECK-NEXT: ld.global.b32 %r[[U2:[0-9]+]], [%rd{{[0-9]+}}+8];
// CHECK-NEXT: mov.b64 %rd[[U:[0-9]+]], {%r[[U0]], %r[[U1]]};
// CHECK-NEXT: mul.rn.f32x2 %rd[[W:[0-9]+]], %rd[[U]], %rd[[U]];
// CHECK-NEXT: mov.b64 {%r{{[0-9]+}}, %r{{[0-9]+}}}, %rd[[W]];
// CHECK-NEXT: mul.rn.f32 %r{{[0-9]+}}, %r[[U2]], %r[[U2]];
// CHECK-NOT:  f32x2

// An accumulator (acc = acc + x, x from .f32x2 ops) is carried around the loop as its
// .b64 lane pairs: packed once before the loop, no unpack/re-pack per iteration, and
// stored after it as .v2.b64 (llc-22 carries and stores it the same way). An odd last
// lane stays a 32-bit register.
llvm.func @acc(%g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %x = llvm.load %g {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (vector<4xf32>) : i32 {
    %p = arith.mulf %x, %x : vector<4xf32>
    %next = arith.addf %acc, %p : vector<4xf32>
    scf.yield %next : vector<4xf32>
  }
  llvm.store %sum, %g {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
  %odd0 = arith.constant dense<0.0> : vector<3xf32>
  %y = llvm.load %g {alignment = 4 : i64} : !llvm.ptr<1> -> vector<3xf32>
  %odd = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %odd0) -> (vector<3xf32>) : i32 {
    %next = arith.addf %acc, %y : vector<3xf32>
    scf.yield %next : vector<3xf32>
  }
  llvm.store %odd, %g {alignment = 4 : i64} : vector<3xf32>, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .entry acc(
// CHECK:      mov.b64 %rd[[I0:[0-9]+]], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK:      mov.b64 %rd[[I1:[0-9]+]], {%r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK-NEXT: mov.b64 %rd[[P0:[0-9]+]], %rd[[I0]];
// CHECK-NEXT: mov.b64 %rd[[P1:[0-9]+]], %rd[[I1]];
// CHECK:      [[BODY:\$L[0-9]+]]:
// CHECK-NEXT: .pragma "nounroll";
// CHECK-NOT:  mov.b64 {
// CHECK:      add.rn.f32x2 %rd[[N0:[0-9]+]], %rd[[P0]], %rd{{[0-9]+}};
// CHECK-NEXT: add.rn.f32x2 %rd[[N1:[0-9]+]], %rd[[P1]], %rd{{[0-9]+}};
// CHECK-NEXT: mov.b64 %rd[[P0]], %rd[[N0]];
// CHECK-NEXT: mov.b64 %rd[[P1]], %rd[[N1]];
// CHECK-NEXT: add.s32
// CHECK-NEXT: setp.lt.s32
// CHECK-NEXT: @%p{{[0-9]+}} bra.uni [[BODY]];
// CHECK-NEXT: $L
// CHECK-NEXT: st.global.v2.b64 [%rd{{[0-9]+}}], {%rd[[P0]], %rd[[P1]]};
// The odd vector: one carried pair and one 32-bit lane.
// CHECK:      .pragma "nounroll";
// CHECK-NOT:  mov.b64 {
// CHECK:      add.rn.f32x2 %rd[[M0:[0-9]+]], %rd[[Q0:[0-9]+]], %rd{{[0-9]+}};
// CHECK-NEXT: add.rn.f32 %r[[L:[0-9]+]], %r[[K:[0-9]+]], %r{{[0-9]+}};
// CHECK-NEXT: mov.b64 %rd[[Q0]], %rd[[M0]];
// CHECK-NEXT: mov.b32 %r[[K]], %r[[L]];
// CHECK:      mov.b64 {%r[[H0:[0-9]+]], %r[[H1:[0-9]+]]}, %rd[[Q0]];
// CHECK-NEXT: st.global.b32 [%rd{{[0-9]+}}], %r[[H0]];
// CHECK-NEXT: st.global.b32 [%rd{{[0-9]+}}+4], %r[[H1]];
// CHECK-NEXT: st.global.b32 [%rd{{[0-9]+}}+8], %r[[K]];

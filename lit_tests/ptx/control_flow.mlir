// RUN: xdsl-tmem-opt %s -t ptx --split-input-file | filecheck %s

// scf.for becomes a rotated loop (one conditional branch per iteration) whose header
// says `.pragma "nounroll"` (PTX ISA "Performance-Tuning Directives"; llc-22 puts it
// right after the header's label); loop-carried values are registers written at the
// back edge. The back edge is bra.uni when the bounds are warp-uniform: here they come
// from a parameter and the warp index (tid.x >> 5 in a 1-D block); a lane-dependent
// bound gives a plain bra. The forward branch over an empty loop is always a plain bra.
llvm.func @loops(%n: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c5 = arith.constant 5 : i32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %warp = arith.shrui %tid, %c5 : i32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %warp) -> (i32) : i32 {
    %next = arith.addi %acc, %i : i32
    scf.yield %next : i32
  }
  %lanes = scf.for %i = %c0 to %tid step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %next = arith.addi %acc, %c1 : i32
    scf.yield %next : i32
  }
  %total = arith.addi %sum, %lanes : i32
  llvm.store %total, %out : i32, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .visible .entry loops(
// CHECK:      mov.u32 %r[[TID:[0-9]+]], %tid.x;
// CHECK-NEXT: shr.u32 %r[[WARP:[0-9]+]], %r[[TID]], 5;
// CHECK-NEXT: mov.b32 %r[[I:[0-9]+]], 0;
// CHECK-NEXT: mov.b32 %r[[ACC:[0-9]+]], %r[[WARP]];
// CHECK-NEXT: setp.ge.s32 %p[[SKIP:[0-9]+]], %r[[I]], %r[[N:[0-9]+]];
// CHECK-NEXT: @%p[[SKIP]] bra [[DONE:\$L[0-9]+]];
// CHECK-NEXT: [[BODY:\$L[0-9]+]]:
// CHECK-NEXT: .pragma "nounroll";
// CHECK-NEXT: add.s32 %r[[NEXT:[0-9]+]], %r[[ACC]], %r[[I]];
// CHECK-NEXT: mov.b32 %r[[ACC]], %r[[NEXT]];
// CHECK-NEXT: add.s32 %r[[I]], %r[[I]], 1;
// CHECK-NEXT: setp.lt.s32 %p[[AGAIN:[0-9]+]], %r[[I]], %r[[N]];
// CHECK-NEXT: @%p[[AGAIN]] bra.uni [[BODY]];
// CHECK-NEXT: [[DONE]]:
// The second loop's bound is the lane's tid: divergent, so plain bra.
// CHECK:      @%p{{[0-9]+}} bra [[DONE2:\$L[0-9]+]];
// CHECK:      @%p{{[0-9]+}} bra {{\$L[0-9]+}};
// CHECK-NEXT: [[DONE2]]:

// -----

// scf.while: the header (the before region) says nounroll too; the exit is a forward
// branch (plain bra), the back edge unconditional.
llvm.func @while_loop(%n: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %go = arith.cmpi slt, %i, %n : i32
    scf.condition(%go) %i : i32
  } do {
  ^bb0(%j: i32):
    %k = arith.addi %j, %c1 : i32
    scf.yield %k : i32
  }
  llvm.store %r, %out : i32, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .visible .entry while_loop(
// CHECK:      [[HEAD:\$L[0-9]+]]:
// CHECK-NEXT: .pragma "nounroll";
// CHECK-NEXT: setp.lt.s32 %p[[GO:[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT: mov.b32 %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK-NEXT: @!%p[[GO]] bra [[DONE:\$L[0-9]+]];
// CHECK:      bra.uni [[HEAD]];
// CHECK-NEXT: [[DONE]]:

// -----

// A small scf.if without results is predicated (no branch); one with results or a
// larger body branches (a plain bra, uniform condition or not), and an if/else joins
// at the end.
llvm.func @ifs(%flag: i1, %slot: !llvm.ptr<3>, %x: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %c512 = arith.constant 512 : i32
  scf.if %flag {
    nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
    nvvm.tcgen05.relinquish_alloc_permit
  }
  %c1 = arith.constant 1 : i32
  %y = scf.if %flag -> (i32) {
    %a = arith.addi %x, %c1 : i32
    scf.yield %a : i32
  } else {
    %b = arith.subi %x, %c1 : i32
    scf.yield %b : i32
  }
  llvm.store %y, %out : i32, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .visible .entry ifs(
// CHECK:      @%p[[F:[0-9]+]] tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r{{[0-9]+}}], 512;
// CHECK-NEXT: @%p[[F]] tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// CHECK-NEXT: @!%p[[F]] bra [[ELSE:\$L[0-9]+]];
// CHECK-NEXT: add.s32 %r[[A:[0-9]+]], %r[[X:[0-9]+]], 1;
// CHECK-NEXT: mov.b32 %r[[Y:[0-9]+]], %r[[A]];
// CHECK-NEXT: bra.uni [[END:\$L[0-9]+]];
// CHECK-NEXT: [[ELSE]]:
// CHECK-NEXT: sub.s32 %r[[B:[0-9]+]], %r[[X]], 1;
// CHECK-NEXT: mov.b32 %r[[Y]], %r[[B]];
// CHECK-NEXT: [[END]]:
// CHECK-NEXT: st.global.b32 [%rd{{[0-9]+}}], %r[[Y]];

// -----

// A device function becomes a .func with llc-22's parameter names and .param types
// (i1 as .b32); its parameters may differ per lane, so a branch on one is a plain bra.
// A call is llc-22's sequence in its own { } scope, with call.uni (the call is unguarded).
llvm.func internal @twice_if(%x: i32, %flag: i1) -> i32 {
  %r = scf.if %flag -> (i32) {
    %y = arith.addi %x, %x : i32
    scf.yield %y : i32
  } else {
    scf.yield %x : i32
  }
  llvm.return %r : i32
}
llvm.func @caller(%n: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %t = nvvm.read.ptx.sreg.tid.x : i32
  %f = arith.cmpi slt, %t, %n : i32
  %r = llvm.call @twice_if(%n, %f) : (i32, i1) -> i32
  llvm.store %r, %out : i32, !llvm.ptr<1>
  llvm.return
}
// CHECK-LABEL: .func (.param .b32 func_retval0) twice_if(
// CHECK-NEXT:  .param .b32 twice_if_param_0,
// CHECK-NEXT:  .param .b32 twice_if_param_1
// CHECK-NEXT:  )
// CHECK:       ld.param.b32 %r[[X:[0-9]+]], [twice_if_param_0];
// CHECK-NEXT:  ld.param.b32 %r[[F:[0-9]+]], [twice_if_param_1];
// CHECK-NEXT:  setp.ne.b32 %p[[P:[0-9]+]], %r[[F]], 0;
// CHECK-NEXT:  @!%p[[P]] bra $L
// CHECK:       st.param.b32 [func_retval0], %r
// CHECK-NEXT:  ret;
// CHECK-LABEL: .visible .entry caller(
// CHECK:       .param .b32 param0;
// CHECK-NEXT:  .param .b32 param1;
// CHECK-NEXT:  .param .b32 retval0;
// CHECK-NEXT:  st.param.b32 [param0], %r
// CHECK-NEXT:  selp.b32 %r[[BIT:[0-9]+]], 1, 0, %p
// CHECK-NEXT:  st.param.b32 [param1], %r[[BIT]];
// CHECK-NEXT:  call.uni (retval0), twice_if, (param0, param1);
// CHECK-NEXT:  ld.param.b32 %r[[R:[0-9]+]], [retval0];
// CHECK-NEXT:  }
// CHECK-NEXT:  st.global.b32 [%rd{{[0-9]+}}], %r[[R]];

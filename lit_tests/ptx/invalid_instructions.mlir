// RUN: xdsl-tmem-opt %s -t ptx --split-input-file --verify-diagnostics | filecheck %s

// A ptx-level program is verified against the PTX ISA rules before printing: the
// diagnostic is located at the instruction and names the op, the bad value and what is
// allowed (ptxas: "Mismatch between instruction type and comparison qualifier").
"ptx.module"() <{version = "8.6", target = "sm_100a"}> ({
  "ptx.function"() <{sym_name = "k", kind = "entry", params = []}> ({
    %a = "ptx.reg"() : () -> !ptx.reg<b32, 1>
    %p = "ptx.setp"(%a, %a) <{type = #ptx<type b32>, cmp = #ptx<cmp lt>}> : (!ptx.reg<b32, 1>, !ptx.reg<b32, 1>) -> !ptx.reg<pred, 1>
  }) : () -> ()
}) : () -> ()
// CHECK: invalid_instructions.mlir:[[# @LINE - 3]]:5: error: ptx.setp: comparison .lt on .b32 is not allowed; .b32 compares with .eq/.ne (PTX ISA 9.0, Comparison and Selection Instructions: setp)

// -----

// ptxas: "Rounding modifier required for instruction 'cvt'".
"ptx.module"() <{version = "8.6", target = "sm_100a"}> ({
  "ptx.function"() <{sym_name = "k", kind = "entry", params = []}> ({
    %a = "ptx.reg"() : () -> !ptx.reg<b32, 1>
    %f = "ptx.cvt"(%a) <{dtype = #ptx<type f32>, stype = #ptx<type s32>}> : (!ptx.reg<b32, 1>) -> !ptx.reg<b32, 2>
  }) : () -> ()
}) : () -> ()
// CHECK: invalid_instructions.mlir:[[# @LINE - 3]]:5: error: ptx.cvt: cvt.f32.s32 without rounding is not allowed; it needs one of .rn/.rz/.rm/.rp

// -----

// A valid program prints as PTX.
"ptx.module"() <{version = "8.6", target = "sm_100a"}> ({
  "ptx.function"() <{sym_name = "k", kind = "entry", params = []}> ({
    %a = "ptx.reg"() : () -> !ptx.reg<b32, 1>
    %f = "ptx.cvt"(%a) <{dtype = #ptx<type f32>, stype = #ptx<type s32>, rounding = #ptx<rounding rn>}> : (!ptx.reg<b32, 1>) -> !ptx.reg<b32, 2>
    %p = "ptx.setp"(%a, %f) <{type = #ptx<type u32>, cmp = #ptx<cmp lo>}> : (!ptx.reg<b32, 1>, !ptx.reg<b32, 2>) -> !ptx.reg<pred, 1>
    "ptx.ret"() : () -> ()
  }) : () -> ()
}) : () -> ()
// CHECK: cvt.rn.f32.s32 %r2, %r1;
// CHECK-NEXT: setp.lo.u32 %p1, %r1, %r2;
// CHECK-NEXT: ret;

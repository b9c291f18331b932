// RUN: xdsl-tmem-opt %s -t ptx | filecheck %s
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_103a}' | filecheck %s --check-prefix=SM103
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_110a}' | filecheck %s --check-prefix=SM110
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_100f}' | filecheck %s --check-prefix=SM100F

// The module header per target (docs/ptx-nvvm.md §1.1), shared globals largest alignment
// first (§4: small variables before a .align 1024 array cost ~1 KiB of padding),
// kernel parameters and the launch-bound directives.
module {
  llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32
  llvm.mlir.global internal @bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
  llvm.mlir.global internal @tile() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.func @k(%out: !llvm.ptr<1>, %n: i32, %flag: i1, %wide: i64, %s: !llvm.ptr<3>, %t: !llvm.ptr<6>)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>, nvvm.minctasm = 1 : i32, nvvm.cluster_dim = array<i32: 2, 1, 1>} {
    scf.if %flag {
      llvm.store %n, %s : i32, !llvm.ptr<3>
    }
    llvm.return
  }
}
// CHECK:      .version 8.6
// CHECK-NEXT: .target sm_100a
// CHECK-NEXT: .address_size 64
// SM103:      .version 8.8
// SM103-NEXT: .target sm_103a
// SM110:      .version 9.0
// SM110-NEXT: .target sm_110a
// SM100F:     .version 8.8
// SM100F-NEXT: .target sm_100f
// CHECK:      .shared .align 1024 .b8 tile[8192];
// CHECK-NEXT: .shared .align 8 .b8 bars[32];
// CHECK-NEXT: .shared .align 4 .b32 slot;
// CHECK:      .visible .entry k(
// CHECK-NEXT:     .param .u64 .ptr .global .align 1 k_param_0,
// CHECK-NEXT:     .param .u32 k_param_1,
// CHECK-NEXT:     .param .u8 k_param_2,
// CHECK-NEXT:     .param .u64 k_param_3,
// CHECK-NEXT:     .param .u64 .ptr .shared .align 1 k_param_4,
// CHECK-NEXT:     .param .u32 .ptr .align 1 k_param_5
// CHECK-NEXT: )
// CHECK-NEXT: .maxntid 160, 1, 1
// CHECK-NEXT: .minnctapersm 1
// CHECK-NEXT: .explicitcluster
// CHECK-NEXT: .reqnctapercluster 2, 1, 1
// CHECK-NEXT: {
// A shared pointer parameter is a 64-bit value narrowed to a 32-bit shared address;
// an i1 parameter is a byte tested against zero.
// CHECK:      ld.param.b64 %rd{{[0-9]+}}, [k_param_0];
// CHECK:      ld.param.b8 %rs[[B:[0-9]+]], [k_param_2];
// CHECK-NEXT: and.b16 %rs[[L:[0-9]+]], %rs[[B]], 1;
// CHECK-NEXT: setp.ne.b16 %p{{[0-9]+}}, %rs[[L]], 0;
// CHECK:      ld.param.b64 %rd[[S:[0-9]+]], [k_param_4];
// CHECK-NEXT: cvt.u32.u64 %r[[SH:[0-9]+]], %rd[[S]];
// CHECK-NEXT: ld.param.b32 %r{{[0-9]+}}, [k_param_5];
// CHECK-NEXT: @%p{{[0-9]+}} st.shared.b32 [%r[[SH]]], %r{{[0-9]+}};
// CHECK-NEXT: ret;
// CHECK-NEXT: }

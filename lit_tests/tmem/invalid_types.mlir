// RUN: xdsl-tmem-opt %s --parsing-diagnostics --split-input-file | filecheck %s
// Bad type parameters are reported while parsing, at the type.

"test.op"() : () -> !tmem.allocation<3, 512>
// CHECK: invalid_types.mlir:4:37: error: !tmem.allocation: cta_group must be 1 or 2, got 3

// -----
"test.op"() : () -> !tmem.allocation<1, 48>
// CHECK: error: !tmem.allocation: max_cols must be a power of two in [32, 512], got 48

// -----
"test.op"() : () -> !tmem.allocation<2, 1024>
// CHECK: error: !tmem.allocation: max_cols must be a power of two in [32, 512], got 1024

// -----
"test.op"() : () -> !tmem.allocation<1, 16>
// CHECK: error: !tmem.allocation: max_cols must be a power of two in [32, 512], got 16

// -----
"test.op"() : () -> !tmem.tmem_stage<0, 256, 1>
// CHECK: error: !tmem.tmem_stage: num_stages must be >= 1, got 0

// -----
"test.op"() : () -> !tmem.tmem_stage<2, 0, 1>
// CHECK: error: !tmem.tmem_stage: stage stride must be > 0 columns, got 0

// -----
"test.op"() : () -> !tmem.tmem_stage<3, 256, 1>
// CHECK: error: !tmem.tmem_stage: num_stages * stride = 3 * 256 = 768 exceeds the 512 allocated TMEM columns

// -----
"test.op"() : () -> !tmem.tmem_stage<2, 256>
// CHECK: error: !tmem.tmem_stage expects <num_stages, stride, cta_group>, got 2 parameter(s)

// -----
"test.op"() : () -> !tmem.output_ring<2, 256, 0>
// CHECK: error: !tmem.output_ring: cta_group must be 1 or 2, got 0

// -----
"test.op"() : () -> !tmem.pipeline<0>
// CHECK: error: !tmem.pipeline: num_stages must be >= 1, got 0

// -----
"test.op"() : () -> !tmem.dealloc_barrier<4>
// CHECK: error: !tmem.dealloc_barrier: cta_group must be 1 or 2, got 4

// -----
"test.op"() : () -> !tmem.mma_warp_context<2, 256, 1, 16, 128>
// CHECK: error: !tmem.mma_warp_context: mma_threads must be a positive multiple of 32 (whole warps), got 16

// -----
"test.op"() : () -> !tmem.epilogue_warp_context<2, 256, 1, 32, 100>
// CHECK: error: !tmem.epilogue_warp_context: epilogue_threads must be a positive multiple of 32 (whole warps), got 100

// -----
"test.op"() : () -> !tmem.mma_warp_context<2, 256, 1, 32, 1024>
// CHECK: error: !tmem.mma_warp_context: mma_threads + epilogue_threads = 1056 exceeds 1024 threads per CTA

// -----
"test.op"() : () -> !tmem.mma_warp_context<2, 256, 1, 32, 128, 256>
// CHECK: error: !tmem.mma_warp_context: num_stages * stride = 2 * 256 = 512 exceeds the 256 allocated TMEM columns

// -----
"test.op"() : () -> !tmem.mma_warp_context<1, 128, 1, 32, 128, 96>
// CHECK: error: !tmem.mma_warp_context: max_cols must be a power of two in [32, 512], got 96

// -----
"test.op"() : () -> !tmem.tensor<96x256xf32, 1>
// CHECK: error: !tmem.tensor: M must be 64 or 128 for cta_group 1, got 96

// -----
"test.op"() : () -> !tmem.tensor<64x256xf32, 2>
// CHECK: error: !tmem.tensor: M must be 128 or 256 for cta_group 2, got 64

// -----
"test.op"() : () -> !tmem.tensor<128x256xf16, 1>
// CHECK: error: !tmem.tensor: element type must be f32 or i32 (32-bit accumulator cells), got f16

// -----
"test.op"() : () -> !tmem.tensor<128x1024xf32, 1>
// CHECK: error: !tmem.tensor: N must be in [1, 512] columns, got 1024

// -----
"test.op"() : () -> !tmem.tensor<128xf32, 1>
// CHECK: error: !tmem.tensor expects an MxN shape, got 1 dimensions

// Every shipped example runs on the machine model, as written (tmem level) and after
// lowering to NVVM, under both schedulers. (The numbers are checked against numpy in
// tests/test_interpreter.py; this checks the driver's report.)
//
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg1.mlir --kernel matmul_cg1 --block 160 --arg out=zeros:f32:3x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=3 | filecheck %s --check-prefix=CG1
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg1.mlir -p lower-tmem --kernel matmul_cg1 --block 160 --arg out=zeros:f32:3x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=3 --schedule random --seed 3 | filecheck %s --check-prefix=CG1
// CG1: ran @matmul_cg1: grid (1, 1, 1), cluster (1, 1, 1), block (160, 1, 1); {{[0-9]+}} warp-instructions, {{[0-9]+}} sync points, 6 MMAs
// CG1-NEXT: out: float32 [3, 128, 256], sum
//
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg2.mlir --kernel matmul_cg2 --block 160 --arg out=zeros:f32:2x256x256 --arg a=rand:f16:8192:1 --arg b=rand:f16:8192:2 --arg ntiles=2 | filecheck %s --check-prefix=CG2
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg2.mlir -p lower-tmem --kernel matmul_cg2 --block 160 --arg out=zeros:f32:2x256x256 --arg a=rand:f16:8192:1 --arg b=rand:f16:8192:2 --arg ntiles=2 --schedule random --seed 5 | filecheck %s --check-prefix=CG2
// CG2: ran @matmul_cg2: grid (2, 1, 1), cluster (2, 1, 1), block (160, 1, 1); {{[0-9]+}} warp-instructions, {{[0-9]+}} sync points, 4 MMAs
//
// RUN: xdsl-tmem-run %S/../../examples/blockwise_fp8_cg1.mlir --kernel blockwise_fp8_cg1 --block 192 --arg out=zeros:f32:2x128x64 --arg a=rand:u8:24576:1 --arg b=rand:u8:12288:2 --arg scales=rand:f32:6:3 --arg ntiles=2 --arg nk=3 | filecheck %s --check-prefix=FP8
// FP8: ran @blockwise_fp8_cg1: grid (1, 1, 1), cluster (1, 1, 1), block (192, 1, 1); {{[0-9]+}} warp-instructions, {{[0-9]+}} sync points, 6 MMAs

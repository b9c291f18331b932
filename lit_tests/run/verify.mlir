// The verification workflow's reports: exhaustive and random exploration, translation
// validation, and a counterexample located in the source. (What each verdict means is
// tested against independent expectations in tests/test_explore.py, test_validate.py.)
//
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg1.mlir --kernel matmul_cg1 --block 160 --arg out=zeros:f32:4x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=4 --explore exhaustive | filecheck %s --check-prefix=EXH
// EXH: explore exhaustive: SAFE: {{[0-9]+}} states, {{[0-9]+}} transitions, {{[0-9.]+}} s ({{[0-9]+}} states/s)
//
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg1.mlir --kernel matmul_cg1 --block 160 --arg out=zeros:f32:2x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=2 --explore random:5 --seed 10 | filecheck %s --check-prefix=RND
// RND: explore random: SAFE: 5 schedules (seeds 10-14), {{[0-9.]+}} s
//
// RUN: xdsl-tmem-run %S/../../examples/matmul_cg1.mlir --kernel matmul_cg1 --block 160 --arg out=zeros:f32:2x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=2 -p tmem-expand-regions,convert-tmem-to-nvvm --validate-lowering | filecheck %s --check-prefix=KEEP
// KEEP:      validate-lowering: input: ran to completion
// KEEP-NEXT: validate-lowering: after tmem-expand-regions: ran to completion, outputs and verdict unchanged
// KEEP-NEXT: validate-lowering: after convert-tmem-to-nvvm: ran to completion, outputs and verdict unchanged
// KEEP-NEXT: validate-lowering: 2 pass(es) preserve the kernel's behaviour
//
// RUN: not xdsl-tmem-run %S/../../examples/matmul_cg1.mlir --kernel matmul_cg1 --block 160 --arg out=zeros:f32:2x128x256 --arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=2 -p 'lower-tmem{fence-policy=mojo}' --validate-lowering 2>&1 | filecheck %s --check-prefix=BLAME
// BLAME: validate-lowering: after lower-tmem{fence_policy="mojo"}: hazard tmem-read-before-commit
// BLAME: error: translation validation: pass 'lower-tmem{fence_policy="mojo"}' changes the kernel: the verdict changes from 'ran to completion' to 'hazard tmem-read-before-commit'
// BLAME: note: after it:
// BLAME: matmul_cg1.mlir:{{[0-9]+}}:{{[0-9]+}}: error: hazard tmem-read-before-commit: nvvm.tcgen05.ld by warp {{[0-3]}}
//
// A deadlock only one allocation order reaches: exhaustive exploration finds it and
// lists the schedule, each step located at the op the agent starts from.
// RUN: not xdsl-tmem-run %S/../../tests/schedules/alloc_order_deadlock.mlir --kernel k --block 64 --explore exhaustive 2>&1 | filecheck %s --check-prefix=ORDER
// ORDER: explore exhaustive: UNSAFE: {{[0-9]+}} states
// ORDER: error: deadlock: 2 warp(s) blocked and nothing in flight can release them
// ORDER: alloc_order_deadlock.mlir:{{[0-9]+}}:{{[0-9]+}}: note: warp 0 blocked at 'tmem.alloc'
// ORDER: note: a shortest counterexample, 6 steps; each runs an agent from the synchronising op named up to its next one:
// ORDER: alloc_order_deadlock.mlir:{{[0-9]+}}:{{[0-9]+}}: note: step 4: warp 1 runs 'tmem.alloc'
// ORDER: alloc_order_deadlock.mlir:{{[0-9]+}}:{{[0-9]+}}: note: step 6: warp 0 runs 'tmem.alloc'
